"""Per-skill MCP servers: a real stdio server written with the SDK (MCPServer), driven through
SkillSet.load_skill / tool_definitions / handle_tool_call. Nothing sleeps a fixed time: the test
polls for the server's process with a deadline."""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from pathlib import Path

import pytest

from skillctl.skillset import SkillSet
from tests.client.runtime.conftest import pid_alive, trusting, wait_until, write_skill

pytest.importorskip("mcp")

SECRET = "sk-test-Zq8v41-very-secret"

SERVER = """\
import os, sys, time
from pathlib import Path

Path(os.environ["PID_FILE"]).write_text(str(os.getpid()))
mode = os.environ.get("MODE", "")
if mode == "sleep":  # never reaches the handshake
    time.sleep(120)
if mode == "exit":  # dies before the handshake, saying something secret on stderr
    sys.stderr.write("boom, token was " + os.environ["API_TOKEN"] + "\\n")
    sys.exit(1)

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

app = MCPServer("tester")


@app.tool()
def echo(text: str) -> str:
    \"\"\"Echo the text back.\"\"\"
    return "echo:" + text


@app.tool()
def whoami() -> str:
    \"\"\"Tell the token (a leak the runtime must mask).\"\"\"
    return "token=" + os.environ["API_TOKEN"]


@app.tool()
def fail(message: str) -> str:
    \"\"\"Fail, quoting the token.\"\"\"
    raise ToolError(message + " with " + os.environ["API_TOKEN"])


@app.tool()
def crash() -> str:
    \"\"\"Exit in the middle of the call.\"\"\"
    sys.stderr.write("crashing, token " + os.environ["API_TOKEN"] + "\\n")
    sys.stderr.flush()
    os._exit(3)


@app.tool()
def hang() -> str:
    \"\"\"Never answer in time.\"\"\"
    time.sleep(120)
    return "late"


app.run()
"""


def make_tester(root: Path, *, mode: str = "", startup: float = 10, idle: float = 60, env: dict | None = None) -> Path:
    server_env = {"API_TOKEN": "${API_TOKEN}", "PID_FILE": "${TESTER_PID_FILE}", "MODE": mode, **(env or {})}
    skill_md = "\n".join(
        [
            "---",
            "name: tester",
            "description: A skill with its own MCP server for testing.",
            "vars:",
            "  API_TOKEN:",
            "    secret: true",
            "  TESTER_PID_FILE:",
            "    description: where the server writes its pid",
            "mcp:",
            f"  command: {json.dumps(sys.executable)}",
            "  args: [server.py]",
            f"  env: {json.dumps(server_env)}",
            f"  startup_timeout: {startup}",
            f"  idle_timeout: {idle}",
            "---",
            "Use the tester tools.",
            "",
        ]
    )
    folder = write_skill(root / "tester", skill_md, {"server.py": SERVER})
    (folder / "vars.json").write_text(json.dumps({"API_TOKEN": SECRET}))
    return folder


