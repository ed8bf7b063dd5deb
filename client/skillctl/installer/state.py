"""One scope's recorded state: what skills.toml wants and what skills.lock pins.

Loaded when a session starts (under the scope's file lock) and written back after each change,
so the files on disk always describe the folders in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from skillctl.installer import project
from skillctl.installer.project import Locked, Scope, Wanted


@dataclass
class ScopeState:
    scope: Scope
    wanted: dict[str, Wanted] = field(default_factory=dict)
    locked: dict[str, Locked] = field(default_factory=dict)
    # Changes not written yet: the placer writes both files once per operation (or when asked),
    # and keeps each placed skill's journal until then, so a crash in between loses nothing.
    dirty: bool = False

    def load(self) -> None:
        self.wanted = project.read_manifest(self.scope.manifest_path)
        self.locked = project.read_lock(self.scope.lock_path)
        self.dirty = False

    def save(self) -> None:
        project.write_lock(self.scope.lock_path, self.locked)
        project.write_manifest(self.scope.manifest_path, self.wanted)
        self.dirty = False

    def remember(self, locked: Locked, wanted: Wanted) -> None:
        self.locked[locked.name] = locked
        self.wanted[wanted.name] = wanted
        self.dirty = True

    def forget(self, name: str) -> None:
        self.locked.pop(name, None)
        self.wanted.pop(name, None)
        self.dirty = True
