"""``skillctl mcp``: the installed skills served to any MCP client, over stdio or streamable HTTP.

Tools: ``find_skills(query)`` (routing with its reasons; the nearest skills when nothing
matches), ``load_skill(name)``, ``read_skill_file(name, path)`` (the handlers of
:mod:`skillctl.tools`, so the same paths are refused with the same codes) and
``run_skill(name, input)`` (the sandbox of ``skillctl run``; the network only by the skill's
config consent, never because the caller asks). Resources: each skill's SKILL.md as
``skill://<name>/SKILL.md``. Errors are tool errors whose text is the JSON of
:func:`skillctl.tools.error_reply` (a stable ``error`` code, a message, a hint).

The tools offered follow the tool policy of the config (``[tools]``, ``[agents.<name>.tools]``
with ``--agent``): a tool the policy refuses is not listed at all.
"""

# No `from __future__ import annotations`: the SDK reads the tools' signatures, whose types are
# imported lazily inside _tool_functions, so they must be evaluated where they are defined.
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from skillctl import __version__
from skillctl.runtime.sdk import require_mcp

SERVER_NAME = "skillyard"
RESOURCE_URI = "skill://{name}/SKILL.md"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
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
        from skillctl import tools

        with self._lock:
            return tools.load_skill(self.skills, name)

    def read_skill_file(self, name: str, path: str) -> str:
        from skillctl import tools

        with self._lock:
            return tools.read_skill_file(self.skills, name, path)

    def run_skill(self, name: str, input: Any = None) -> dict:
        from skillctl.sandbox import run_skill
        from skillctl.sandbox.request import request_for
        from skillctl.tools import skill_named

        with self._lock:
            folder = Path(skill_named(self.skills, name).path)
            # No allow_network here: only the user's per-skill config can consent to the network.
            request = request_for(folder, config=self.config, input=input, backend=self.backend)
        return run_skill(request).to_dict()

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


def build_server(tools: SkillTools, *, allows: Callable[[str], bool] = lambda name: True, log_level: str = "WARNING"):
    """The MCP server (the SDK's ``MCPServer``) offering the tools ``allows`` lets through.

    Resources are read from the SkillSet's index at each request, so a server whose SkillSet
    watches its folders (``skillctl mcp`` does) lists and reads skills installed after it started."""
    require_mcp()
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceNotFoundError
    from mcp_types import Resource

    class SkillsServer(MCPServer):
        async def list_resources(self) -> list[Resource]:
            return [
                Resource(
                    uri=RESOURCE_URI.format(name=entry.name),
                    name=entry.name,
                    description=entry.manifest.description,
                    mime_type="text/markdown",
                )
                for entry in tools.skills.offered()
            ]

        async def read_resource(self, uri, context=None):
            from mcp.server.lowlevel.helper_types import ReadResourceContents

            text = tools.skill_md(str(uri))
            if text is None:
                raise ResourceNotFoundError(f"no skill resource {uri}")
            return [ReadResourceContents(content=text, mime_type="text/markdown")]

    level: Any = log_level  # one of the logging level names
    app = SkillsServer(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, log_level=level)
    for name, fn, description in _tool_functions(tools):
        if allows(name):
            app.add_tool(fn, name=name, description=description)
    return app


def _tool_functions(tools: SkillTools) -> list[tuple[str, Callable, str]]:
    from mcp_types import CallToolResult
    from pydantic import Field

    async def find_skills(
        query: Annotated[str, Field(description="The user's request, in their words.")],
    ) -> CallToolResult:
        return await _call(tools.find_skills, query)

    async def load_skill(name: Annotated[str, Field(description="The skill's name.")]) -> CallToolResult:
        return await _call(tools.load_skill, name)

    async def read_skill_file(
        name: Annotated[str, Field(description="The skill's name.")],
        path: Annotated[str, Field(description="Relative path inside the skill, e.g. references/api.md.")],
    ) -> CallToolResult:
        return await _call(tools.read_skill_file, name, path)

    async def run_skill(
        name: Annotated[str, Field(description="The skill's name.")],
        input: Annotated[Any, Field(description="Any JSON value: the skill reads it from SKILL_INPUT.")] = None,
    ) -> CallToolResult:
        return await _call(tools.run_skill, name, input, failed=lambda result: result["status"] != "ok")

    return [
        (
            "find_skills",
            find_skills,
            "Find the installed skills for a request: the best matches with the "
            "reasons they match, or the nearest skills and what stopped them when none fits.",
        ),
        (
            "load_skill",
            load_skill,
            "Load the full instructions of a skill by name. Call it before doing a task the skill covers.",
        ),
        (
            "read_skill_file",
            read_skill_file,
            "Read a file inside a skill's folder (a script, reference or "
            "asset its instructions mention), by a path relative to the skill folder.",
        ),
        (
            "run_skill",
            run_skill,
            "Run a skill's code in a sandbox with a JSON input; returns its status, "
            "exit code, output and the files it wrote. No network unless the user allowed it for the skill.",
        ),
    ]


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


def serve(app, *, port: int | None = None, host: str = "127.0.0.1") -> None:
    """Serve until the client goes away (stdio) or the process is stopped (HTTP)."""
    if port is None:
        app.run("stdio")
    else:
        app.run("streamable-http", host=host, port=port)
