"""``skill_management``: the tool an agent uses to look after the installed skills.

Offered when the application asks for it (``SkillSet(manage_skills=True)``) and the tool policy
allows it (``group:management``; only the ``full`` profile has it). Actions:

- ``list``: the installed skills (now, not only those of the session), each with its version,
  description and whether it is offered here (and why not);
- ``show``: one skill's manifest: version, path, next skills, toolsets, MCP server, allowed tools;
- ``enable`` / ``disable``: write ``[skills.<key>] enabled`` in config.toml, the setting
  ``skillctl check`` reads and ``skillctl config set skills.NAME.enabled`` writes;
- ``install`` (what ``skillctl install`` takes: a registry name, a folder, a git URL, an archive),
  ``create`` (a new skill folder from a name, a description and instructions) and ``delete``
  (``skillctl uninstall`` of a skill in the project's or the user's skills folder, seed 003's
  ``delete_skill``; a workspace, bundled or extra folder is the user's to edit, never ours):
  they change what runs on the user's machine, so they happen only when the application's approval callback
  (``SkillSet(approve=callback)``, called with an :class:`ApprovalRequest`) returns True.
  Without a callback they are refused (``management.needs_approval``); a callback's no is
  ``management.declined``. Neither ever trusts a skill's MCP command: an installed skill's
  server starts only after the user runs ``skillctl mcp trust`` (:mod:`skillctl.runtime.mcp_trust`).

Answers are JSON. A running session keeps its snapshot: an installed or created skill is there
for the next session (``skills.session()`` after this one is closed).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from skillctl.errors import SkillctlError

MANAGEMENT_TOOL = "skill_management"
MAX_LISTED = 200  # a list the model reads in one go (~20 KB); more is cut, and says so


class Action(Enum):
    LIST = "list"
    SHOW = "show"
    ENABLE = "enable"
    DISABLE = "disable"
    INSTALL = "install"
    CREATE = "create"
    DELETE = "delete"


APPROVED_ACTIONS = (Action.INSTALL, Action.CREATE, Action.DELETE)  # changes to the installed code need a yes
INSTALL_SCOPES = ("project", "user")  # the discovery scopes skillctl installs into (discovery.SCOPES)


@dataclass(frozen=True)
class ApprovalRequest:
    """What the model asks to do, for the application to say yes or no to."""

    action: Action
    name: str  # the skill to create or delete; for install, what the source names (may be "")
    source: str  # install: the argument of `skillctl install`; create, delete: ""
    destination: str  # the skills folder it would go into (delete: the folder removed)
    description: str = ""  # create: the new skill's description
    instructions: str = ""  # create: the new skill's instructions (the body of SKILL.md)


Approve = Callable[[ApprovalRequest], bool]

SPEC = {
    "name": MANAGEMENT_TOOL,
    "description": "Manage the installed skills: list them, show one, enable or disable one, or ask to "
    "install, create or delete one (the user's application must approve those three). Answers are JSON.",
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": [a.value for a in Action]},
            "name": {"type": "string", "description": "The skill (show, enable, disable, create, delete)."},
            "source": {
                "type": "string",
                "description": "install: a registry skill NAME[@VERSION], a folder, a git URL or an archive.",
            },
            "description": {"type": "string", "description": "create: what the skill does and when to use it."},
            "instructions": {"type": "string", "description": "create: the skill's instructions, in markdown."},
        },
        "required": ["action"],
        "additionalProperties": False,
    },
}


class SkillManagement:
    """The ``skill_management`` tool over a SkillSet; ``changed`` is told when enabling changed."""

    def __init__(self, skills, *, approve: Approve | None = None, changed: Callable[[], None] = lambda: None) -> None:
        self.skills = skills
        self.approve = approve
        self.changed = changed

    def call(self, args: dict) -> str:
        action = Action(args.get("action"))  # ValueError for another action: tool.bad_call
        name = args.get("name")
        if action is Action.LIST:
            return _json(self._list())
        if action is Action.INSTALL:
            return _json(self._install(_text(args, "source")))
        if action is Action.CREATE:
            return _json(self._create(_text(args, "name"), _text(args, "description"), _text(args, "instructions")))
        if not isinstance(name, str) or not name:
            raise TypeError(f"{action.value} needs the skill's name")
        if action is Action.SHOW:
            return _json(self._show(name))
        if action is Action.DELETE:
            return _json(self._delete(name))
        self.skills.set_enabled(name, action is Action.ENABLE)
        self.changed()
        return _json({"name": name, "enabled": action is Action.ENABLE})

    def _list(self) -> dict:
        entries = self.skills.index.entries
        listed = [
            {
                "name": e.name,
                "version": e.version,
                "description": e.manifest.description,
                "enabled": self.skills.enabled(e),
                **_offered(self.skills, e),
            }
            for e in entries[:MAX_LISTED]
        ]
        return {"skills": listed, "total": len(entries), "truncated": len(entries) > MAX_LISTED}

    def _show(self, name: str) -> dict:
        from skillctl.tools import skill_named

        skill, entry = skill_named(self.skills, name), self.skills.entry(name)
        m = skill.manifest
        return {
            "name": skill.name,
            "version": m.version,
            "description": m.description,
            "path": str(skill.path),
            "scope": skill.scope,
            "enabled": self.skills.enabled(entry),
            **_offered(self.skills, entry),
            "next_skill": m.next_skill or None,
            "conditional_next_skills": [{"when": c.when, "skill": c.skill} for c in m.conditional_next_skills],
            "toolsets": m.toolsets,
            "mcp_server": m.mcp is not None,
            "allowed_tools": m.allowed_tools,
        }

    def _install(self, source: str) -> dict:
        from skillctl.installer import Operations

        scope = self._install_scope()
        self._require_approval(
            ApprovalRequest(Action.INSTALL, Path(source.rstrip("/")).name.split("@")[0], source, str(scope.skills_dir))
        )
        operations = Operations.for_scope(scope, config=self.skills.config, reporter=self.skills.reporter)
        changes = operations.install([source])
        self.skills.reload()
        return {"changes": [c.to_dict() for c in changes], "note": _NEXT_SESSION}

    def _create(self, name: str, description: str, instructions: str) -> dict:
        from skillctl.authoring import skill_create
        from skillctl.format.load import load_skill

        parent = self._create_folder()
        self._require_approval(ApprovalRequest(Action.CREATE, name, "", str(parent), description, instructions))
        target = skill_create(parent, name, description=description, body=instructions)
        report = load_skill(target)
        if not report.valid:
            import shutil

            shutil.rmtree(target, ignore_errors=True)
            problems = "; ".join(f"{f.code}: {f.message}" for f in report.errors)
            raise SkillctlError(
                f"the new skill {name!r} would not be valid ({problems}); nothing was kept",
                hint="Fix the description or instructions and create it again.",
                code="management.invalid_skill",
            )
        self.skills.reload()
        return {"created": name, "path": str(target), "note": _NEXT_SESSION}

    def _delete(self, name: str) -> dict:
        from skillctl.installer import Operations

        entry = self.skills.entry(name)
        if entry is None:
            raise SkillctlError(
                f"no skill named {name!r}", hint="`list` shows the installed skills.", code="tool.unknown_skill"
            )
        folder = Path(entry.path)
        scope = _installed_scope(entry.scope, folder)
        self._require_approval(ApprovalRequest(Action.DELETE, name, "", str(folder)))
        operations = Operations.for_scope(scope, config=self.skills.config, reporter=self.skills.reporter)
        changes = operations.uninstall([folder.name])
        self.skills.reload()
        return {"changes": [c.to_dict() for c in changes], "note": _DELETED}

    def _create_folder(self) -> Path:
        """Where ``create`` writes: the project's skills folder (or the first folder searched)."""
        roots = self.skills.roots
        return Path(next((root for scope, root in roots if scope in INSTALL_SCOPES), roots[0][1]))

    def _install_scope(self):
        from skillctl import paths
        from skillctl.installer.project import Scope

        for scope, root in self.skills.roots:
            if scope == "project":
                return Scope.project(Path(root).parents[len(paths.PROJECT_SKILLS.parts) - 1])
            if scope == "user":
                return Scope.user()
        raise SkillctlError(
            "these skills have no project or user skills folder to install into",
            hint="Install with `skillctl install` into a project or the user's skills.",
            code="management.no_scope",
        )

    def _require_approval(self, request: ApprovalRequest) -> None:
        if self.approve is None:
            raise SkillctlError(
                f"{request.action.value} needs the approval of the application running this agent, and it gives none",
                hint="Tell the user what you wanted to do; they can run `skillctl install` or `skillctl init` themselves.",
                code="management.needs_approval",
            )
        if not self.approve(request):
            raise SkillctlError(
                f"the {request.action.value} of {request.name or request.source!r} was declined",
                hint="Do not ask again for the same thing in this conversation.",
                code="management.declined",
            )


_NEXT_SESSION = "Skills installed or created now are available from the next session, not in this conversation."
_DELETED = "The skill is gone from the next session on; this conversation keeps the skills it started with."


def _installed_scope(scope: str, folder: Path):
    """The install scope whose skills folder holds ``folder``; ``management.not_removable`` for a
    folder skillctl does not install into (workspace, bundled, extra, ``.agent/skills``)."""
    from skillctl.installer.project import Scope

    found = None
    if scope == "user":
        found = Scope.user()
    elif scope == "project":
        found = Scope.project(folder.parents[2])
    if found is None or found.skills_dir.resolve() != folder.parent.resolve():
        raise SkillctlError(
            f"{folder.name!r} is in {folder.parent}, a {scope} folder skillctl does not install into",
            hint="Tell the user; they can remove the folder themselves.",
            code="management.not_removable",
        )
    return found


def _offered(skills, entry) -> dict:
    why = skills.why_not_offered(entry)
    return {"offered": not why, **({"not_offered_because": why} if why else {})}


def _text(args: dict, key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"{args.get('action')} needs {key!r} (a non-empty string)")
    return value


def _json(value: dict) -> str:
    return json.dumps(value, ensure_ascii=False)
