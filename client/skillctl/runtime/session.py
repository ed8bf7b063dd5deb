"""The tools of one SkillSet session: what the model is offered, and each call it makes.

A session starts with ``load_skill`` and ``read_skill_file`` (:mod:`skillctl.tools`). Loading a
skill that declares an ``mcp`` server starts it (:mod:`skillctl.runtime.mcp_clients`) and adds
its tools, ``mcp:<skill>.<tool>``; so ask for ``tool_definitions()`` again after a
``load_skill``. Provider APIs accept only ``[A-Za-z0-9_-]`` in tool names, so those tools go
out as ``mcp__<skill>__<tool>``; ``handle_tool_call`` takes either form.

The tool policy (:mod:`skillctl.runtime.policy`) decides what is offered and what runs: a
refused tool is not in ``tool_definitions()`` and its call answers ``tool.not_allowed``.
Loading a skill that declares ``allowed-tools`` narrows the policy for the rest of the session.
"""

from __future__ import annotations

import hashlib
import re
import threading
from typing import TYPE_CHECKING

from skillctl import tools
from skillctl.errors import SkillctlError
from skillctl.runtime.policy import ToolPolicy

if TYPE_CHECKING:
    from skillctl.runtime import mcp_clients

WIRE_NAME_MAX = 64  # the OpenAI limit on function names (Anthropic allows more)
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def wire_name(qualified: str) -> str:
    """``mcp:notes.search`` -> ``mcp__notes__search``: a name every provider accepts, unique
    per qualified name (a short digest is added when characters had to be replaced or cut)."""
    skill, _, tool = qualified[len("mcp:") :].partition(".")
    name = f"mcp__{skill}__{tool}"
    safe = _UNSAFE.sub("_", name)
    if safe == name and len(name) <= WIRE_NAME_MAX:
        return name
    digest = hashlib.sha256(qualified.encode()).hexdigest()[:8]
    return f"{safe[: WIRE_NAME_MAX - 9]}_{digest}"


class Session:
    """Tool definitions and tool calls of one SkillSet, with the MCP servers of loaded skills."""

    def __init__(self, skills, *, policy: ToolPolicy | None = None, mcp_call_timeout: float | None = None) -> None:
        self.skills = skills
        self.policy = policy or ToolPolicy()
        self.mcp_call_timeout = mcp_call_timeout
        self.loaded: list[str] = []
        self._mcp: mcp_clients.McpClients | None = None  # created by the first skill that has a server
        self._lock = threading.Lock()

    # --- what the model is offered -----------------------------------------------------------

    def tool_definitions(self, provider: str = "openai") -> list[dict]:
        """The tools the policy allows now: ours, then the MCP tools of loaded skills."""
        specs = [spec for spec in tools.specs() if self.policy.allows(spec["name"])]
        for tool in self.mcp_tools():
            if not self.policy.allows(tool.qualified):
                continue
            specs.append(
                {
                    "name": wire_name(tool.qualified),
                    "description": f"[{tool.skill} skill, MCP] {tool.description}".strip(),
                    "parameters": tool.input_schema or {"type": "object", "properties": {}},
                }
            )
        return tools.tool_definitions(provider, specs)

    def mcp_tools(self) -> list:
        return self._mcp.tools() if self._mcp is not None else []

    # --- calls -------------------------------------------------------------------------------

    def handle_tool_call(self, tool: str, arguments: dict | str) -> str:
        """Run one call; every failure comes back as text with a stable code, never raised."""
        try:
            args = tools.parse_arguments(arguments)
            name = self._qualified(tool)
            self.policy.check(name)
            if name.startswith("mcp:"):
                skill, _, mcp_tool = name[len("mcp:") :].partition(".")
                if self._mcp is None:
                    raise SkillctlError(f"unknown tool {tool!r}", hint="Load the skill first.", code="tool.unknown")
                return self._mcp.call(skill, mcp_tool, args)
            if name == "load_skill":
                return self.load_skill(str(args.get("name") or ""))
            return tools.handle_tool_call(self.skills, name, args)
        except (SkillctlError, *tools.BAD_CALL_ERRORS) as err:
            return tools.error_reply(err)

    def load_skill(self, name: str) -> str:
        """The skill's instructions; its MCP server, if it has one, is started and its tools named."""
        text = tools.load_skill(self.skills, name)
        skill = tools.skill_named(self.skills, name)
        with self._lock:
            if skill.name not in self.loaded:
                self.loaded.append(skill.name)
            self.policy = self.policy.tightened(skill.name, skill.manifest.allowed_tools)
        if skill.manifest.mcp is not None:
            text += "\n\n" + self._start_server(skill)
        return text

    def _start_server(self, skill) -> str:
        from skillctl.runtime import mcp_clients

        if not self.policy.allows_server(skill.name):
            return (
                "(This skill's MCP server is not started: the tool policy allows none of its tools [tool.not_allowed].)"
            )
        try:
            spec = mcp_clients.server_spec(skill, config=self.skills.config)
            with self._lock:
                if self._mcp is None:
                    timeout = self.mcp_call_timeout or mcp_clients.CALL_TIMEOUT_S
                    self._mcp = mcp_clients.McpClients(call_timeout=timeout)
            started = self._mcp.start(spec)
        except SkillctlError as err:
            hint = f" {err.hint}" if err.hint else ""
            return f"(This skill's MCP server is not available: {err.message} [{err.code}].{hint})"
        names = (
            ", ".join(wire_name(t.qualified) for t in started if self.policy.allows(t.qualified)) or "none allowed here"
        )
        return f"This skill's MCP server is running. Its tools: {names}."

    def _qualified(self, tool: str) -> str:
        """The ``mcp:<skill>.<tool>`` form of a wire name the session gave out; others as they are."""
        if isinstance(tool, str) and tool.startswith("mcp__"):
            for known in self.mcp_tools():
                if wire_name(known.qualified) == tool:
                    return known.qualified
        if not isinstance(tool, str):
            raise TypeError("the tool name must be a string")
        return tool

    def close(self) -> None:
        """Stop the MCP servers of this session (SkillSet.close, or leaving ``with SkillSet...``)."""
        with self._lock:
            clients, self._mcp = self._mcp, None
        if clients is not None:
            clients.close()
