"""Published version strings: strict SemVer 2.0 within sane bounds, one rule for the registry
and the client (``skillctl.format`` is the part of the client the server imports)."""

from __future__ import annotations

import re

# The registry's column; real versions are under 30 characters. A 100,006-character
# prerelease was once stored (and broke PostgreSQL's index): checked before any regex runs.
MAX_VERSION_CHARS = 128
# A numeric identifier with more digits is no version anyone means; 5,000 digits made Python's
# int() refuse the string (its 4,300-digit guard) deep inside version ordering.
MAX_NUMBER_DIGITS = 15

# Strict SemVer 2.0: no leading "v", no leading zeros in numbers.
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)
_NUMBERS = re.compile(r"\d+")


def semver_problem(text: str) -> str | None:
    """Why ``text`` is not a version we publish or install, or None when it is one."""
    if len(text) > MAX_VERSION_CHARS:
        return f"a version is at most {MAX_VERSION_CHARS} characters (this one has {len(text)})"
    if any(len(run) > MAX_NUMBER_DIGITS for run in _NUMBERS.findall(text)):
        return f"a version number has at most {MAX_NUMBER_DIGITS} digits"
    if not SEMVER.match(text):
        return f"{text!r} is not a semantic version (MAJOR.MINOR.PATCH[-PRERELEASE])"
    return None
