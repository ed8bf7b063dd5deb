"""Folders and git repositories that hold several skills (a team's `skills/` folder, a
marketplace repository): list them, pick some, or take them all, like the `skills` CLI.

A source whose root has a SKILL.md is one skill and is left alone. Otherwise the skills under
it are found the way agents find them (``discovery.scan_tree``: a skill folder is not searched
further), and each chosen one becomes its own source: a folder, or the same repository and ref
with the skill's subfolder.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from skillctl.errors import UsageError
from skillctl.installer.arguments import Source, SourceKind


@dataclass(frozen=True)
class Found:
    name: str  # as SKILL.md declares it (the folder's name when it declares none)
    description: str
    subdir: str  # POSIX path from the source's root

    def to_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "path": self.subdir}


def is_collection(source: Source) -> bool:
    """A folder, or a git repository without a subfolder, whose root is not itself a skill."""
    if source.kind is SourceKind.FOLDER:
        return not (Path(source.location) / "SKILL.md").is_file()
    return source.kind is SourceKind.GIT and not source.subdir


def skills_in(source: Source) -> list[Found]:
    """The skills a folder or repository holds ([] for a repository that is one skill)."""
    if source.kind is SourceKind.FOLDER:
        return _scan(Path(source.location))
    from skillctl.installer.fetchers import clone

    with tempfile.TemporaryDirectory(prefix="skillctl-git-") as tmp:
        checkout = clone(source.location, source.ref, Path(tmp) / "repo")
        if (checkout / "SKILL.md").is_file():
            return []
        shutil.rmtree(checkout / ".git", ignore_errors=True)
        return _scan(checkout)


def _scan(root: Path) -> list[Found]:
    from skillctl.discovery import scan_tree
    from skillctl.format.parse import parse_skill_md

    found = []
    for folder in scan_tree(root):
        try:
            manifest = parse_skill_md((folder / "SKILL.md").read_bytes(), folder_name=folder.name).manifest
        except OSError:
            continue
        name = (manifest.name if manifest else "") or folder.name
        description = " ".join((manifest.description if manifest else "").split())
        found.append(Found(name, description, folder.relative_to(root).as_posix()))
    return found


def expand(source: Source, *, pick: Sequence[str] = (), take_all: bool = False) -> list[Source]:
    """The sources to install from a collection: the ``pick``ed skills, or all of them."""
    found = skills_in(source)
    if not found:
        return [source]  # a repository whose root is the skill
    if not pick and not take_all:
        raise UsageError(
            f"{source.describe()} holds {len(found)} skills: "
            + ", ".join(f.name for f in found[:20])
            + (" ..." if len(found) > 20 else ""),
            hint="Pick with --skill NAME (repeatable), or take them all with --all; --list shows them.",
            code="install.several_skills",
        )
    chosen = found if take_all else _picked(found, pick, source)
    return [_one(source, f) for f in chosen]


def _picked(found: list[Found], pick: Sequence[str], source: Source) -> list[Found]:
    from skillctl.format.names import normalise_name

    by_key: dict[str, Found] = {}
    for f in found:
        for key in (f.name, normalise_name(f.name), Path(f.subdir).name):
            by_key.setdefault(key, f)
    missing = [p for p in pick if p not in by_key]
    if missing:
        raise UsageError(
            f"{source.describe()} has no skill named {', '.join(map(repr, missing))}",
            hint="`skillctl install SOURCE --list` shows the skills it holds.",
            code="install.skill_not_in_source",
        )
    return list(dict.fromkeys(by_key[p] for p in pick))


def _one(source: Source, found: Found) -> Source:
    if source.kind is SourceKind.FOLDER:
        return Source(SourceKind.FOLDER, location=str(Path(source.location) / found.subdir))
    return Source(SourceKind.GIT, location=source.location, ref=source.ref, subdir=found.subdir)