@pytest.fixture
def pid_file(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "server.pid"
    monkeypatch.setenv("TESTER_PID_FILE", str(path))  # a declared var: reaches the server from the environment
    return path


def server_pid(pid_file: Path) -> int:
    return int(wait_until(lambda: pid_file.exists() and pid_file.read_text(), what="the server's pid file"))


def open_skills(tmp_path, **options) -> SkillSet:
    """The skills under tmp_path/skills, with the user's trust in tester's command as it is now."""
    if "config" not in options:
        options["config"] = trusting(tmp_path / "skills", "tester")
    return SkillSet.from_dir(tmp_path / "skills", semantic=False, **options)


def call(skills: SkillSet, tool: str, **args) -> str:
    return skills.handle_tool_call(tool, args)


def error_code(reply: str) -> str:
    return json.loads(reply)["error"]


def test_loading_the_skill_starts_its_server_and_offers_its_tools(tmp_path, home, pid_file):
    make_tester(tmp_path / "skills")
    with open_skills(tmp_path) as skills:
        assert [t["name"] for t in skills.tool_definitions("anthropic")] == ["load_skill", "read_skill_file"]
        text = call(skills, "load_skill", name="tester")
        assert "Use the tester tools." in text and "mcp__tester__echo" in text
        pid = server_pid(pid_file)
        assert pid_alive(pid)
        offered = {t["function"]["name"]: t["function"] for t in skills.tool_definitions("openai")}
        assert {"mcp__tester__echo", "mcp__tester__crash", "mcp__tester__hang"} <= set(offered)
        assert offered["mcp__tester__echo"]["parameters"]["required"] == ["text"]
        assert "Echo the text back." in offered["mcp__tester__echo"]["description"]
        assert call(skills, "mcp__tester__echo", text="hi") == "echo:hi"
        assert call(skills, "mcp:tester.echo", text="again") == "echo:again"  # the policy name works too
        assert error_code(call(skills, "mcp__tester__nope")) == "tool.unknown"
    wait_until(lambda: not pid_alive(pid), what="the server to stop when the session closes")


def test_an_idle_server_stops_and_the_next_call_starts_it_again(tmp_path, home, pid_file):
    make_tester(tmp_path / "skills", idle=0.5)
    with open_skills(tmp_path) as skills:
        call(skills, "load_skill", name="tester")
        first = server_pid(pid_file)
        pid_file.unlink()
        wait_until(lambda: not pid_alive(first), what="the idle server to stop")
        assert not skills.session()._mcp.running("tester")
        assert "mcp__tester__echo" in {t["name"] for t in skills.tool_definitions("anthropic")}  # still offered
        assert call(skills, "mcp__tester__echo", text="back") == "echo:back"
        assert server_pid(pid_file) != first


def test_a_server_slower_than_its_startup_timeout_is_killed_and_load_still_answers(tmp_path, home, pid_file):
    make_tester(tmp_path / "skills", mode="sleep", startup=1)
    with open_skills(tmp_path) as skills:
        started = time.monotonic()
        text = call(skills, "load_skill", name="tester")
        assert time.monotonic() - started < 6  # 1 s startup timeout, then the agent gets its answer
        assert "Use the tester tools." in text and "[mcp.start_timeout]" in text
        pid = server_pid(pid_file)
        wait_until(lambda: not pid_alive(pid), timeout=15, what="the slow server to be killed")
        assert [t["name"] for t in skills.tool_definitions("anthropic")] == ["load_skill", "read_skill_file"]


def test_a_crash_mid_call_is_a_tool_error_and_the_next_call_restarts(tmp_path, home, pid_file):
    make_tester(tmp_path / "skills")
    with open_skills(tmp_path) as skills:
        call(skills, "load_skill", name="tester")
        first = server_pid(pid_file)
        pid_file.unlink()
        reply = json.loads(call(skills, "mcp__tester__crash"))
        assert reply["error"] == "mcp.crashed" and "tester" in reply["message"]
        wait_until(
            lambda: not pid_alive(first), what="the crashed server to be gone"
        )  # its exit may trail its pipe closing
        assert call(skills, "mcp__tester__echo", text="alive") == "echo:alive"
        assert server_pid(pid_file) != first


def test_a_call_past_its_timeout_returns_an_error_and_never_hangs_the_agent(tmp_path, home, pid_file):
    make_tester(tmp_path / "skills")
    with open_skills(tmp_path, mcp_call_timeout=1) as skills:
        call(skills, "load_skill", name="tester")
        pid = server_pid(pid_file)
        started = time.monotonic()
        assert error_code(call(skills, "mcp__tester__hang")) == "mcp.timeout"
        assert time.monotonic() - started < 3  # 1 s; the hung server winds down in the background
        wait_until(lambda: not pid_alive(pid), timeout=15, what="the hung server to be stopped")
        assert call(skills, "mcp__tester__echo", text="fresh") == "echo:fresh"


def test_secrets_never_reach_results_errors_logs_or_our_stderr(tmp_path, home, pid_file, caplog, capfd):
    make_tester(tmp_path / "skills")
    caplog.set_level(logging.DEBUG)
    replies = []
    with open_skills(tmp_path) as skills:
        replies.append(call(skills, "load_skill", name="tester"))
        replies.append(call(skills, "mcp__tester__whoami"))
        replies.append(call(skills, "mcp__tester__fail", message="nope"))
        replies.append(call(skills, "mcp__tester__crash"))
    assert replies[1] == "token=****"
    assert error_code(replies[2]) == "mcp.tool_error" and "nope with ****" in replies[2]
    assert error_code(replies[3]) == "mcp.crashed" and "crashing, token ****" in replies[3]  # stderr tail, masked
    captured = capfd.readouterr()
    for text in [*replies, caplog.text, captured.out, captured.err, repr(skills.session())]:
        assert SECRET not in text


def test_a_server_dying_before_the_handshake_reports_its_stderr_masked(tmp_path, home, pid_file, caplog):
    make_tester(tmp_path / "skills", mode="exit")
    caplog.set_level(logging.DEBUG)
    with open_skills(tmp_path) as skills:
        text = call(skills, "load_skill", name="tester")
    assert "[mcp.start_failed]" in text and "boom, token was ****" in text
    assert SECRET not in text and SECRET not in caplog.text


def test_a_declared_variable_without_a_value_is_named_and_nothing_starts(tmp_path, home, pid_file):
    make_tester(tmp_path / "skills", env={"OTHER": "${NOT_SET_ANYWHERE}"})
    skill_md = tmp_path / "skills" / "tester" / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("vars:\n", "vars:\n  NOT_SET_ANYWHERE: {}\n"))
    with open_skills(tmp_path) as skills:
        text = call(skills, "load_skill", name="tester")
        assert "[mcp.missing_env]" in text and "NOT_SET_ANYWHERE" in text
        assert not pid_file.exists()
        assert error_code(call(skills, "mcp__tester__echo", text="x")) == "tool.unknown"


