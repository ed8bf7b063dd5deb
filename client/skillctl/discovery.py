"""Find the skills an agent can use, strongest first:

1. ``workspace``: the project's own ``skills/`` folder (seed 002's workspace skills);
2. ``project``: ``.agents/skills``, then ``.agent/skills`` (seed 004's spelling) of the project;
3. ``user``: ``~/.agents/skills``, then ``~/.agent/skills`` (``SKILLYARD_USER_SKILLS`` replaces both);
4. ``bundled``: folders a host application ships its own skills in (``bundled_dirs``);
5. ``extra``: folders from config (``skill_dirs``) or the caller.

A name found in more than one place is a :class:`Collision` the caller can report; the
strongest copy is used. ``scan_tree`` finds every skill folder under
any root (``route --skills-dir``). Parsing goes through ``skillctl.format.load_skill``, the one
parser the registry uses too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from skillctl import paths

if TYPE_CHECKING:
    from skillctl.format import Manifest, SkillReport

SKILL_FILE = "SKILL.md"
# Folders that never hold skills of their own and can be huge.
SKIPPED_DIRS = frozenset({".git", "node_modules"})
SCOPES = ("workspace", "project", "user", "bundled", "extra", "dir")  # precedence, strongest first
WORKSPACE_SKILLS = "skills"  # <project>/skills/: skills kept in the repository beside its code
# Seed 004 names the agent folder in the singular; both spellings are read, ours first.
PROJECT_SKILL_DIRS = (paths.PROJECT_SKILLS, Path(".agent") / "skills")


@dataclass
class InstalledSkill:
    name: str
    path: Path
    scope: str  # one of SCOPES
    report: SkillReport

    @property
    def manifest(self) -> Manifest:
        assert self.report.manifest is not None, "an InstalledSkill is only made from a parsed manifest"
        return self.report.manifest


@dataclass
class Collision:
    name: str
    used: Path
    shadowed: list[Path] = field(default_factory=list)


@dataclass
class Discovery:
    skills: list[InstalledSkill] = field(default_factory=list)
    collisions: list[Collision] = field(default_factory=list)

    def get(self, name: str) -> InstalledSkill | None:
        return next((s for s in self.skills if s.name == name), None)


def scan_tree(root: Path) -> list[Path]:
    """Every folder under ``root`` holding a SKILL.md, sorted; hidden folders included.

    A skill folder is not searched further (its references may hold example SKILL.md files);
    symlinked folders are followed (agents link installed skills), cycles are cut.
    """
    found: list[str] = []
    _scan(os.fspath(root), found, set())
    return [Path(p) for p in sorted(found)]


def _scan(folder: str, found: list[str], seen: set[tuple[int, int]]) -> None:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    if any(e.name == SKILL_FILE for e in entries):
        found.append(folder)
        return
    for entry in entries:
        if entry.name in SKIPPED_DIRS or not entry.is_dir():
            continue
        if entry.is_symlink():
            st = os.stat(entry.path)
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
        _scan(entry.path, found, seen)


def skill_roots(
    *,
    project_dir: Path | None = None,
    include_user: bool = True,
    extra_dirs: Sequence[Path] = (),
    bundled_dirs: Sequence[Path] = (),
) -> list[tuple[str, Path]]:
    """The (scope, folder) pairs searched, strongest first (the module docstring's order)."""
    project = project_dir or paths.project_root()
    roots = [("workspace", project / WORKSPACE_SKILLS)]
    roots += [("project", project / folder) for folder in PROJECT_SKILL_DIRS]
    if include_user:
        roots += [("user", folder) for folder in user_roots()]
    roots += [("bundled", Path(d).expanduser()) for d in bundled_dirs]
    roots += [("extra", Path(d).expanduser()) for d in extra_dirs]
    return roots


def user_roots() -> list[Path]:
    """``SKILLYARD_USER_SKILLS`` when set (tests, containers), else both user spellings."""
    if os.environ.get("SKILLYARD_USER_SKILLS"):
        return [paths.user_skills_dir()]
    return [Path.home() / folder for folder in PROJECT_SKILL_DIRS]


def locate(roots: Iterable[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """(scope, skill folder) for every skill under the roots, in precedence order."""
    located: list[tuple[str, Path]] = []
    for scope, root in roots:
        if root.is_dir():
            located.extend((scope, folder) for folder in scan_tree(root))
    return located


def resolve_collisions(
    entries: Sequence[tuple[str, Path]],
) -> tuple[list[int], list[Collision]]:
    """Given (name, path) in precedence order: the indexes kept and the collisions found."""
    first: dict[str, int] = {}
    collisions: dict[str, Collision] = {}
    for i, (name, path) in enumerate(entries):
        if name not in first:
            first[name] = i
            continue
        used = entries[first[name]][1]
        collisions.setdefault(name, Collision(name, used)).shadowed.append(path)
    return sorted(first.values()), list(collisions.values())


def load_installed(scope: str, folder: Path) -> InstalledSkill | None:
    """Parse one skill folder; None when it has no usable manifest."""
    from skillctl.format import load_skill

    report = load_skill(folder)
    if report.manifest is None:
        return None
    return InstalledSkill(name=installed_name(report.manifest.name, folder), path=folder, scope=scope, report=report)


def installed_name(declared: str, folder: Path) -> str:
    """The name a skill goes by here: the one SKILL.md declares, or, when that breaks the name
    rule ("Ahrefs Automation") and the skill sits in the folder of its normalised form (where
    `skillctl install` puts it), the folder's name, so list, check, route and the lock agree."""
    from skillctl.format.names import NAME_RE, normalise_name

    if not declared:
        return folder.name
    if not NAME_RE.match(declared) and normalise_name(declared) == folder.name:
        return folder.name
    return declared


def discover(
    *,
    project_dir: Path | None = None,
    include_user: bool = True,
    extra_dirs: Sequence[Path] = (),
    bundled_dirs: Sequence[Path] = (),
) -> Discovery:
    """Every usable skill, workspace > project > user > bundled > extra; collisions reported."""
    roots = skill_roots(
        project_dir=project_dir, include_user=include_user, extra_dirs=extra_dirs, bundled_dirs=bundled_dirs
    )
    return discover_in(locate(roots))


def discover_dir(root: Path) -> Discovery:
    """Every usable skill under one folder (``--skills-dir``), scope ``dir``."""
    return discover_in([("dir", folder) for folder in scan_tree(root)])


def discover_in(located: Sequence[tuple[str, Path]]) -> Discovery:
    loaded = [s for scope, folder in located if (s := load_installed(scope, folder))]
    keep, collisions = resolve_collisions([(s.name, s.path) for s in loaded])
    return Discovery(skills=[loaded[i] for i in keep], collisions=collisions)
