"""``skillctl mcp``: the installed skills served to any MCP client, over stdio or streamable HTTP.

Tools: ``find_skills(query)`` (routing with its reasons; the nearest skills when nothing
matches), ``load_skill(name)``, ``read_skill_file(name, path)`` (the handlers of
:mod:`skillctl.tools`, so the same paths are refused with the same codes) and
``run_skill(name, input)`` (the sandbox of ``skillctl run``; the network only by the skill's
config consent, never because the caller asks). Resources: each skill's SKILL.md as
``skill://<name>/SKILL.md``. Errors are tool errors whose text is the JSON of
:func:`skillctl.tools.error_reply` (a stable ``error`` code, a message, a hint).

The tools offered follow the tool policy of the config (``[tools]``, ``[agents.<name>.tools]``
with ``--agent``): a tool the policy refuses is not listed at all. ``load_skill`` and
``read_skill_file`` are listed only while a skill is available (seed 001). Loading a skill that
declares its own MCP server starts it, as :class:`~skillctl.runtime.session.Session` does (only
a command the user trusted: ``skillctl mcp trust``; otherwise the load result says how), and its
tools join the list as ``mcp__<skill>__<tool>`` with ``notifications/tools/list_changed``; they
stop when idle and start again on the next call. The protocol edge (capabilities, answers to
faulty messages, change notifications) is :mod:`skillctl.runtime.mcp_protocol`.
"""

import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skillctl import __version__
from skillctl.runtime.mcp_protocol import RESOURCE_NOT_FOUND, Notifier, changes_options, serve_http, serve_stdio
from skillctl.runtime.sdk import require_mcp

SERVER_NAME = "skillyard"
RESOURCE_URI = "skill://{name}/SKILL.md"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
BRIDGE_TOOLS = ("load_skill", "read_skill_file")  # listed only while a skill is available (seed 001)
EMPTY_SCHEMA: dict = {"type": "object", "properties": {}}
FIND_SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "The user's request, in their words."}},
    "required": ["query"],
}
RUN_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The skill's name."},
        "input": {"description": "Any JSON value: the skill reads it from SKILL_INPUT."},
    },
    "required": ["name"],
}
INSTRUCTIONS = (
    "Skills are folders of instructions for specific tasks. Call find_skills with the user's "
    "request, then load_skill on the best match and follow its instructions; read_skill_file "
    "reads a file the instructions mention and run_skill runs the skill's own code in a sandbox."
)


