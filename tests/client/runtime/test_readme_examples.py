"""The README's runtime examples run as written: each python block is a docs/*_example.py file
verbatim, run here in a project whose skills the example expects."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.client.runtime.conftest import config_toml, skillctl_argv, write_skill
from tests.client.runtime.fake_llm import FakeChatServer, reply_calling, reply_saying

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"


def example(name: str) -> Path:
    return ROOT / "docs" / f"{name}_example.py"


@pytest.mark.parametrize("name", ["pipeline", "management", "watch", "toolset", "agent_loop", "mcp_skill", "skillset"])
def test_the_readme_shows_each_example_verbatim(name):
    assert "```python\n" + example(name).read_text("utf-8") + "```" in README.read_text("utf-8")


def readme_block(lang: str, containing: str) -> str:
    """The README's ``lang`` block that contains ``containing`` (exactly one)."""
    import re

    [block] = [b for b in re.findall(rf"```{lang}\n(.*?)```", README.read_text("utf-8"), re.S) if containing in b]
    return block


def readme_skill_frontmatter() -> list[str]:
    import re

    return [b for b in re.findall(r"```yaml\n(.*?)```", README.read_text("utf-8"), re.S) if b.startswith("---\n")]


@pytest.mark.parametrize("frontmatter", readme_skill_frontmatter(), ids=lambda b: b.split("\n")[1])
def test_the_readmes_skill_examples_validate_without_a_finding(tmp_path, frontmatter):
    from skillctl.format import load_skill

    name = frontmatter.split("\n")[1].removeprefix("name: ")
    folder = tmp_path / name
    write_skill(folder, frontmatter + "\nInstructions.\n")
    report = load_skill(folder)
    assert report.valid and [f.code for f in report.findings] == []


def run_example(name: str, project: Path, home: Path, **env: str) -> subprocess.CompletedProcess:
    return run_in(project, home, [sys.executable, str(example(name))], **env)


