"""`skillctl mcp trust/untrust/trusted`: the command shows what it consents to, asks (or --yes),
and is the one writer of [runtime] trusted_mcp; an agent then starts exactly that command."""

from __future__ import annotations

import io
import json
import sys
import tomllib
from pathlib import Path

import pytest

from skillctl.cli.main import main

SERVER = """\
import os
from pathlib import Path

Path("started").write_text("yes")

from mcp.server.mcpserver import MCPServer

app = MCPServer("issues")


@app.tool()
def search(query: str) -> str:
    \"\"\"Search.\"\"\"
    return "found " + query


app.run()
"""


def skill_md(*, args: tuple[str, ...] = ("server.py",)) -> str:
    return "\n".join(
        [
            "---",
            "name: issues",
            "description: Search the team's issues.",
            "vars:",
            "  ISSUES_TOKEN:",
            "    secret: true",
            "mcp:",
            f"  command: {json.dumps(sys.executable)}",
            f"  args: {json.dumps(list(args))}",
            '  env: {TOKEN: "${ISSUES_TOKEN}", MODE: fast}',
            "---",
            "Search before filing.",
            "",
        ]
    )


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SKILLYARD_USER_SKILLS", str(tmp_path / "user-skills"))
    monkeypatch.setenv("SKILLYARD_SEMANTIC", "0")
    root = tmp_path / "proj"
    folder = root / ".agents" / "skills" / "issues"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md())
    (folder / "server.py").write_text(SERVER)
    monkeypatch.chdir(root)
    return root


def run(capsys, monkeypatch, *argv: str, stdin: str = "") -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def trusted_in_config(home: Path) -> list[dict]:
    path = home / "config" / "config.toml"
    if not path.exists():
        return []
    return tomllib.loads(path.read_text()).get("runtime", {}).get("trusted_mcp", [])


def test_trust_shows_the_command_args_and_env_names_and_asks(project, home, capsys, monkeypatch):
    code, out, err = run(capsys, monkeypatch, "mcp", "trust", "issues", stdin="y\n")
    assert code == 0
    assert sys.executable in err and "server.py" in err
    assert "TOKEN, MODE" in err and "ISSUES_TOKEN" in err  # env names and the vars filling them
    assert "outside the sandbox" in err and "Trust this command for issues?" in err
    [entry] = trusted_in_config(home)
    assert entry["name"] == "issues" and entry["digest"].startswith("sha256:")


@pytest.mark.parametrize("answer", ["n\n", ""], ids=["no", "no-answer"])
def test_trust_not_confirmed_writes_nothing(project, home, capsys, monkeypatch, answer):
    code, out, err = run(capsys, monkeypatch, "mcp", "trust", "issues", stdin=answer)
    assert code == 1 and "was not trusted; nothing was written" in err
    assert trusted_in_config(home) == []


def test_trust_json_with_yes_prints_what_was_pinned(project, home, capsys, monkeypatch):
    code, out, err = run(capsys, monkeypatch, "mcp", "trust", "issues", "--yes", "--json")
    assert code == 0 and err == ""
    shown = json.loads(out)
    assert shown["command"] == sys.executable and shown["args"] == ["server.py"]
    assert shown["env"] == ["TOKEN", "MODE"] and shown["vars"] == ["ISSUES_TOKEN"]
    assert list(shown["files"]) == ["server.py"] and shown["changed"] is True
    assert trusted_in_config(home) == [{"name": "issues", "digest": shown["digest"]}]
    code, out, _ = run(capsys, monkeypatch, "mcp", "trust", "issues", "--yes", "--json")
    assert json.loads(out)["changed"] is False and len(trusted_in_config(home)) == 1


def test_trust_keeps_the_rest_of_the_config(project, home, capsys, monkeypatch):
    config = home / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('# mine\n[runtime]\ntrusted_toolsets = ["acme.*"]\n')
    assert run(capsys, monkeypatch, "mcp", "trust", "issues", "--yes")[0] == 0
    text = config.read_text()
    assert "# mine" in text and tomllib.loads(text)["runtime"]["trusted_toolsets"] == ["acme.*"]


