"""What one session sees of the installed skills, from its start to its end.

A session (``skills.session()``) takes a :class:`Snapshot` of the SkillSet's routing index when it
starts: each skill's name, version, SKILL.md digest and folder. A reload (a watcher, an install,
``SkillSet.reload()``) gives the SkillSet a new index and never touches a snapshot, so a running
conversation keeps the skills it started with:

- a skill added later is unknown to it (``tool.unknown_skill``);
- a skill whose SKILL.md changed or went away since the start is refused
  (``session.skill_changed``) instead of being shown in another form than the one the
  conversation was offered; a new session sees the new version;
- a skill parsed once in the session is kept as parsed for the rest of it.

The snapshot pins SKILL.md (instructions, version, next skills, toolsets, MCP server); other
files of a skill (``read_skill_file``) are read as they are on disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skillctl.errors import SkillctlError
from skillctl.routing.index import Entry, RoutingIndex, skill_md_digest


@dataclass(frozen=True)
class SkillRecord:
    name: str
    version: str
    digest: str  # sha256 of SKILL.md
    path: str


@dataclass(frozen=True)
class Snapshot:
    """The index entries a session started with (entries are replaced by a reload, never changed)."""

    entries: tuple[Entry, ...]

    @classmethod
    def of(cls, index: RoutingIndex) -> Snapshot:
        return cls(tuple(index.entries))

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def records(self) -> tuple[SkillRecord, ...]:
        return tuple(SkillRecord(e.name, e.version, e.digest, e.path) for e in self.entries)

    def entry(self, name: str) -> Entry | None:
        return next((e for e in self.entries if e.name == name), None)


class PinnedSkills:
    """The SkillSet as one session sees it (what :mod:`skillctl.tools` needs: ``get``,
    ``config``, ``record_use``): the snapshot's skills, each parsed once, checked against it."""

    def __init__(self, skills, snapshot: Snapshot) -> None:
        self.skills = skills
        self.snapshot = snapshot
        self._parsed: dict = {}

    @property
    def config(self):
        return self.skills.config

    def entry(self, name: str) -> Entry | None:
        return self.snapshot.entry(name)

    def get(self, name: str):
        """The parsed skill as the snapshot knows it; None when the session does not know it."""
        entry = self.snapshot.entry(name) if isinstance(name, str) else None
        if entry is None:
            return None
        if name not in self._parsed:
            self._parsed[name] = self._parse(entry)
        return self._parsed[name]

    def _parse(self, entry: Entry):
        from skillctl.discovery import load_installed

        now = skill_md_digest(entry.path)
        skill = load_installed(entry.scope, Path(entry.path)) if now == entry.digest else None
        if skill is None or skill_md_digest(entry.path) != entry.digest:
            what = "was removed" if not now else "changed on disk"
            raise SkillctlError(
                f"the skill {entry.name!r} {what} after this session started",
                hint="A running conversation keeps the skills it started with; start a new session "
                "(skills.session() after closing this one) to use the new version.",
                code="session.skill_changed",
            )
        return skill

    def record_use(self, names: list[str]) -> None:
        self.skills.record_use(names)
