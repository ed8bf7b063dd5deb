"""``skillctl mcp`` offers a loaded skill's own MCP tools (issue 36 item 8), driven by the
official SDK's client over stdio: tools/list_changed after load_skill, calls go through, the
server stops when idle and starts again; an untrusted command never starts. The skill's server
is written as seed 003 does: ``command`` one string with its arguments (item 9)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from tests.client.runtime.conftest import config_toml, pid_alive, wait_until, write_skill

mcp = pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402

ECHO_SERVER = """\
import os
from pathlib import Path

Path(os.environ["PID_FILE"]).write_text(str(os.getpid()))
from mcp.server.mcpserver import MCPServer

app = MCPServer("echoer")


@app.tool()
def echo(text: str) -> str:
    \"\"\"Echo the text back.\"\"\"
    return "echo:" + text


app.run()
"""


def echo_skill(root: Path, pid_file: Path) -> Path:
    skill_md = "\n".join(
        [
            "---",
            "name: echoer",
            "description: Echo words back through the skill's own MCP server.",
            "vars:",
            "  ECHO_PID_FILE:",
            "    description: where the server writes its pid",
            "mcp:",
            f"  command: {json.dumps(sys.executable + ' server.py')}",
            "  env: {PID_FILE: '${ECHO_PID_FILE}'}",
            "  startup_timeout: 30s",
            "  idle_timeout: 1s",
            "---",
            "Use the echo tool.",
            "",
        ]
    )
    folder = write_skill(root / "echoer", skill_md, {"server.py": ECHO_SERVER})
    (folder / "vars.json").write_text(json.dumps({"ECHO_PID_FILE": str(pid_file)}))
    return folder


def trust(home: Path, folder: Path) -> None:
    """What `skillctl mcp trust echoer --yes` writes."""
    from skillctl import discovery
    from skillctl.runtime.mcp_trust import server_command

    digest = server_command(discovery.load_installed("dir", folder)).digest
    config_toml(home, f'[runtime]\ntrusted_mcp = [{{name = "echoer", digest = "{digest}"}}]\n')


async def session_run(project: Path, steps):
    seen: list[str] = []

    async def on_message(message) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if method:
            seen.append(method)

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "skillctl", "mcp"], env=dict(os.environ), cwd=str(project)
    )
    async with Client(params, mode="legacy", read_timeout_seconds=60, message_handler=on_message, cache=None) as client:
        return await steps(client, seen)


async def names(client) -> list[str]:
    return sorted(t.name for t in (await client.list_tools()).tools)


def test_a_trusted_skills_own_tools_are_listed_after_load_skill_and_called(project, home, tmp_path):
    pid_file = tmp_path / "echo.pid"
    trust(home, echo_skill(project / ".agents" / "skills", pid_file))

    async def steps(client, seen):
        before = await names(client)
        loaded = (await client.call_tool("load_skill", {"name": "echoer"})).content[0].text
        with anyio.fail_after(10):
            while "notifications/tools/list_changed" not in seen:
                await anyio.sleep(0.05)
        after = await names(client)
        first = await client.call_tool("mcp__echoer__echo", {"text": "hi"})
        pid = int(pid_file.read_text())
        await anyio.to_thread.run_sync(lambda: wait_until(lambda: not pid_alive(pid), what="the idle stop"))
        again = await client.call_tool("mcp__echoer__echo", {"text": "again"})
        return before, loaded, after, first, pid, again

    before, loaded, after, first, pid, again = anyio.run(session_run, project, steps)
    assert "mcp__echoer__echo" not in before
    assert "Use the echo tool." in loaded and "mcp__echoer__echo" in loaded
    assert after == sorted([*before, "mcp__echoer__echo"])
    assert (first.is_error, first.content[0].text) == (False, "echo:hi")
    assert (again.is_error, again.content[0].text) == (False, "echo:again")
    assert int(pid_file.read_text()) != pid  # started again after the idle stop


def test_an_untrusted_skills_server_never_starts_and_the_load_says_how_to_trust_it(project, home, tmp_path):
    pid_file = tmp_path / "echo.pid"
    echo_skill(project / ".agents" / "skills", pid_file)

    async def steps(client, seen):
        loaded = (await client.call_tool("load_skill", {"name": "echoer"})).content[0].text
        return loaded, await names(client), seen

    loaded, listed, seen = anyio.run(session_run, project, steps)
    assert "Use the echo tool." in loaded
    assert "[mcp.untrusted]" in loaded and "skillctl mcp trust echoer" in loaded
    assert not any(name.startswith("mcp__") for name in listed)
    assert "notifications/tools/list_changed" not in seen
    assert not pid_file.exists()
