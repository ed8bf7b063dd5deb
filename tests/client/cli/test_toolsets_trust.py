"""`skillctl toolsets trust/untrust/trusted`: the command shows the toolset code a skill brings,
asks (or --yes), and is how a user trusts it; an agent then imports exactly that code."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from tests.client.cli.test_mcp_trust import run

SKILL_MD = """\
---
name: calc
description: Adds numbers with its own tools.
toolsets: ["toolsets/index:Calculator"]
---
Use the calculator tools.
"""
INDEX = '''\
from pathlib import Path

Path("imported").write_text("yes")


class Calculator:
    def add(self, a: int, b: int) -> int:
        """Add two numbers."""
        return a + b
'''


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SKILLYARD_USER_SKILLS", str(tmp_path / "user-skills"))
    monkeypatch.setenv("SKILLYARD_SEMANTIC", "0")
    root = tmp_path / "proj"
    folder = root / ".agents" / "skills" / "calc"
    (folder / "toolsets").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    (folder / "toolsets" / "index.py").write_text(INDEX)
    monkeypatch.chdir(root)
    return root


def pinned(home: Path) -> list[dict]:
    path = home / "config" / "config.toml"
    if not path.exists():
        return []
    return tomllib.loads(path.read_text()).get("runtime", {}).get("trusted_skill_toolsets", [])


def test_trust_shows_the_toolsets_and_every_python_file_and_asks(project, home, capsys, monkeypatch):
    code, out, err = run(capsys, monkeypatch, "toolsets", "trust", "calc", stdin="y\n")
    assert code == 0, err
    assert "toolsets/index:Calculator" in err and "toolsets/index.py (sha256 " in err
    assert "outside the sandbox" in err and "Trust calc's toolset code?" in err
    [entry] = pinned(home)
    assert entry["name"] == "calc" and entry["digest"].startswith("sha256:")


@pytest.mark.parametrize("answer", ["n\n", ""], ids=["no", "no-answer"])
def test_trust_not_confirmed_writes_nothing(project, home, capsys, monkeypatch, answer):
    code, out, err = run(capsys, monkeypatch, "toolsets", "trust", "calc", stdin=answer)
    assert code == 1 and "were not trusted; nothing was written" in err
    assert pinned(home) == []


def test_trust_json_pins_the_digest_the_agent_checks(project, home, capsys, monkeypatch):
    code, out, err = run(capsys, monkeypatch, "toolsets", "trust", "calc", "--yes", "--json")
    shown = json.loads(out)
    assert code == 0 and err == ""
    assert shown["toolsets"] == ["toolsets/index:Calculator"] and list(shown["files"]) == ["toolsets/index.py"]
    assert pinned(home) == [{"name": "calc", "digest": shown["digest"]}] and shown["changed"] is True
    assert json.loads(run(capsys, monkeypatch, "toolsets", "trust", "calc", "--yes", "--json")[1])["changed"] is False


def test_a_skill_without_own_toolsets_or_not_installed_is_refused(project, home, capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "toolsets", "trust", "nope", "--yes", "--json")
    assert code == 1 and json.loads(out)["error"] == "mcp.unknown_skill"
    plain = project / ".agents" / "skills" / "plain"
    plain.mkdir()
    (plain / "SKILL.md").write_text("---\nname: plain\ndescription: No code.\n---\nHi.\n")
    code, out, _ = run(capsys, monkeypatch, "toolsets", "trust", "plain", "--yes", "--json")
    assert code == 1 and json.loads(out)["error"] == "toolset.none"
    assert pinned(home) == []


def test_trusted_marks_a_changed_skill_and_untrust_removes_it(project, home, capsys, monkeypatch):
    run(capsys, monkeypatch, "toolsets", "trust", "calc", "--yes")
    [row] = json.loads(run(capsys, monkeypatch, "toolsets", "trusted", "--json")[1])["trusted"]
    assert row["status"] == "trusted"
    (project / ".agents" / "skills" / "calc" / "toolsets" / "helper.py").write_text("X = 1\n")  # a new neighbour
    [row] = json.loads(run(capsys, monkeypatch, "toolsets", "trusted", "--json")[1])["trusted"]
    assert row["status"] == "changed"
    assert "re-run `skillctl toolsets trust calc`" in run(capsys, monkeypatch, "toolsets", "trusted")[1]
    code, out, _ = run(capsys, monkeypatch, "toolsets", "untrust", "calc", "--json")
    assert code == 0 and json.loads(out) == {"name": "calc", "removed": True} and pinned(home) == []


def test_an_agent_imports_the_toolset_only_after_trust_and_not_after_an_edit(project, home, capsys, monkeypatch):
    from skillctl.config import load_config
    from skillctl.skillset import SkillSet

    folder = project / ".agents" / "skills" / "calc"

    def load() -> str:
        with SkillSet.discover(project_dir=project, semantic=False, config=load_config()) as skills:
            return skills.handle_tool_call("load_skill", {"name": "calc"})

    first = load()
    assert "toolset.untrusted" in first and "skillctl toolsets trust calc" in first
    assert not (project / "imported").exists()
    run(capsys, monkeypatch, "toolsets", "trust", "calc", "--yes")
    assert "toolset__calc__add" in load() and (project / "imported").exists()
    (folder / "toolsets" / "index.py").write_text(INDEX + "\n# edited\n")
    assert "toolset.trust_changed" in load()
