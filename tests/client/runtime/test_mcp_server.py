"""``skillctl mcp``, driven by the official SDK's own client over stdio and over HTTP."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from contextlib import asynccontextmanager

import anyio
import pytest

from tests.client.runtime.conftest import config_toml, skillctl_argv, wait_until, write_skill
from tests.conftest import docker_daemon_ok, free_port, require_service

mcp = pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402

TOOLS = ["find_skills", "load_skill", "read_skill_file", "run_skill"]


@pytest.fixture(scope="module")
def backend() -> str:
    """The sandbox run_skill uses: bubblewrap (quicker to start) or Docker."""
    from skillctl.sandbox.bwrap_backend import BwrapBackend

    if BwrapBackend().available():
        return "bwrap"
    require_service("a sandbox backend (bubblewrap or Docker)", docker_daemon_ok())
    return "docker"


@asynccontextmanager
async def stdio_session(project, backend):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillctl", "mcp", "--backend", backend],
        env=dict(os.environ),
        cwd=str(project),
    )
    # Legacy mode: the initialize handshake, as Claude Code and Cursor speak it.
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        yield client


@pytest.fixture
def http_server(project, backend):
    port = free_port()
    proc = subprocess.Popen(
        skillctl_argv("mcp", "--http", str(port), "--backend", backend),
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: proc.poll() is not None or _listening(port), timeout=20, what="skillctl mcp --http")
        assert proc.poll() is None, proc.stderr.read()
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@asynccontextmanager
async def http_session(url):
    async with Client(url, read_timeout_seconds=60) as client:
        yield client


async def exercise(client) -> dict:
    """Everything a client does with the server; returns what the test asserts on."""
    seen: dict = {}
    seen["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
    seen["resources"] = sorted(str(r.uri) for r in (await client.list_resources()).resources)
    seen["notes_md"] = (await client.read_resource("skill://notes/SKILL.md")).contents[0].text
    seen["found"] = (
        await client.call_tool("find_skills", {"query": "take notes of the meeting in markdown"})
    ).structured_content
    seen["none"] = (await client.call_tool("find_skills", {"query": "zzzz qqqq"})).structured_content
    seen["loaded"] = (await client.call_tool("load_skill", {"name": "notes"})).content[0].text
    seen["read"] = (
        (await client.call_tool("read_skill_file", {"name": "notes", "path": "references/guide.md"})).content[0].text
    )
    refused = []
    for path in ("../../../secret.txt", "/etc/passwd", "references/../../../secret.txt"):
        result = await client.call_tool("read_skill_file", {"name": "notes", "path": path})
        refused.append((result.is_error, json.loads(result.content[0].text)["error"]))
    seen["refused"] = refused
    unknown = await client.call_tool("load_skill", {"name": "nope"})
    seen["unknown"] = (unknown.is_error, json.loads(unknown.content[0].text)["error"])
    # The caller asks for the network: only the user's config may grant it.
    run = await client.call_tool("run_skill", {"name": "doubler", "input": {"n": 21}, "allow_network": True})
    seen["run"] = (run.is_error, run.structured_content)
    return seen


def check(seen: dict) -> None:
    assert seen["tools"] == TOOLS
    assert seen["resources"] == ["skill://doubler/SKILL.md", "skill://notes/SKILL.md"]
    assert seen["notes_md"].startswith("---\nname: notes")
    assert [s["name"] for s in seen["found"]["skills"]] == ["notes"]
    assert seen["found"]["skills"][0]["reasons"] and seen["found"]["skills"][0]["description"]
    assert seen["none"]["skills"] == [] and "nearest" in seen["none"]
    assert "Read references/guide.md before writing." in seen["loaded"]
    assert seen["read"] == "the guide\n"
    assert seen["refused"] == [(True, "tool.path_refused")] * 3
    assert seen["unknown"] == (True, "tool.unknown_skill")
    failed, result = seen["run"]
    assert not failed and result["status"] == "ok", result
    assert json.loads(result["stdout"]) == {"doubled": 42, "proxy": None}  # no network


def test_stdio_server_lists_finds_loads_reads_runs_and_refuses_traversal(project, backend):
    check(anyio.run(lambda: _with(stdio_session(project, backend))))


def test_http_server_on_loopback_does_the_same(http_server):
    check(anyio.run(lambda: _with(http_session(http_server))))


async def _with(session):
    async with session as client:
        return await exercise(client)


def test_run_skill_gets_the_network_only_by_the_skills_config_consent(project, home, backend):
    config_toml(home, "[skills.doubler]\nnetwork = true\n")

    async def run():
        async with stdio_session(project, backend) as client:
            return (await client.call_tool("run_skill", {"name": "doubler", "input": {"n": 1}})).structured_content

    result = anyio.run(run)
    assert result["status"] == "ok", result
    assert json.loads(result["stdout"])["proxy"]  # the egress proxy: the network, through its filter


def test_the_agents_tool_policy_decides_which_tools_are_listed(project, home, backend):
    config_toml(
        home,
        """
        [tools]
        deny = ["run_skill"]
        [agents.cursor.tools]
        profile = "minimal"
        deny = ["read_skill_file"]
        """,
    )

    async def listed(*extra):
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "skillctl", "mcp", *extra], env=dict(os.environ), cwd=str(project)
        )
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
            return sorted(t.name for t in (await client.list_tools()).tools)

    assert anyio.run(listed) == ["find_skills", "load_skill", "read_skill_file"]
    assert anyio.run(listed, "--agent", "cursor") == ["find_skills", "load_skill"]


def test_a_skill_installed_or_removed_while_the_server_runs_is_seen(project, backend):
    """Agents keep `skillctl mcp` running for a whole session: it watches the skill folders."""
    skills = project / ".agents" / "skills"

    async def run():
        async with stdio_session(project, backend) as client:

            async def state():
                found = (
                    await client.call_tool("find_skills", {"query": "play the sicilian defence"})
                ).structured_content
                uris = sorted(str(r.uri) for r in (await client.list_resources()).resources)
                return [s["name"] for s in found["skills"]], uris

            before = await state()
            write_skill(
                skills / "chess",
                "---\nname: chess\ndescription: Play chess openings like the sicilian defence.\n---\ne4 c5.\n",
            )
            with anyio.fail_after(10):
                while (now := await state())[0] != ["chess"]:
                    await anyio.sleep(0.1)
            text = (await client.read_resource("skill://chess/SKILL.md")).contents[0].text
            shutil.rmtree(skills / "notes")
            with anyio.fail_after(10):
                while "skill://notes/SKILL.md" in (await state())[1]:
                    await anyio.sleep(0.1)
            gone = await client.call_tool("load_skill", {"name": "notes"})
            return before, now, text, json.loads(gone.content[0].text)["error"]

    before, after, text, gone = anyio.run(run)
    assert before == ([], ["skill://doubler/SKILL.md", "skill://notes/SKILL.md"])
    assert after == (["chess"], ["skill://chess/SKILL.md", "skill://doubler/SKILL.md", "skill://notes/SKILL.md"])
    assert text.startswith("---\nname: chess")
    assert gone == "tool.unknown_skill"


def test_a_skills_folder_created_after_the_server_started_is_watched(tmp_path, home, backend):
    """A fresh project has no .agents/skills yet; the first skill installed there is seen."""
    project = tmp_path / "fresh"
    (project / ".git").mkdir(parents=True)  # a project root, with no skills folder yet

    async def run():
        async with stdio_session(project, backend) as client:

            async def names():
                found = (
                    await client.call_tool("find_skills", {"query": "play the sicilian defence"})
                ).structured_content
                return [s["name"] for s in found["skills"]]

            before = await names()
            write_skill(
                project / ".agents" / "skills" / "chess",
                "---\nname: chess\ndescription: Play chess openings like the sicilian defence.\n---\ne4 c5.\n",
            )
            with anyio.fail_after(15):
                while (now := await names()) != ["chess"]:
                    await anyio.sleep(0.1)
            return before, now

    assert anyio.run(run) == ([], ["chess"])


def test_without_the_agent_extra_the_error_names_it(project):
    code = "import sys; sys.modules['mcp'] = None; from skillctl.cli.main import main; sys.exit(main(['mcp']))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1
    assert "skillyard[agent]" in proc.stderr and "Traceback" not in proc.stderr
