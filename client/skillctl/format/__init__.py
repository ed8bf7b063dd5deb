"""``skillctl.format``: parse, validate, pack, inspect and extract skills.

Pure code: data in, data out; no Django, no network, no globals. The registry uses it on every
upload and the client on every install, so both apply exactly the same policy.

Public API (imported lazily so ``import skillctl.format`` stays cheap):

- ``parse_skill_md(data, *, folder_name=None, skill_json=None, strict=False)`` -> SkillReport
- ``load_skill(path, *, strict=False, limits=DEFAULT_LIMITS)`` -> SkillReport for a folder, a
  SKILL.md, a .zip or a .tar.gz; never raises for bad input.
- ``load_archive(source, *, strict=False, limits=DEFAULT_LIMITS)`` -> SkillReport for an archive
  given as a path, bytes or a binary file object (what the registry calls on every upload).
- ``inspect_archive(source, *, limits=DEFAULT_LIMITS)`` -> ArchiveInspection
- ``extract_archive(source, dest, *, limits=DEFAULT_LIMITS)`` -> Path (raises ArchiveError)
- ``pack_skill(src_dir, out_path)`` -> PackResult (raises InvalidSkillError)
- ``folder_files(src_dir)`` -> list[FileEntry] with per-file sha256
"""

from __future__ import annotations

from skillctl.format.findings import CODES, Finding, Severity
from skillctl.format.limits import DEFAULT_LIMITS, Limits
from skillctl.format.manifest import (
    ConditionalNext,
    InstallSpec,
    Manifest,
    McpSpec,
    Requires,
    RuntimeSpec,
    Triggers,
    VarSpec,
)
from skillctl.format.report import FileEntry, SkillReport

_LAZY = {
    "parse_skill_md": "skillctl.format.parse",
    "normalise": "skillctl.format.parse",
    "load_skill": "skillctl.format.load",
    "load_archive": "skillctl.format.load",
    "inspect_archive": "skillctl.format.archive",
    "extract_archive": "skillctl.format.archive",
    "pack_skill": "skillctl.format.archive",
    "folder_files": "skillctl.format.archive",
    "ArchiveInspection": "skillctl.format.archive",
    "ArchiveError": "skillctl.format.archive",
    "PackResult": "skillctl.format.archive",
    "InvalidSkillError": "skillctl.format.archive",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'skillctl.format' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "CODES",
    "DEFAULT_LIMITS",
    "ConditionalNext",
    "FileEntry",
    "Finding",
    "InstallSpec",
    "Limits",
    "Manifest",
    "McpSpec",
    "Requires",
    "RuntimeSpec",
    "Severity",
    "SkillReport",
    "Triggers",
    "VarSpec",
    *_LAZY,
]
