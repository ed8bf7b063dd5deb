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

A snapshot outlives its process (seed 002 keeps it with the session): ``session.snapshot().save(path)``
(``session.snapshot`` is the snapshot itself too) writes it as JSON with the folders searched and
the session's loaded and active skills; ``SkillSet.resume(path)`` gives a SkillSet whose session
starts from it, so a conversation continued tomorrow is offered the skills it was offered today,
and a skill changed in between is refused as above.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillctl import fileio
from skillctl.errors import SkillctlError
from skillctl.routing.index import Entry, RoutingIndex, skill_md_digest

SNAPSHOT_FORMAT = 1  # a saved snapshot of another format is refused, never half read


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
    roots: tuple[tuple[str, str], ...] = ()  # (scope, folder) searched when it was taken
    loaded: tuple[str, ...] = ()  # the session's loaded skills, in load order (when saved)
    active: str | None = None  # the session's active skill (when saved)
    extra: dict = field(default_factory=dict, compare=False)  # a host's own state, kept as given

    @classmethod
    def of(cls, index: RoutingIndex, roots: Sequence[tuple[str, Path]] = ()) -> Snapshot:
        return cls(tuple(index.entries), roots=tuple((scope, str(folder)) for scope, folder in roots))

    def __call__(self) -> Snapshot:
        """``session.snapshot()`` is the snapshot too (the spelling seed 002's API suggests)."""
        return self

    def save(self, path: Path | str) -> Path:
        """Write the snapshot as JSON (atomically); the path written."""
        data = {
            "format": SNAPSHOT_FORMAT,
            "roots": [list(root) for root in self.roots],
            "loaded": list(self.loaded),
            "active": self.active,
            "extra": self.extra,
            "entries": [e.to_dict() for e in self.entries],
        }
        target = Path(path)
        fileio.atomic_write(target, json.dumps(data, ensure_ascii=False))
        return target

    @classmethod
    def load(cls, path: Path | str) -> Snapshot:
        """A saved snapshot; ``session.snapshot_invalid`` when it cannot be read as one."""
        try:
            data = json.loads(Path(path).read_text("utf-8"))
            if data.get("format") != SNAPSHOT_FORMAT:
                raise ValueError(f"format {data.get('format')!r}, expected {SNAPSHOT_FORMAT}")
            return cls(
                entries=tuple(Entry.from_dict(e) for e in data["entries"]),
                roots=tuple((str(scope), str(folder)) for scope, folder in data["roots"]),
                loaded=tuple(map(str, data.get("loaded") or ())),
                active=data.get("active"),
                extra=dict(data.get("extra") or {}),
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SkillctlError(
                f"cannot read the session snapshot {path}: {exc}",
                hint="Save it again with session.snapshot().save(path).",
                code="session.snapshot_invalid",
            ) from None

    def against(self, index: RoutingIndex) -> Snapshot:
        """This snapshot with each unchanged skill's entry taken from ``index`` (its semantic
        vectors are not saved); a changed or removed skill keeps its saved entry and digest."""
        now = {(e.name, e.digest): e for e in index.entries}
        entries = tuple(now.get((e.name, e.digest), e) for e in self.entries)
        return Snapshot(entries, roots=self.roots, loaded=self.loaded, active=self.active, extra=self.extra)

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