class SkillTools:
    """The four tools over one SkillSet, as plain blocking functions (run off the event loop).

    One lock serialises use of the SkillSet: its caches are built lazily and it is not meant
    to be shared between threads. A sandboxed run holds it only while its request is built.
    """

    def __init__(self, skills, *, config=None, backend: str = "auto") -> None:
        self.skills = skills
        self.config = config
        self.backend = backend
        self._lock = threading.Lock()

    def find_skills(self, query: str) -> dict:
        with self._lock:
            matches = self.skills.route(query)
            found = [{**m.to_dict(), "description": self._description(m.name)} for m in matches]
            nearest = [] if found else self.skills.nearest(query)
        return {"query": query, "skills": found, **({"nearest": nearest} if not found else {})}

    def load_skill(self, name: str) -> str:
        """The instructions; a trusted MCP server of the skill starts (the session's rules)."""
        with self._lock:
            return self._session().call("load_skill", {"name": name})

    def call_skill_tool(self, name: str, arguments: dict) -> str:
        """A loaded skill's own MCP tool, by the name :meth:`skill_tools` listed."""
        with self._lock:
            session = self._session()
        return session.call(name, arguments)  # unlocked: a server may take its time

    def skill_tools(self) -> list[tuple[str, str, dict]]:
        """(wire name, description, input schema) of the loaded skills' MCP tools the policy allows."""
        from skillctl.runtime.session import wire_name

        with self._lock:
            session = self._session()
            mine = [t for t in session.mcp_tools() if session.policy.allows(t.qualified)]
        return [
            (wire_name(t.qualified), f"[{t.skill} skill, MCP] {t.description}".strip(), t.input_schema or EMPTY_SCHEMA)
            for t in mine
        ]

    def skills_available(self) -> bool:
        return bool(self.skills.offered())

    def _session(self):
        """The SkillSet's session, following the skills the watcher found since the last call."""
        session = self.skills.session()
        session.follow()
        return session

    def read_skill_file(self, name: str, path: str) -> str:
        from skillctl import tools

        with self._lock:
            return tools.read_skill_file(self.skills, name, path)

    def run_skill(self, name: str, input: Any = None) -> dict:
        from skillctl.sandbox import run_skill
        from skillctl.sandbox.request import request_for, skill_env
        from skillctl.tools import skill_named

        with self._lock:
            folder = Path(skill_named(self.skills, name).path)
            env, mask = skill_env(folder, self.config)
            # No allow_network here: only the user's per-skill config can consent to the network.
            request = request_for(folder, config=self.config, input=input, backend=self.backend, env=env)
        result = run_skill(request)
        result.stdout, result.stderr = mask(result.stdout), mask(result.stderr)
        return result.to_dict()

    def skill_md(self, uri: str) -> str | None:
        """The SKILL.md text a ``skill://NAME/SKILL.md`` URI names, or None (no such skill now)."""
        prefix, _, rest = uri.partition("://")
        name, _, file = rest.partition("/")
        entry = self.skills.entry(name) if prefix == "skill" and file == "SKILL.md" else None
        if entry is None or self.skills.why_not_offered(entry) or (skill := self.skills.get(name)) is None:
            return None  # unavailable here (gates, a required variable without value): not offered
        try:
            text = (Path(entry.path) / "SKILL.md").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None  # removed since the index was read
        from skillctl.vars import render_for_model

        return render_for_model(text, skill.manifest, Path(entry.path), config=self.config)

    def _description(self, name: str) -> str:
        entry = self.skills.entry(name)
        return entry.manifest.description if entry else ""


def build_server(
    tools: SkillTools,
    *,
    allows: Callable[[str], bool] = lambda name: True,
    log_level: str = "WARNING",
    notifier: Notifier | None = None,
):
    """The MCP server (the SDK's low-level ``Server``) offering the tools ``allows`` lets through.

    Tools and resources are read from the SkillSet at each request, so a server whose SkillSet
    watches its folders (``skillctl mcp`` does) lists skills installed after it started."""
    require_mcp()
    import anyio.to_thread
    from mcp import MCPError
    from mcp.server import Server
    from mcp_types import (
        INVALID_PARAMS,
        ListResourcesResult,
        ListToolsResult,
        ReadResourceResult,
        Resource,
        TextResourceContents,
        Tool,
    )

    logging.getLogger("mcp").setLevel(log_level)
    notifier = notifier or Notifier()
    base = {name: (fn, description, schema) for name, fn, description, schema in _tool_functions(tools)}

    def listed() -> dict[str, tuple[str, dict]]:
        available = tools.skills_available()
        names = [n for n in base if allows(n) and (available or n not in BRIDGE_TOOLS)]
        found = {n: (base[n][1], base[n][2]) for n in names}
        return {**found, **{n: (d, s) for n, d, s in tools.skill_tools()}}

    async def list_tools(ctx, params) -> ListToolsResult:
        notifier.seen(ctx.session)
        now = await anyio.to_thread.run_sync(listed)
        return ListToolsResult(tools=[Tool(name=n, description=d, input_schema=s) for n, (d, s) in now.items()])

    async def call_tool(ctx, params):
        notifier.seen(ctx.session)
        name, arguments = params.name, dict(params.arguments or {})
        before = await anyio.to_thread.run_sync(listed)
        if name not in before:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        if name in base:
            result = await base[name][0](arguments)
        else:
            result = await _call(tools.call_skill_tool, name, arguments)
        if name == "load_skill" and list(await anyio.to_thread.run_sync(listed)) != list(before):
            await ctx.session.send_tool_list_changed()
        return result

    async def list_resources(ctx, params) -> ListResourcesResult:
        notifier.seen(ctx.session)
        offered = await anyio.to_thread.run_sync(tools.skills.offered)
        return ListResourcesResult(
            resources=[
                Resource(
                    uri=RESOURCE_URI.format(name=e.name),
                    name=e.name,
                    description=e.manifest.description,
                    mime_type="text/markdown",
                )
                for e in offered
            ]
        )

    async def read_resource(ctx, params) -> ReadResourceResult:
        text = await anyio.to_thread.run_sync(tools.skill_md, str(params.uri))
        if text is None:
            raise MCPError(
                code=RESOURCE_NOT_FOUND, message=f"Resource not found: {params.uri}", data={"uri": str(params.uri)}
            )
        return ReadResourceResult(contents=[TextResourceContents(uri=params.uri, text=text, mime_type="text/markdown")])

    async def get_prompt(ctx, params):
        raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt: {params.name} (this server has no prompts)")

    class SkillsServer(Server):
        def create_initialization_options(self, notification_options=None, *args, **kwargs):
            return super().create_initialization_options(notification_options or changes_options(), *args, **kwargs)

    return SkillsServer(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_get_prompt=get_prompt,
    )


