"""A skill's MCP command starts only once the user trusted it as it is now, and gets only the
vars the skill declares: a real stdio server (the SDK's MCPServer) that, the moment it runs,
writes a marker file holding its environment. An untrusted load must leave no marker."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from skillctl.config import Config, config_path, load_config
from skillctl.reporting import Reporter
from skillctl.runtime.management import MANAGEMENT_TOOL
from skillctl.skillset import SkillSet
from tests.client.runtime.conftest import trusting, wait_until, write_skill
from tests.client.runtime.fake_llm import FakeChatServer, reply_calling, reply_saying

pytest.importorskip("mcp")

HOST_SECRET = "AKIA-host-secret-never-for-a-skill"

SERVER = """\
import json, os
from pathlib import Path

Path("started.json").write_text(json.dumps(dict(os.environ)))  # in the skill folder, its working directory

from mcp.server.mcpserver import MCPServer

app = MCPServer("marker")


@app.tool()
def ping() -> str:
    \"\"\"Answer pong.\"\"\"
    return "pong"


app.run()
"""


def marker_md(*, env: dict | None = None, args: tuple[str, ...] = ("server.py",), vars_block: str = "") -> str:
    return "\n".join(
        [
            "---",
            "name: marker",
            "description: A skill whose MCP server leaves a marker file when it starts.",
            *([vars_block] if vars_block else []),
            "mcp:",
            f"  command: {json.dumps(sys.executable)}",
            f"  args: {json.dumps(list(args))}",
            f"  env: {json.dumps(env or {})}",
            "  startup_timeout: 20",
            "---",
            "Use the marker tools.",
            "",
        ]
    )


def make_marker(root: Path, **options) -> Path:
    return write_skill(root / "marker", marker_md(**options), {"server.py": SERVER})


def started(folder: Path) -> dict | None:
    """The environment the server started with, or None when it never ran."""
    marker = folder / "started.json"
    return json.loads(marker.read_text()) if marker.exists() else None


def open_skills(root: Path, config, **options) -> SkillSet:
    return SkillSet.from_dir(root, semantic=False, config=config, **options)


def load(skills: SkillSet, name: str = "marker") -> str:
    return skills.handle_tool_call("load_skill", {"name": name})


def mcp_tools(skills: SkillSet) -> list[str]:
    return [t["name"] for t in skills.tool_definitions("anthropic") if t["name"].startswith("mcp__")]


# --- consent ------------------------------------------------------------------------------------


@pytest.mark.parametrize("config", [None, Config()], ids=["no-config", "nothing-trusted"])
def test_an_untrusted_skill_loads_as_instructions_only_and_starts_no_process(tmp_path, home, config):
    folder = make_marker(tmp_path / "skills")
    reporter = Reporter()
    with open_skills(tmp_path / "skills", config, reporter=reporter) as skills:
        text = load(skills)
        assert "Use the marker tools." in text
        assert "[mcp.untrusted]" in text and "skillctl mcp trust marker" in text
        assert sys.executable in text  # the command the user would consent to
        assert mcp_tools(skills) == [] and skills.session()._mcp is None
        assert json.loads(skills.handle_tool_call("mcp__marker__ping", {}))["error"] == "tool.unknown"
    assert started(folder) is None
    assert any("[mcp.untrusted]" in w for w in reporter.warnings)


def test_a_trusted_skill_starts_its_server(tmp_path, home):
    folder = make_marker(tmp_path / "skills")
    with open_skills(tmp_path / "skills", trusting(tmp_path / "skills", "marker")) as skills:
        assert "mcp__marker__ping" in load(skills)
        assert started(folder) is not None
        assert skills.handle_tool_call("mcp__marker__ping", {}) == "pong"


@pytest.mark.parametrize(
    "edit",
    [
        lambda folder: (folder / "SKILL.md").write_text(marker_md(args=("server.py", "--verbose"))),
        lambda folder: (folder / "SKILL.md").write_text(marker_md(env={"MODE": "fast"})),
        lambda folder: (folder / "server.py").write_text(SERVER + "\n# and something new\n"),
    ],
    ids=["args", "env", "the-file-it-runs"],
)
def test_a_changed_block_or_server_file_is_untrusted_again(tmp_path, home, edit):
    folder = make_marker(tmp_path / "skills")
    config = trusting(tmp_path / "skills", "marker")
    edit(folder)
    with open_skills(tmp_path / "skills", config) as skills:
        text = load(skills)
        assert "[mcp.trust_changed]" in text and "skillctl mcp trust marker" in text
        assert mcp_tools(skills) == []
    assert started(folder) is None


def test_an_idle_server_whose_file_changed_is_not_started_again(tmp_path, home):
    folder = make_marker(tmp_path / "skills")
    skill_md = folder / "SKILL.md"
    skill_md.write_text(
        skill_md.read_text().replace("  startup_timeout: 20", "  startup_timeout: 20\n  idle_timeout: 0.3")
    )
    with open_skills(tmp_path / "skills", trusting(tmp_path / "skills", "marker")) as skills:
        load(skills)
        wait_until(lambda: not skills.session()._mcp.running("marker"), what="the idle server to stop")
        (folder / "started.json").unlink()
        (folder / "server.py").write_text(SERVER + "\n# changed while the session ran\n")
        reply = json.loads(skills.handle_tool_call("mcp__marker__ping", {}))
        assert reply["error"] == "mcp.trust_changed"
    assert started(folder) is None


def test_editing_only_the_instructions_keeps_the_trust(tmp_path, home):
    folder = make_marker(tmp_path / "skills")
    config = trusting(tmp_path / "skills", "marker")
    (folder / "SKILL.md").write_text(marker_md().replace("Use the marker tools.", "Use the marker tools, kindly."))
    with open_skills(tmp_path / "skills", config) as skills:
        assert "mcp__marker__ping" in load(skills)
    assert started(folder) is not None


def test_another_skills_trust_does_not_start_this_one(tmp_path, home):
    folder = make_marker(tmp_path / "skills")
    digest = trusting(tmp_path / "skills", "marker").values["runtime"]["trusted_mcp"][0]["digest"]
    config = Config(values={"runtime": {"trusted_mcp": [{"name": "other", "digest": digest}]}})
    with open_skills(tmp_path / "skills", config) as skills:
        assert "[mcp.untrusted]" in load(skills)
    assert started(folder) is None


def test_a_malformed_trust_list_is_a_config_error_and_starts_nothing(tmp_path, home):
    folder = make_marker(tmp_path / "skills")
    config = Config(values={"runtime": {"trusted_mcp": ["marker"]}})
    with open_skills(tmp_path / "skills", config) as skills:
        assert "[runtime.config_invalid]" in load(skills)
    assert started(folder) is None


# --- what the server gets -----------------------------------------------------------------------


def test_an_undeclared_var_expands_to_nothing_and_the_host_environment_stays_out(tmp_path, home, monkeypatch):
    monkeypatch.setenv("HOME_SECRET", HOST_SECRET)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", HOST_SECRET)
    monkeypatch.setenv("GREETING", "hello")  # declared: the environment may fill it
    folder = make_marker(
        tmp_path / "skills",
        env={"LEAK": "${HOME_SECRET}", "AWS": "${AWS_SECRET_ACCESS_KEY}", "HELLO": "${GREETING} world"},
        vars_block="vars:\n  GREETING:\n    description: how to greet",
    )
    reporter = Reporter()
    with open_skills(tmp_path / "skills", trusting(tmp_path / "skills", "marker"), reporter=reporter) as skills:
        text = load(skills)
        assert "mcp__marker__ping" in text and "[mcp.undeclared_var]" in text and "HOME_SECRET" in text
    env = started(folder)
    assert env is not None
    assert env["LEAK"] == "" and env["AWS"] == "" and env["HELLO"] == "hello world"
    assert HOST_SECRET not in json.dumps(env)
    assert "HOME_SECRET" not in env and "GREETING" not in env and env["PATH"]
    assert sum("[mcp.undeclared_var]" in w for w in reporter.warnings) == 2


def test_the_server_environment_is_the_inherited_names_and_its_own(tmp_path, home, monkeypatch):
    from skillctl.runtime.mcp_spec import INHERITED_ENV, server_spec

    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("UNRELATED_HOST_VARIABLE", "x")
    make_marker(tmp_path / "skills", env={"MODE": "fast"})
    skills = open_skills(tmp_path / "skills", trusting(tmp_path / "skills", "marker"))
    spec = server_spec(skills.get("marker"), config=skills.config)
    assert set(spec.env) <= {*INHERITED_ENV, "MODE"}
    assert spec.env["LANG"] == "C.UTF-8" and spec.env["MODE"] == "fast" and "UNRELATED_HOST_VARIABLE" not in spec.env


def test_server_spec_refuses_an_untrusted_skill_before_reading_its_vars(tmp_path, home):
    from skillctl.errors import SkillctlError
    from skillctl.runtime.mcp_spec import server_spec

    folder = make_marker(tmp_path / "skills", env={"X": "${X}"}, vars_block="vars:\n  X: {}")
    (folder / "vars.json").write_text("not json")  # reading vars would fail with vars.invalid_file
    skills = open_skills(tmp_path / "skills", Config())
    with pytest.raises(SkillctlError) as refused:
        server_spec(skills.get("marker"), config=skills.config)
    assert refused.value.code == "mcp.untrusted"


# --- every way a skill gets loaded -------------------------------------------------------------


def test_the_agent_loop_loading_an_untrusted_skill_starts_nothing(tmp_path, home):
    from skillctl.runtime.agent_loop import OpenAIChat, run_turn

    folder = make_marker(tmp_path / "skills")
    script = [reply_calling("load_skill", name="marker"), reply_saying("I cannot use its tools.")]
    with open_skills(tmp_path / "skills", Config()) as skills, FakeChatServer(script) as llm:
        model = OpenAIChat(llm.base_url, model="fake", api_key="sk-test")
        run_turn(skills.session(), [], "ping the marker", model)
        tool_reply = llm.requests[1]["messages"][-1]
    assert tool_reply["role"] == "tool" and "[mcp.untrusted]" in tool_reply["content"]
    assert started(folder) is None


def test_skillctl_mcp_serving_starts_a_skill_server_only_once_trusted(tmp_path, home):
    from skillctl.runtime.mcp_server import SkillTools

    folder = make_marker(tmp_path / "skills")
    untrusted = SkillTools(open_skills(tmp_path / "skills", load_config()))
    loaded = untrusted.load_skill("marker")
    assert "Use the marker tools." in loaded and "[mcp.untrusted]" in loaded
    assert started(folder) is None
    trusted = SkillTools(open_skills(tmp_path / "skills", trusting(tmp_path / "skills", "marker")))
    assert "Use the marker tools." in trusted.load_skill("marker")
    assert started(folder) is not None
    trusted.skills.close()


def test_skill_management_install_and_create_add_no_trust(project, tmp_path):
    source = make_marker(tmp_path / "src")
    skills = SkillSet.discover(
        project_dir=project,
        include_user=False,
        semantic=False,
        config=load_config(),
        manage_skills=True,
        approve=lambda request: True,
    )
    installed = json.loads(skills.handle_tool_call(MANAGEMENT_TOOL, {"action": "install", "source": str(source)}))
    assert [c["name"] for c in installed["changes"]] == ["marker"]
    created = {"action": "create", "name": "made", "description": "Made here.", "instructions": "Hi."}
    assert json.loads(skills.handle_tool_call(MANAGEMENT_TOOL, created))["created"] == "made"
    assert "trusted_mcp" not in (config_path().read_text() if config_path().exists() else "")
    skills.close()  # the next session sees the installed skill
    skills.config = load_config()
    assert "[mcp.untrusted]" in load(skills)
    assert started(project / ".agents" / "skills" / "marker") is None
    skills.close()
