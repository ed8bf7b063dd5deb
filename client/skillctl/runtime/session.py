"""One conversation's session over a SkillSet: its skills, its active skill, its tools.

    session = skills.session()          # the snapshot of the installed skills is taken here
    matches = session.begin(message)    # a user message: routed over the snapshot; depth from 0
    tools = session.tool_definitions("openai")
    text = session.handle_tool_call(name, arguments)   # never raises: errors come back as text
    transition = session.on_turn_end(had_tool_calls=False)   # next_skill, or None
    session.close()                     # stops its MCP servers; skills.session() starts anew

What the session sees is its :class:`~skillctl.runtime.snapshot.Snapshot` (a reload does not
change a running conversation); which skill is active and where it hands over is its
:class:`~skillctl.runtime.pipeline.Pipeline`.

A session starts with ``load_skill`` and ``read_skill_file`` (:mod:`skillctl.tools`), offered
while at least one of its skills is available. Loading a
skill makes it the active skill; one that declares an ``mcp`` server starts it
(:mod:`skillctl.runtime.mcp_clients`, from :mod:`skillctl.runtime.mcp_spec`) and adds its
tools, ``mcp:<skill>.<tool>``; so ask for ``tool_definitions()`` again after a ``load_skill``.
Only a command the user trusted as it is now starts (``skillctl mcp trust``,
:mod:`skillctl.runtime.mcp_trust`); otherwise the skill loads as instructions only and the
``load_skill`` result says why (``mcp.untrusted``, ``mcp.trust_changed``) and how to trust it. While the active skill has conditional next
skills, ``skill_transition`` is offered too; with ``SkillSet(manage_skills=True)``,
``skill_management`` (:mod:`skillctl.runtime.management`). A skill's trusted toolsets
(:mod:`skillctl.runtime.toolsets`) add ``toolset:<skill>.<method>`` tools when it is loaded.
Provider APIs accept only ``[A-Za-z0-9_-]`` in tool names, so those tools go out as
``mcp__<skill>__<tool>`` and ``toolset__<skill>__<method>``; ``handle_tool_call`` takes either form.

The tool policy (:mod:`skillctl.runtime.policy`) decides what is offered and what runs: a
refused tool is not in ``tool_definitions()`` and its call answers ``tool.not_allowed``.
Loading a skill that declares ``allowed-tools`` narrows the policy for the rest of the session.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from skillctl import tools
from skillctl.errors import SkillctlError
from skillctl.reporting import Reporter
from skillctl.runtime.management import MANAGEMENT_TOOL, SkillManagement
from skillctl.runtime.management import SPEC as MANAGEMENT_SPEC
from skillctl.runtime.pipeline import TRANSITION_TOOL, Pipeline, Transition
from skillctl.runtime.policy import ToolPolicy
from skillctl.runtime.snapshot import PinnedSkills, Snapshot
from skillctl.runtime.toolsets import Toolsets

UNTRUSTED_CODES = ("mcp.untrusted", "mcp.trust_changed")  # the user has not consented to the command
WIRE_NAME_MAX = 64  # the OpenAI limit on function names (Anthropic allows more)
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def wire_name(qualified: str) -> str:
    """``mcp:notes.search`` -> ``mcp__notes__search`` (``toolset:calc.add`` -> ``toolset__calc__add``):
    a name every provider accepts, unique per qualified name (a short digest is added when
    characters had to be replaced or cut)."""
    kind, _, rest = qualified.partition(":")
    skill, _, tool = rest.partition(".")
    name = f"{kind}__{skill}__{tool}"
    safe = _UNSAFE.sub("_", name)
    if safe == name and len(name) <= WIRE_NAME_MAX:
        return name
    digest = hashlib.sha256(qualified.encode()).hexdigest()[:8]
    return f"{safe[: WIRE_NAME_MAX - 9]}_{digest}"


class Session:
    """Tool definitions, tool calls and the pipeline of one conversation over a SkillSet."""

    def __init__(
        self,
        skills,
        *,
        policy: ToolPolicy | None = None,
        mcp_call_timeout: float | None = None,
        reporter: Reporter | None = None,
        manage: bool = False,
        approve=None,
        snapshot: Snapshot | None = None,
    ) -> None:
        self.skills = skills
        # Taken now, or a saved one (SkillSet.resume): the skills this conversation may use.
        self._snapshot = snapshot or Snapshot.of(skills.index, skills.roots)
        self._followed = skills.index  # the index follow() last took the skills from
        self.pinned = PinnedSkills(skills, self._snapshot)
        self.policy = policy or ToolPolicy()
        self.reporter = reporter or Reporter()
        self.mcp_call_timeout = mcp_call_timeout
        self.loaded: list[str] = []
        self.pipeline = Pipeline(
            manifest=self._manifest, refusal=self._refusal, activate=self.load_skill, reporter=self.reporter
        )
        self.toolsets = Toolsets.for_session(skills.config, reporter=self.reporter)
        self.management = SkillManagement(skills, approve=approve, changed=self.enabling_changed) if manage else None
        self.closed = False
        self._mcp: Any = None  # McpClients, created by the first skill that has a server
        self._router: Any = None  # over the snapshot's offered skills; dropped when enabling changes
        self._lock = threading.Lock()
        if snapshot is not None:
            self._restore(snapshot)

    @property
    def snapshot(self) -> Snapshot:
        """The skills this session started with, and which it loaded and made active so far
        (``session.snapshot().save(path)``; :meth:`SkillSet.resume` continues from the file)."""
        return replace(self._snapshot, loaded=tuple(self.loaded), active=self.pipeline.active)

    def _restore(self, saved: Snapshot) -> None:
        """Load again what the saved session had loaded (an MCP server starts only if still
        trusted; a skill changed since is refused, ``session.skill_changed``)."""
        for name in saved.loaded:
            try:
                self.load_skill(name)
            except SkillctlError as err:
                self.reporter.warn(f"{name}: not loaded again ({err.message}) [{err.code}]")
        if saved.active in self.loaded:
            self.pipeline.active = saved.active

    # --- the conversation ---------------------------------------------------------------------

    def begin(self, message: str, *, history: Sequence[str] = ()) -> list:
        """A user message: the pipeline's depth counts from zero; the skills it needs (routed over
        the snapshot, at most 3, best first; the active skill stays until another is loaded)."""
        self.pipeline.begin()
        return self.route(message, history=history)

    def route(self, message: str, *, history: Sequence[str] = ()) -> list:
        from skillctl.routing import state

        if self._router is None:
            offered = [e for e in self._snapshot.entries if not self.skills.why_not_offered(e)]
            self._router = self.skills.router_over(offered)
        return self._router.route(message, history=history, recent=state.recent_skills())

    @property
    def active_skill(self) -> str | None:
        """The skill whose instructions the conversation got last (load, activate, transition)."""
        return self.pipeline.active

    def activate(self, name: str) -> str:
        """Make ``name`` the active skill (as a ``load_skill`` call does); its instructions."""
        return self.load_skill(name)

    def on_turn_end(self, had_tool_calls: bool) -> Transition | None:
        """The model's turn ended: the active skill's ``next_skill`` transition, or None (no
        next skill, tool calls pending, or refused: see ``refused`` and the Reporter)."""
        return self.pipeline.on_turn_end(had_tool_calls)

    @property
    def transitions(self) -> list[Transition]:
        """The transitions since the user's message."""
        return list(self.pipeline.transitions)

    @property
    def refused(self) -> list[SkillctlError]:
        """The automatic transitions refused since the user's message, each with its code."""
        return list(self.pipeline.refused)

    def _manifest(self, name: str):
        return tools.skill_named(self.pinned, name).manifest

    def _refusal(self, name: str) -> tuple[str, str] | None:
        entry = self._snapshot.entry(name)
        if entry is None:
            return "pipeline.unknown_skill", "no skill of that name was installed when this session started"
        if self.skills.ignore_gates:
            return None
        if not self.skills.enabled(entry):
            return "pipeline.skill_disabled", f"it is disabled (skillctl config set skills.{entry.key}.enabled true)"
        if why := self.skills.gate_failures(entry):
            return "pipeline.skill_gated", f"it cannot work on this machine: {why}"
        return None

    def enabling_changed(self) -> None:
        """Enabled skills changed (skill_management): route again over what is offered now."""
        self._router = None

    # --- what the model is offered -----------------------------------------------------------

    def tool_definitions(self, provider: str = "openai") -> list[dict]:
        """The tools the policy allows now: ours, skill_transition while the active skill has
        conditional next skills, then the MCP tools of loaded skills."""
        available = self.skills_available()
        specs = [spec for spec in tools.specs(skills_available=available) if self.policy.allows(spec["name"])]
        transition = self.pipeline.tool_spec()
        if transition is not None and self.policy.allows(TRANSITION_TOOL):
            specs.append(transition)
        if self.management is not None and self.policy.allows(MANAGEMENT_TOOL):
            specs.append(MANAGEMENT_SPEC)
        for tool, kind in [*((t, "MCP") for t in self.mcp_tools()), *((t, "toolset") for t in self.toolsets.tools())]:
            if not self.policy.allows(tool.qualified):
                continue
            specs.append(
                {
                    "name": wire_name(tool.qualified),
                    "description": f"[{tool.skill} skill, {kind}] {tool.description}".strip(),
                    "parameters": tool.input_schema or {"type": "object", "properties": {}},
                }
            )
        return tools.tool_definitions(provider, specs)

    def skills_available(self) -> bool:
        """Is any skill of the snapshot offered (enabled, able to work here)? Without one, the
        bridge tools load_skill and read_skill_file are not offered (seed 001)."""
        return any(not self.skills.why_not_offered(e) for e in self.snapshot.entries)

    def mcp_tools(self) -> list:
        return self._mcp.tools() if self._mcp is not None else []

    # --- calls -------------------------------------------------------------------------------

    def handle_tool_call(self, tool: str, arguments: dict | str) -> str:
        """Run one call; every failure comes back as text with a stable code, never raised."""
        try:
            return self.call(tool, arguments)
        except (SkillctlError, *tools.BAD_CALL_ERRORS) as err:
            return tools.error_reply(err)

    def call(self, tool: str, arguments: dict | str) -> str:
        """Run one call; a failure raises SkillctlError (with its code) or a tools.BAD_CALL_ERRORS."""
        args = tools.parse_arguments(arguments)
        name = self._qualified(tool)
        self.policy.check(name)
        if name.startswith("mcp:"):
            skill, _, mcp_tool = name[len("mcp:") :].partition(".")
            if self._mcp is None:
                raise SkillctlError(f"unknown tool {tool!r}", hint="Load the skill first.", code="tool.unknown")
            return self._mcp.call(skill, mcp_tool, args)
        if name.startswith("toolset:"):
            return self.toolsets.call(name, args)
        if name == "load_skill":
            return self.load_skill(str(args.get("name") or ""))
        if name == TRANSITION_TOOL:
            return self.pipeline.call(args)
        if name == MANAGEMENT_TOOL and self.management is not None:
            return self.management.call(args)
        return tools.call_tool(self.pinned, name, args)

    def follow(self) -> bool:
        """Take the SkillSet's skills as they are now, for a session that follows installs and
        removals (``skillctl mcp``: its conversation is the agent's whole run); True when they
        changed. The MCP servers of skills that are gone stop; the others keep running."""
        index = self.skills.index
        if index is self._followed:
            return False
        self._followed, self._snapshot = index, Snapshot.of(index, self.skills.roots)
        self.pinned, self._router = PinnedSkills(self.skills, self._snapshot), None
        with self._lock:
            gone = [name for name in self.loaded if self._snapshot.entry(name) is None]
            self.loaded = [name for name in self.loaded if name not in gone]
        for name in gone:
            if self._mcp is not None:
                self._mcp.stop(name)
        return True

    def load_skill(self, name: Any) -> str:
        """The skill's instructions; it becomes the active skill; its MCP server, if it has one
        and the user trusted its command, is started and its tools named."""
        text = tools.load_skill(self.pinned, name)
        skill = tools.skill_named(self.pinned, name)
        with self._lock:
            if skill.name not in self.loaded:
                self.loaded.append(skill.name)
            self.policy = self.policy.tightened(skill.name, skill.manifest.allowed_tools)
        self.pipeline.active = skill.name
        if skill.manifest.mcp is not None:
            text += "\n\n" + self._start_server(skill)
        if skill.manifest.toolsets:
            text += "\n\n" + self._load_toolsets(skill)
        return text

    def _load_toolsets(self, skill) -> str:
        if not self.policy.allows_toolsets(skill.name):
            return (
                "(This skill's toolsets are not loaded: the tool policy allows none of their tools [tool.not_allowed].)"
            )
        problems = self.toolsets.load(skill)
        mine = [t for t in self.toolsets.tools() if t.skill == skill.name and self.policy.allows(t.qualified)]
        names = ", ".join(wire_name(t.qualified) for t in mine) or "none allowed here"
        return "\n".join([f"This skill's toolsets give these tools: {names}.", *(f"({p})" for p in problems)])

    def _start_server(self, skill) -> str:
        from skillctl.runtime import mcp_clients, mcp_spec

        if not self.policy.allows_server(skill.name):
            return (
                "(This skill's MCP server is not started: the tool policy allows none of its tools [tool.not_allowed].)"
            )
        try:
            spec = mcp_spec.server_spec(skill, config=self.skills.config)
            with self._lock:
                if self._mcp is None:
                    timeout = self.mcp_call_timeout or mcp_clients.CALL_TIMEOUT_S
                    self._mcp = mcp_clients.McpClients(call_timeout=timeout)
            started = self._mcp.start(spec)
        except SkillctlError as err:
            hint = f" {err.hint}" if err.hint else ""
            if err.code in UNTRUSTED_CODES:
                self.reporter.warn(f"{err.message} [{err.code}]")
            return f"(This skill's MCP server is not available: {err.message} [{err.code}].{hint})"
        for warning in spec.warnings:
            self.reporter.warn(warning)
        names = (
            ", ".join(wire_name(t.qualified) for t in started if self.policy.allows(t.qualified)) or "none allowed here"
        )
        return "\n".join(
            [f"This skill's MCP server is running. Its tools: {names}.", *(f"({w})" for w in spec.warnings)]
        )

    def _qualified(self, tool: str) -> str:
        """The ``mcp:``/``toolset:<skill>.<tool>`` form of a wire name the session gave out; others as they are."""
        if isinstance(tool, str) and tool.startswith(("mcp__", "toolset__")):
            for known in [*self.mcp_tools(), *self.toolsets.tools()]:
                if wire_name(known.qualified) == tool:
                    return known.qualified
        if not isinstance(tool, str):
            raise TypeError("the tool name must be a string")
        return tool

    def close(self) -> None:
        """End the session: stop its MCP servers (SkillSet.close, or leaving a ``with`` block)."""
        self.closed = True
        with self._lock:
            clients, self._mcp = self._mcp, None
        if clients is not None:
            clients.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