def run_in(project: Path, home: Path, argv: list[str], **env: str) -> subprocess.CompletedProcess:
    environ = {
        **os.environ,
        "SKILLYARD_HOME": str(home),
        "SKILLYARD_USER_SKILLS": str(project.parent / "user"),
        "SKILLYARD_SEMANTIC": "0",
        "PYTHONPATH": os.pathsep.join(sys.path),
        **env,
    }
    result = subprocess.run(argv, cwd=project, env=environ, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result


def skill(project: Path, name: str, extra: str = "", body: str = "Steps.") -> None:
    md = f"---\nname: {name}\ndescription: The {name} step.\n{extra}---\n{body}\n"
    write_skill(project / ".agents" / "skills" / name, md)


def empty_folder(tmp_path) -> Path:
    """A fresh project folder with nothing in it: each example makes the skills it needs."""
    project = tmp_path / "project"
    project.mkdir()
    return project


def test_pipeline_example(tmp_path):
    lines = run_example("pipeline", empty_folder(tmp_path), tmp_path / "home").stdout.splitlines()
    assert lines[:2] == ["gather -> triage", "True"]
    assert lines[2].startswith("fix-bug [skill pipeline] The skill 'triage'")
    assert json.loads(lines[3])["error"] == "pipeline.no_next_skills"  # fix-bug lists none


def test_management_example(tmp_path):
    project = empty_folder(tmp_path)
    lines = run_example("management", project, tmp_path / "home").stdout.splitlines()
    assert lines == [
        "{'name': 'notes', 'enabled': False}",
        "[('notes', False)]",
        "{'name': 'notes', 'enabled': True}",
        "management.declined",
        "installed",
    ]
    assert (project / ".agents" / "skills" / "weather" / "SKILL.md").is_file()
    assert "enabled = true" in (tmp_path / "home" / "config" / "config.toml").read_text()


def test_skillset_example(tmp_path):
    result = run_example("skillset", empty_folder(tmp_path), tmp_path / "home")
    lines = result.stdout.splitlines()
    assert lines[0].startswith("k8s-deploy ") and "## Skill: k8s-deploy" in result.stdout
    assert "tool.path_refused" in result.stdout


def test_watch_example(tmp_path):
    project = tmp_path / "project"
    skill(project, "notes")
    lines = run_example("watch", project, tmp_path / "home").stdout.splitlines()
    assert lines == ["['chess']", "['notes']", "[]"]


def test_toolset_example(tmp_path):
    lines = run_example("toolset", empty_folder(tmp_path), tmp_path / "home").stdout.splitlines()
    assert lines[0] == "This skill's toolsets give these tools: toolset__calc__add."
    assert lines[1:3] == ["{'a': {'type': 'integer'}, 'b': {'type': 'integer'}}", "5"]
    assert json.loads(lines[3])["error"] == "tool.bad_call"


def test_agent_loop_example(tmp_path):
    script = [
        reply_calling("load_skill", name="intake"),
        reply_saying("Noted."),
        reply_calling("skill_transition", skill="fix-bug", reason="a crash"),
        reply_saying("Reproduce it on /login."),
    ]
    with FakeChatServer(script) as llm:  # a model server on loopback
        lines = run_example(
            "agent_loop",
            empty_folder(tmp_path),
            tmp_path / "home",
            OPENAI_BASE_URL=llm.base_url,
            OPENAI_API_KEY="sk-test",
        ).stdout.splitlines()
    assert lines == ["Reproduce it on /login.", "intake -> triage -> fix-bug"]
    assert len(llm.requests) == 4 and llm.headers[0]["Authorization"] == "Bearer sk-test"


ISSUES_SERVER = """
import os

from mcp.server.mcpserver import MCPServer

app = MCPServer("issues")


@app.tool()
def search(query: str) -> str:
    \"\"\"Search the team's issues.\"\"\"
    return f"2 issues match {query!r} (token given: {os.environ.get('TOKEN') == 'not-for-the-model'})"


app.run()
"""


def test_mcp_skill_example(tmp_path):
    pytest.importorskip("mcp")
    project = tmp_path / "project"
    frontmatter = readme_block("yaml", "name: issues")  # the README's SKILL.md, as written
    write_skill(project / ".agents" / "skills" / "issues", frontmatter + "Search before filing.\n")
    (project / ".agents" / "skills" / "issues" / "server.py").write_text(ISSUES_SERVER)
    # `command: python3` as written: this interpreter (which has the SDK) first on PATH.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    untrusted = run_example("mcp_skill", project, tmp_path / "home", ISSUES_TOKEN="not-for-the-model", PATH=path)
    assert untrusted.stdout.splitlines()[0] == "[]"  # the README's trust step not taken yet: nothing started
    assert json.loads(untrusted.stdout.splitlines()[1])["error"] == "tool.unknown"
    run_in(project, tmp_path / "home", skillctl_argv("mcp", "trust", "issues", "--yes"), PATH=path)
    result = run_example("mcp_skill", project, tmp_path / "home", ISSUES_TOKEN="not-for-the-model", PATH=path)
    assert result.stdout.splitlines() == [
        "['mcp__issues__search']",
        "2 issues match 'crash on start' (token given: True)",
    ]


def test_tool_policy_example_means_what_the_readme_says(tmp_path):
    from skillctl.config import load_config
    from skillctl.runtime.policy import ToolPolicy

    home = tmp_path / "home"
    config_toml(home, readme_block("toml", "[tools]\nprofile"))
    env = {"SKILLYARD_HOME": str(home)}
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        config = load_config()
    every = ToolPolicy.from_config(config)
    allowed = {t: every.allows(t) for t in ("read", "exec", "process", "web_fetch", "mcp:docs.search", "message")}
    assert allowed == {
        "read": True,  # coding: group:fs
        "exec": True,  # coding: group:runtime
        "process": False,  # denied
        "web_fetch": True,  # also_allow
        "mcp:docs.search": True,  # also_allow with a wildcard
        "message": False,  # not in coding
    }
    assert not every.allows("mcp:github.delete_repo") and every.allows("mcp:github.get_issue")
    bot = ToolPolicy.from_config(config, agent="support-bot")
    assert bot.profile == "messaging" and bot.allows("message") and bot.allows("load_skill")
    assert not bot.allows("run_skill") and not bot.allows("exec")
    assert not bot.allows("process")  # the global deny still holds