def test_trust_of_an_unknown_skill_or_one_without_a_server_is_refused(project, home, capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "mcp", "trust", "nope", "--yes", "--json")
    assert code == 1 and json.loads(out)["error"] == "mcp.unknown_skill"
    plain = project / ".agents" / "skills" / "plain"
    plain.mkdir()
    (plain / "SKILL.md").write_text("---\nname: plain\ndescription: No server.\n---\nHi.\n")
    code, out, _ = run(capsys, monkeypatch, "mcp", "trust", "plain", "--yes", "--json")
    assert code == 1 and json.loads(out)["error"] == "mcp.no_server"
    assert trusted_in_config(home) == []


def test_trusted_lists_entries_and_marks_a_changed_skill(project, home, capsys, monkeypatch):
    run(capsys, monkeypatch, "mcp", "trust", "issues", "--yes")
    code, out, _ = run(capsys, monkeypatch, "mcp", "trusted", "--json")
    [row] = json.loads(out)["trusted"]
    assert code == 0 and row["status"] == "trusted" and "server.py" in row["command"]
    (project / ".agents" / "skills" / "issues" / "SKILL.md").write_text(skill_md(args=("server.py", "--all")))
    [row] = json.loads(run(capsys, monkeypatch, "mcp", "trusted", "--json")[1])["trusted"]
    assert row["status"] == "changed"
    code, out, _ = run(capsys, monkeypatch, "mcp", "trusted")
    assert "changed — re-run `skillctl mcp trust issues`" in out


def test_untrust_removes_the_entry(project, home, capsys, monkeypatch):
    run(capsys, monkeypatch, "mcp", "trust", "issues", "--yes")
    code, out, _ = run(capsys, monkeypatch, "mcp", "untrust", "issues", "--json")
    assert code == 0 and json.loads(out) == {"name": "issues", "removed": True}
    assert trusted_in_config(home) == []
    assert json.loads(run(capsys, monkeypatch, "mcp", "untrust", "issues", "--json")[1])["removed"] is False


def test_an_agent_starts_the_server_only_after_trust_and_not_after_an_edit(project, home, capsys, monkeypatch):
    pytest.importorskip("mcp")
    from skillctl.config import load_config
    from skillctl.skillset import SkillSet

    folder = project / ".agents" / "skills" / "issues"
    monkeypatch.setenv("ISSUES_TOKEN", "tok-from-the-environment")  # declared: the environment may fill it

    def load() -> str:
        with SkillSet.discover(project_dir=project, semantic=False, config=load_config()) as skills:
            return skills.handle_tool_call("load_skill", {"name": "issues"})

    assert "[mcp.untrusted]" in load() and not (folder / "started").exists()
    run(capsys, monkeypatch, "mcp", "trust", "issues", "--yes")
    assert "mcp__issues__search" in load() and (folder / "started").exists()
    (folder / "started").unlink()
    (folder / "SKILL.md").write_text(skill_md(args=("server.py", "--all")))
    assert "[mcp.trust_changed]" in load() and not (folder / "started").exists()


def test_trust_takes_a_skill_folder_path_too(project, home, capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "mcp", "trust", "./.agents/skills/issues", "--yes", "--json")
    assert code == 0 and json.loads(out)["skill"] == "issues"
    assert [e["name"] for e in trusted_in_config(home)] == ["issues"]


def test_trusted_says_when_a_trusted_skill_is_gone(project, home, capsys, monkeypatch):
    import shutil

    run(capsys, monkeypatch, "mcp", "trust", "issues", "--yes")
    shutil.rmtree(project / ".agents" / "skills" / "issues")
    [row] = json.loads(run(capsys, monkeypatch, "mcp", "trusted", "--json")[1])["trusted"]
    assert row["status"] == "not_installed" and row["command"] is None
