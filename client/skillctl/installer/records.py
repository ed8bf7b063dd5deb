"""What an operation reports (``Change``), and how recorded sources are described and compared."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from skillctl.errors import SkillctlError
from skillctl.installer.project import Locked, source_kind
from skillctl.trust import Notice


class Action(StrEnum):
    """What an operation did to one skill (the ``action`` of ``--json`` output)."""

    INSTALLED = "installed"
    UPDATED = "updated"
    RESTORED = "restored"  # the locked version put back (folder deleted or edited)
    UNCHANGED = "unchanged"
    REMOVED = "removed"
    WOULD_UPDATE = "would-update"
    WOULD_INSTALL = "would-install"
    # The locked version was yanked: moved to the newest non-yanked version in range, even lower.
    REPLACED_YANKED = "replaced-yanked"
    WOULD_REPLACE_YANKED = "would-replace-yanked"


@dataclass
class Change:
    name: str
    action: Action
    old: str = ""  # version before ("" when none)
    new: str = ""  # version after
    source: str = ""
    path: str = ""
    agents: list[str] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)  # what the registry says about `new`

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "action": self.action.value,
            "from": self.old or None,
            "to": self.new or None,
            "source": self.source,
            "path": self.path,
            "agents": self.agents,
            "notices": [n.to_dict() for n in self.notices],
        }


def describe_locked(entry: Locked) -> str:
    kind = source_kind(entry.source)
    if kind == "registry":
        return f"registry {entry.source.get('registry') or entry.registry_url}"
    if kind == "git":
        return f"git {entry.source['git']}@{entry.commit[:12]}"
    return f"{kind} {entry.source.get({'folder': 'path'}.get(kind, kind), '')}"


def same_origin(a: dict[str, str], b: dict[str, str]) -> bool:
    """Same place, ignoring the version range: a registry name, a path, a URL or a repository."""
    keys = ("registry", "path", "archive", "url", "git", "subdir")
    return all((a.get(k) or "") == (b.get(k) or "") for k in keys)


def declared_version(path: Path) -> str:
    """The version a skill folder or archive declares in its SKILL.md ("" when none)."""
    from skillctl.format import load_skill

    return load_skill(path).version or ""


class LocalChangesError(SkillctlError):
    """Skills with local edits were not replaced; ``changes`` is what the operation did do."""

    code = "install.local_changes"

    def __init__(self, message: str, *, hint: str | None = None, changes: list[Change] | None = None) -> None:
        super().__init__(message, hint=hint)
        self.changes: list[Change] = list(changes or [])