def _tool_functions(tools: SkillTools) -> list[tuple[str, Callable, str, dict]]:
    """(name, async handler of the arguments, description, input schema) of the four tools."""
    from skillctl import tools as bridge

    schemas = {spec["name"]: spec["parameters"] for spec in bridge.specs()}

    # Each runs in a worker thread; a missing or non-string argument is a TypeError there, which
    # _call answers as tool.bad_call.
    async def find_skills(args: dict):
        return await _call(lambda: tools.find_skills(_text(args, "query")))

    async def load_skill(args: dict):
        return await _call(lambda: tools.load_skill(_text(args, "name")))

    async def read_skill_file(args: dict):
        return await _call(lambda: tools.read_skill_file(_text(args, "name"), _text(args, "path")))

    async def run_skill(args: dict):
        def run():
            return tools.run_skill(_text(args, "name"), args.get("input"))

        return await _call(run, failed=lambda result: result["status"] != "ok")

    return [
        (
            "find_skills",
            find_skills,
            "Find the installed skills for a request: the best matches with the "
            "reasons they match, or the nearest skills and what stopped them when none fits.",
            FIND_SCHEMA,
        ),
        (
            "load_skill",
            load_skill,
            "Load the full instructions of a skill by name. Call it before doing a task the skill covers.",
            schemas["load_skill"],
        ),
        (
            "read_skill_file",
            read_skill_file,
            "Read a file inside a skill's folder (a script, reference or "
            "asset its instructions mention), by a path relative to the skill folder.",
            schemas["read_skill_file"],
        ),
        (
            "run_skill",
            run_skill,
            "Run a skill's code in a sandbox with a JSON input; returns its status, "
            "exit code, output and the files it wrote. No network unless the user allowed it for the skill.",
            RUN_SCHEMA,
        ),
    ]


def _text(args: dict, key: str) -> str:
    """A string argument; TypeError (tool.bad_call) when it is missing or not a string."""
    value = args.get(key)
    if not isinstance(value, str):
        raise TypeError(f"{key!r} must be a string")
    return value


async def _call(fn: Callable, *args, failed: Callable[[Any], bool] = lambda value: False):
    """Run a blocking tool in a worker thread. Text comes back as text, a dict as JSON (and as
    structured content); a SkillctlError is a tool error whose text is its JSON (code, message,
    hint), the same text SkillSet.handle_tool_call gives."""
    import anyio.to_thread
    from mcp_types import CallToolResult, TextContent

    from skillctl import tools
    from skillctl.errors import SkillctlError

    try:
        value = await anyio.to_thread.run_sync(fn, *args)
    except (SkillctlError, *tools.BAD_CALL_ERRORS) as err:
        return CallToolResult(content=[TextContent(type="text", text=tools.error_reply(err))], is_error=True)
    if isinstance(value, str):
        return CallToolResult(content=[TextContent(type="text", text=value)])
    text = json.dumps(value, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=value, is_error=failed(value)
    )


def serve(app, *, port: int | None = None, host: str = "127.0.0.1", log_level: str = "WARNING") -> None:
    """Serve until the client goes away (stdio) or the process is stopped (HTTP)."""
    import anyio

    if port is None:
        anyio.run(serve_stdio, app)
    else:
        serve_http(app, host=host, port=port, log_level=log_level)