def test_a_skill_without_a_server_starts_nothing(tmp_path, home):
    write_skill(tmp_path / "skills" / "plain", "---\nname: plain\ndescription: Nothing special here.\n---\nHi.\n")
    with open_skills(tmp_path, config=None) as skills:
        assert "MCP" not in call(skills, "load_skill", name="plain")
        assert skills.session()._mcp is None


def test_env_values_reach_the_server_and_stay_out_of_the_repr(tmp_path, home, pid_file, monkeypatch):
    from skillctl.runtime.mcp_spec import server_spec

    monkeypatch.setenv("API_TOKEN", "from-the-environment")  # vars.json wins over the environment
    make_tester(tmp_path / "skills")
    skills = open_skills(tmp_path)
    spec = server_spec(skills.get("tester"), config=skills.config)
    assert spec.env["API_TOKEN"] == SECRET and spec.env["PID_FILE"] == os.environ["TESTER_PID_FILE"]
    assert SECRET in spec.secrets and SECRET not in repr(spec)
    assert spec.cwd == (tmp_path / "skills" / "tester").resolve()


# --- under the tool policy ------------------------------------------------------------------------


def policed(tmp_path, tools: dict) -> SkillSet:
    return SkillSet.from_dir(
        tmp_path / "skills", semantic=False, config=trusting(tmp_path / "skills", "tester", tools=tools)
    )


def test_denied_mcp_tools_are_neither_offered_nor_run(tmp_path, home, pid_file):
    make_tester(tmp_path / "skills")
    with policed(tmp_path, {"deny": ["mcp:tester.crash", "mcp:tester.h*"]}) as skills:
        text = call(skills, "load_skill", name="tester")
        assert "mcp__tester__echo" in text and "mcp__tester__crash" not in text
        offered = {t["name"] for t in skills.tool_definitions("anthropic")}
        assert "mcp__tester__echo" in offered and not {"mcp__tester__crash", "mcp__tester__hang"} & offered
        assert error_code(call(skills, "mcp__tester__crash")) == "tool.not_allowed"
        assert pid_alive(server_pid(pid_file))  # refused before it reached the server
        assert call(skills, "mcp__tester__echo", text="ok") == "echo:ok"


def test_a_policy_that_allows_none_of_its_tools_does_not_start_the_server(tmp_path, home, pid_file):
    make_tester(tmp_path / "skills")
    with policed(tmp_path, {"profile": "minimal"}) as skills:
        text = call(skills, "load_skill", name="tester")
        assert "Use the tester tools." in text and "not started" in text and "[tool.not_allowed]" in text
        assert not pid_file.exists() and skills.session()._mcp is None


def test_a_later_skills_allowed_tools_withdraw_another_skills_server_tools(tmp_path, home, pid_file):
    make_tester(tmp_path / "skills")
    write_skill(
        tmp_path / "skills" / "reader", "---\nname: reader\ndescription: Read only.\nallowed-tools: Read\n---\nRead.\n"
    )
    with open_skills(tmp_path) as skills:
        call(skills, "load_skill", name="tester")
        assert "mcp__tester__echo" in {t["name"] for t in skills.tool_definitions("anthropic")}
        call(skills, "load_skill", name="reader")
        assert [t["name"] for t in skills.tool_definitions("anthropic")] == ["load_skill", "read_skill_file"]
        assert error_code(call(skills, "mcp__tester__echo", text="x")) == "tool.not_allowed"
