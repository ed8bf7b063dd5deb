"""Files SKILL.md links to that the skill does not contain.

An agent told to read ``references/api.md`` that is not there wastes a turn, or worse, guesses.
Markdown links and images whose target is a relative path inside the skill are checked against
the skill's files; web links, anchors, absolute paths, templated paths and links inside code
are not.
"""

from __future__ import annotations

import re
from posixpath import normpath
from urllib.parse import unquote

from skillctl.format.findings import Finding, warning

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
MAX_REPORTED = 20  # a skill with hundreds of broken links needs one look, not hundreds of lines


def missing_links(body: str, files: list[str], *, location: str = "SKILL.md") -> list[Finding]:
    """A ``link.missing`` warning per relative link whose target is not among ``files``."""
    present = set(files)
    folders = {f.rsplit("/", i)[0] for f in files for i in range(1, f.count("/") + 1)}
    text = _INLINE_CODE.sub("", _FENCE.sub("", body))
    findings: list[Finding] = []
    seen: set[str] = set()
    for match in _LINK.finditer(text):
        target = _local_target(match.group(1))
        if target is None or target in seen or target in present or target.rstrip("/") in folders:
            continue
        seen.add(target)
        findings.append(warning("link.missing", f"SKILL.md links to {target}, which is not in the skill", location))
        if len(findings) == MAX_REPORTED:
            break
    return findings


def _local_target(raw: str) -> str | None:
    """The skill-relative path a link points at, or None when it is not a local file."""
    if _SCHEME.match(raw) or raw.startswith(("#", "/", "~", "//")) or any(c in raw for c in "{}$<>*"):
        return None
    path = unquote(raw.split("#", 1)[0].split("?", 1)[0])
    if not path:
        return None
    path = normpath(path)
    if path.startswith("..") or path == ".":
        return None  # outside the skill (a repository's README, say): not ours to judge
    return path
