"""``skills.toml`` (what is wanted) and ``skills.lock`` (what is installed, exactly).

Both are TOML, written in a fixed order (skills by name, keys in a fixed order, files by path)
so that the same state always gives the same bytes and diffs stay small. Writes are atomic:
a temporary file beside the target, fsync, then one rename. skills.toml is also edited by hand:
an existing file is updated in place, so its comments, layout and unchanged entries survive;
new entries are added at the end.

skills.toml, one table per skill; the key present says where it comes from (like Cargo)::

    [skills.hello]            # a registry skill: a version range and the registry's name
    registry = "default"
    version = "^1.0"

    [skills.notes]
    path = "../skills/notes"  # a local folder (relative to the project)

    [skills.fmt]
    archive = "dist/fmt.zip"  # a local .zip / .tar.gz

    [skills.pdf]
    url = "https://example.org/pdf.zip"

    [skills.review]
    git = "https://example.org/team/skills.git"
    ref = "v1"                # branch, tag or commit (optional)
    subdir = "skills/review"  # the skill's folder inside the repository (optional)

Any skill may also list ``agents = ["claude", ...]`` to be linked into those agents' folders.

skills.lock adds what was resolved: the exact ``version``, the ``registry_url`` it came from,
the archive ``sha256`` (for folders and git: the sha256 of the reproducible pack), the git
``commit``, and the sha256 of every installed file under ``[skills.<name>.files]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillctl import fileio, paths
from skillctl.errors import SkillctlError

LOCK_VERSION = 1
SOURCE_KEYS = ("registry", "version", "path", "archive", "url", "git", "ref", "subdir")
_LOCK_HEADER = (
    "# skills.lock: written by skillctl, do not edit by hand.\n"
    "# It pins the exact version, origin and sha256 of every installed skill.\n\n"
)


@dataclass(frozen=True)
class Scope:
    """Where one scope keeps its skills, its skills.toml and its skills.lock.

    Project scope: ``<project>/.agents/skills/`` with skills.toml and skills.lock in the project
    root. User scope (``-g``): ``~/.agents/skills/`` with skills.toml and skills.lock beside it,
    in ``~/.agents/``.
    """

    name: str  # "project" | "user"
    skills_dir: Path
    manifest_path: Path
    lock_path: Path
    base: Path  # relative paths in skills.toml are relative to this folder; agents link here

    @classmethod
    def project(cls, root: Path | None = None) -> Scope:
        root = (root or paths.project_root()).resolve()
        return cls(
            "project",
            paths.project_skills_dir(root),
            root / paths.MANIFEST_FILE,
            root / paths.LOCK_FILE,
            root,
        )

    @classmethod
    def user(cls) -> Scope:
        skills = paths.user_skills_dir().expanduser()
        return cls(
            "user",
            skills,
            skills.parent / paths.MANIFEST_FILE,
            skills.parent / paths.LOCK_FILE,
            Path.home(),
        )

    @property
    def work_dir(self) -> Path:
        """Staging, journal and the file lock: beside the skills folder, same file system."""
        return self.skills_dir.parent / ".skillyard-tmp"


@dataclass
class Wanted:
    """One entry of skills.toml."""

    name: str
    source: dict[str, str]  # a subset of SOURCE_KEYS; see the module docstring
    agents: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # keys we do not know, kept as they are

    def to_toml(self) -> dict[str, Any]:
        table: dict[str, Any] = {k: self.source[k] for k in SOURCE_KEYS if self.source.get(k)}
        if self.agents:
            table["agents"] = sorted(set(self.agents))
        table.update({k: self.extra[k] for k in sorted(self.extra)})
        return table

    @classmethod
    def from_toml(cls, name: str, table: dict[str, Any]) -> Wanted:
        source = {k: str(table[k]) for k in SOURCE_KEYS if table.get(k) not in (None, "")}
        agents = [str(a) for a in table.get("agents", [])]
        extra = {k: v for k, v in table.items() if k not in SOURCE_KEYS and k != "agents"}
        return cls(name, source, agents, extra)


@dataclass
class Locked:
    """One entry of skills.lock."""

    name: str
    version: str  # the exact version ("" when a local skill declares none)
    sha256: str  # the archive's sha256 (reproducible pack for folders and git)
    source: dict[str, str]  # as in skills.toml, with the range replaced by nothing
    registry_url: str = ""
    commit: str = ""  # git sources: the commit the ref resolved to
    files: dict[str, str] = field(default_factory=dict)  # path -> sha256
    declared_name: str = ""  # what SKILL.md calls it, when that is no valid name (installed as `name`)

    def to_toml(self) -> dict[str, Any]:
        table: dict[str, Any] = {"version": self.version}
        if self.declared_name:
            table["declared_name"] = self.declared_name
        for key in ("registry", "path", "archive", "url", "git", "ref", "subdir"):
            if self.source.get(key):
                table[key] = self.source[key]
        if self.registry_url:
            table["registry_url"] = self.registry_url
        if self.commit:
            table["commit"] = self.commit
        table["sha256"] = self.sha256
        table["files"] = {p: self.files[p] for p in sorted(self.files)}
        return table

    @classmethod
    def from_toml(cls, name: str, table: dict[str, Any]) -> Locked:
        source = {
            k: str(table[k]) for k in ("registry", "path", "archive", "url", "git", "ref", "subdir") if table.get(k)
        }
        return cls(
            name=name,
            version=str(table.get("version", "")),
            sha256=str(table.get("sha256", "")),
            source=source,
            registry_url=str(table.get("registry_url", "")),
            commit=str(table.get("commit", "")),
            files={str(k): str(v) for k, v in (table.get("files") or {}).items()},
            declared_name=str(table.get("declared_name", "")),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, **self.to_toml()}


def source_kind(source: dict[str, str]) -> str:
    """registry | folder | archive | url | git, from the keys of a source record."""
    for key, kind in (("git", "git"), ("url", "url"), ("archive", "archive"), ("path", "folder")):
        if source.get(key):
            return kind
    return "registry"


def _invalid(what: str) -> dict[str, str]:
    return {
        "hint": f"Fix the {what} by hand, or delete it and run `skillctl install` again.",
        "code": f"{what.replace('.', '_')}_invalid",
    }


def _read_toml(path: Path, what: str) -> dict[str, Any]:
    return fileio.read_toml(path, **_invalid(what))


def _skills_table(data: dict[str, Any], path: Path) -> dict[str, dict[str, Any]]:
    skills = data.get("skills", {})
    if not isinstance(skills, dict) or not all(isinstance(v, dict) for v in skills.values()):
        raise SkillctlError(
            f"{path}: [skills] must hold one table per skill",
            hint='Write entries as `[skills.NAME]` with `version = "^1.0"` or `path = "..."`.',
            code="project.manifest_invalid",
        )
    return skills


def read_manifest(path: Path) -> dict[str, Wanted]:
    skills = _skills_table(_read_toml(path, "skills.toml"), path)
    return {name: Wanted.from_toml(name, table) for name, table in skills.items()}


def read_lock(path: Path) -> dict[str, Locked]:
    data = _read_toml(path, "skills.lock")
    version = data.get("lock-version", LOCK_VERSION)
    if version != LOCK_VERSION:
        raise SkillctlError(
            f"{path} has lock-version {version}; this skillctl reads version {LOCK_VERSION}",
            hint="Upgrade skillctl, or delete skills.lock and run `skillctl install`.",
            code="project.lock_version",
        )
    skills = _skills_table(data, path)
    return {name: Locked.from_toml(name, table) for name, table in skills.items()}


def render_manifest(wanted: dict[str, Wanted], existing=None) -> str:
    """skills.toml for ``wanted``; ``existing`` (a document from the file) is updated in place."""
    if existing is None:
        tables = {n: wanted[n].to_toml() for n in sorted(wanted)}
        return _render_new_manifest(tables) or fileio.dump_toml({"skills": tables})
    import tomlkit

    skills = existing.setdefault("skills", tomlkit.table(is_super_table=True))
    for name in [n for n in skills if n not in wanted]:
        del skills[name]
    for name in sorted(wanted):
        new = wanted[name].to_toml()
        if name not in skills:
            skills[name] = new
            continue
        table = skills[name]
        for key in [k for k in table if k not in new]:
            del table[key]
        for key, value in new.items():
            if table.get(key) != value:
                table[key] = value
    return fileio.dump_toml(existing)


def _render_new_manifest(tables: dict[str, dict[str, Any]]) -> str | None:
    """A new skills.toml written directly, the bytes tomlkit would write (importing and running
    tomlkit was ~40 ms of installing 50 skills into a new project); None when a value is not a
    string or a list of strings (kept extra keys), for tomlkit to write."""
    out = []
    for name, table in tables.items():
        lines = [f"[skills.{_toml_key(name)}]\n"]
        for key, value in table.items():
            if isinstance(value, str):
                lines.append(f"{_toml_key(key)} = {_toml_string(value)}\n")
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                lines.append(f"{_toml_key(key)} = [{', '.join(_toml_string(v) for v in value)}]\n")
            else:
                return None
        out.append("".join(lines))
    return "\n".join(out) if out else None


def render_lock(locked: dict[str, Locked]) -> str:
    """skills.lock, written directly: it is generated, never edited, and rendering it through
    tomlkit after every placed skill made installing N skills quadratic (1.5 s of 2.7 s for 50)."""
    out = [_LOCK_HEADER, f"lock-version = {LOCK_VERSION}\n"]
    for name in sorted(locked):
        table = locked[name].to_toml()
        files = table.pop("files")
        out.append(f"\n[skills.{_toml_key(name)}]\n")
        out += [f"{_toml_key(k)} = {_toml_string(v)}\n" for k, v in table.items()]
        out.append(f"\n[skills.{_toml_key(name)}.files]\n")
        out += [f"{_toml_key(k)} = {_toml_string(v)}\n" for k, v in files.items()]
    return "".join(out)


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _toml_string(key)


def _toml_string(value: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    return (
        '"'
        + "".join(
            _TOML_ESCAPES.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else c) for c in str(value)
        )
        + '"'
    )


def write_manifest(path: Path, wanted: dict[str, Wanted]) -> None:
    existing = fileio.read_toml_document(path, **_invalid("skills.toml")) if path.exists() else None
    fileio.atomic_write(path, render_manifest(wanted, existing))


def write_lock(path: Path, locked: dict[str, Locked]) -> None:
    fileio.atomic_write(path, render_lock(locked))
