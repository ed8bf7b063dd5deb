"""The skill-name rule, once: the specification's pattern and length, for the validator, the
install argument grammar and the registry."""

from __future__ import annotations

import re

# Lowercase letters and digits in runs joined by single hyphens (the specification's rule).
NAME_PATTERN = r"[a-z0-9]+(?:-[a-z0-9]+)*"
NAME_RE = re.compile(rf"^{NAME_PATTERN}$")
MAX_NAME = 64  # the specification's limit; names are also folder names and URL parts
# The findings of a name that breaks the rule: an installer may still place such a skill under
# its normalised name (about 4% of real skills have names like "Ahrefs Automation").
NAME_FINDINGS = frozenset({"name.pattern", "name.too_long"})


def is_valid_name(name: str) -> bool:
    return len(name) <= MAX_NAME and bool(NAME_RE.match(name))


def normalise_name(name: str) -> str:
    """The nearest valid name ("Ahrefs Automation" -> "ahrefs-automation"); "" when none."""
    runs = re.findall(r"[a-z0-9]+", name.lower())
    return "-".join(runs)[:MAX_NAME].strip("-")
