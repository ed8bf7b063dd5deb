"""What changed between two versions of a skill: files added, removed and changed (a unified
diff of each text file) and the SKILL.md frontmatter fields that moved, with the ones a careful
user must read before updating called out (permissions, network, MCP command, requirements).

``version_diff`` is pure: two file maps (path -> bytes, ``registry.artifacts.version_files``)
and two parsed manifests in, a ``VersionDiff`` out. ``compare_visible`` is the one read in front
of it: both versions as the viewer may see them (a version the scan found malicious is a 404 to
outsiders), so the catalog's compare page and the API's ``/skills/<name>/diff/<from>/<to>``
(which ``skillctl outdated --diff`` prints) show the same thing to the same people.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field
from enum import StrEnum

from django.core.cache import cache

from registry import selectors
from registry.access import Actor
from registry.artifacts import version_files
from registry.errors import not_found
from registry.models import SkillVersion
from registry.served import is_text

MAX_DIFF_FILE_BYTES = 256 * 1024  # a bigger file is compared by size only: difflib is quadratic
MAX_DIFF_LINES = 1500  # of one file's diff; past this a reader wants the raw files, not a page
CONTEXT_LINES = 3  # diff -u's default
DIFF_CACHE_SECONDS = 7 * 24 * 3600  # keyed by both archives' sha256: the same bytes, the same diff


class FileStatus(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


class Concern(StrEnum):
    """Why a frontmatter change is called out; OTHER is listed but not highlighted."""

    PERMISSIONS = "permissions"
    NETWORK = "network"
    MCP = "mcp"
    REQUIREMENTS = "requirements"
    OTHER = "other"


# Manifest fields (dotted paths of ``Manifest.to_dict()``) by what they let a skill do or need;
# the longest matching prefix decides.
_CONCERNS = {
    "allowed_tools": Concern.PERMISSIONS,
    "always": Concern.PERMISSIONS,
    "toolsets": Concern.PERMISSIONS,
    "scripts": Concern.PERMISSIONS,
    "runtime.requires_write_access": Concern.PERMISSIONS,
    "runtime.entrypoint": Concern.PERMISSIONS,
    "runtime.runtime": Concern.PERMISSIONS,
    "runtime.requires_network": Concern.NETWORK,
    "mcp.url": Concern.NETWORK,
    "mcp": Concern.MCP,
    "requires": Concern.REQUIREMENTS,
    "install": Concern.REQUIREMENTS,
    "os": Concern.REQUIREMENTS,
    "primary_env": Concern.REQUIREMENTS,
    "vars": Concern.REQUIREMENTS,
}


@dataclass(frozen=True)
class FileDiff:
    path: str
    status: FileStatus
    size_from: int | None
    size_to: int | None
    binary: bool = False  # not UTF-8 text: compared by bytes, no diff shown
    too_large: bool = False  # over MAX_DIFF_FILE_BYTES: compared by bytes, no diff shown
    truncated: bool = False  # the diff was cut at MAX_DIFF_LINES
    diff: str = ""  # unified diff text


@dataclass(frozen=True)
class FrontmatterChange:
    field: str  # dotted path in the manifest: requires.bins, mcp.command, runtime.requires_network
    concern: Concern
    before: object
    after: object


@dataclass(frozen=True)
class VersionDiff:
    files: list[FileDiff] = field(default_factory=list)
    frontmatter: list[FrontmatterChange] = field(default_factory=list)
    unchanged: int = 0  # files identical in both

    @property
    def notable(self) -> list[FrontmatterChange]:
        return [c for c in self.frontmatter if c.concern is not Concern.OTHER]

    def to_dict(self) -> dict:
        return {
            "files": [asdict(f) for f in self.files],
            "frontmatter": [asdict(c) for c in self.frontmatter],
            "unchanged": self.unchanged,
        }


def version_diff(
    files_from: dict[str, bytes], files_to: dict[str, bytes], manifest_from: dict, manifest_to: dict
) -> VersionDiff:
    """Every file that differs (sorted by path) and every manifest field that changed."""
    paths = sorted(files_from.keys() | files_to.keys())
    changed = [file_diff(p, files_from.get(p), files_to.get(p)) for p in paths if files_from.get(p) != files_to.get(p)]
    return VersionDiff(
        files=changed,
        frontmatter=manifest_changes(manifest_from, manifest_to),
        unchanged=len(paths) - len(changed),
    )


def file_diff(path: str, old: bytes | None, new: bytes | None) -> FileDiff:
    status = FileStatus.ADDED if old is None else FileStatus.REMOVED if new is None else FileStatus.CHANGED
    size_from, size_to = (None if data is None else len(data) for data in (old, new))
    present = [data for data in (old, new) if data is not None]
    if any(len(data) > MAX_DIFF_FILE_BYTES for data in present):
        return FileDiff(path, status, size_from, size_to, too_large=True)
    if not all(is_text(data) for data in present):
        return FileDiff(path, status, size_from, size_to, binary=True)
    text, truncated = unified_diff(path, old, new)
    return FileDiff(path, status, size_from, size_to, truncated=truncated, diff=text)


def unified_diff(path: str, old: bytes | None, new: bytes | None) -> tuple[str, bool]:
    """``diff -u`` of one text file (``/dev/null`` for a side that does not exist), cut at
    MAX_DIFF_LINES; and whether it was cut."""
    lines = difflib.unified_diff(
        _lines(old),
        _lines(new),
        fromfile=f"a/{path}" if old is not None else "/dev/null",
        tofile=f"b/{path}" if new is not None else "/dev/null",
        n=CONTEXT_LINES,
    )
    kept: list[str] = []
    for line in lines:
        if len(kept) == MAX_DIFF_LINES:
            return "".join(kept), True
        kept.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(kept), False


def _lines(data: bytes | None) -> list[str]:
    return data.decode("utf-8").splitlines(keepends=True) if data is not None else []


def manifest_changes(before: dict, after: dict) -> list[FrontmatterChange]:
    """Each leaf field of the parsed manifests that differs, notable concerns first."""
    old, new = _flatten(before), _flatten(after)
    changes = [
        FrontmatterChange(key, concern_of(key), old.get(key), new.get(key))
        for key in sorted(old.keys() | new.keys())
        if old.get(key) != new.get(key)
    ]
    order = list(Concern)
    return sorted(changes, key=lambda c: order.index(c.concern))


def concern_of(key: str) -> Concern:
    prefixes = [p for p in _CONCERNS if key == p or key.startswith(p + ".")]
    return _CONCERNS[max(prefixes, key=len)] if prefixes else Concern.OTHER


def _flatten(value: object, prefix: str = "") -> dict[str, object]:
    """Nested dicts to dotted keys; lists and scalars are leaves. An empty value (none, "", [],
    {}) is left out, so a field that appears with its default is no change."""
    if isinstance(value, dict):
        flat: dict[str, object] = {}
        for key, inner in value.items():
            flat.update(_flatten(inner, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    if value in (None, "", [], {}):
        return {}
    return {prefix: value}


@dataclass(frozen=True)
class Compared:
    old: SkillVersion
    new: SkillVersion
    diff: VersionDiff


def compare_visible(*, actor: Actor, name: str, from_version: str, to_version: str) -> Compared:
    """Both versions as ``actor`` may see them, and what changed between them (cached by the two
    archives' digests: published bytes never change)."""
    old, new = (
        selectors.skill_version_get_visible(actor=actor, name=name, version=v) for v in (from_version, to_version)
    )
    for sv in (old, new):
        if not selectors.skill_version_download_allowed(actor=actor, version=sv):
            raise not_found("version")
    key = f"version-diff:{old.sha256}:{new.sha256}"
    found = cache.get(key)
    if found is None:
        found = version_diff(version_files(old), version_files(new), old.manifest or {}, new.manifest or {})
        cache.set(key, found, DIFF_CACHE_SECONDS)
    return Compared(old, new, found)
