"""Tool definitions and handlers: load_skill / read_skill_file, refusing escapes."""

from __future__ import annotations

import json

import pytest

from skillctl.errors import SkillctlError
from skillctl.skillset import SkillSet
from skillctl.tools import anthropic_tools, openai_tools, read_skill_file, safe_path


@pytest.fixture
def skills(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    skill = tmp_path / "skills" / "notes"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: notes\ndescription: Take notes.\n---\nRead references/guide.md.\n")
    (skill / "references" / "guide.md").write_text("the guide\n")
    (tmp_path / "secret.txt").write_text("top secret\n")
    return SkillSet.from_dir(tmp_path / "skills", semantic=False)


def test_openai_and_anthropic_definitions_share_one_schema():
    oa, an = openai_tools(), anthropic_tools()
    assert [t["function"]["name"] for t in oa] == [t["name"] for t in an] == ["load_skill", "read_skill_file"]
    assert oa[1]["type"] == "function"
    assert oa[1]["function"]["parameters"] == an[1]["input_schema"]
    assert an[1]["input_schema"]["required"] == ["name", "path"]


def test_load_skill_returns_the_instructions(skills):
    text = skills.handle_tool_call("load_skill", {"name": "notes"})
    assert "Read references/guide.md." in text and "references/guide.md" in text


def test_unknown_skill_is_an_error_the_model_can_read(skills):
    assert json.loads(skills.handle_tool_call("load_skill", '{"name": "nope"}'))["error"] == "tool.unknown_skill"


def test_read_skill_file_reads_inside_the_folder(skills):
    assert skills.handle_tool_call("read_skill_file", {"name": "notes", "path": "references/guide.md"}) == "the guide\n"


@pytest.mark.parametrize(
    "path", ["../secret.txt", "references/../../secret.txt", "/etc/passwd", "", "..\\secret.txt", "C:/x"]
)
def test_traversal_is_refused(skills, path):
    reply = json.loads(skills.handle_tool_call("read_skill_file", {"name": "notes", "path": path}))
    assert reply["error"] == "tool.path_refused"


def test_symlink_pointing_outside_is_refused(skills, tmp_path):
    (tmp_path / "skills" / "notes" / "references" / "leak.md").symlink_to(tmp_path / "secret.txt")
    (tmp_path / "skills" / "notes" / "outside").symlink_to(tmp_path)
    for path in ("references/leak.md", "outside/secret.txt"):
        with pytest.raises(SkillctlError) as err:
            read_skill_file(skills, "notes", path)
        assert err.value.code == "tool.path_refused"


def test_symlink_inside_the_folder_is_allowed(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.md").write_text("x")
    (tmp_path / "a" / "g.md").symlink_to(tmp_path / "a" / "f.md")
    assert safe_path(tmp_path / "a", "g.md") == (tmp_path / "a" / "f.md").resolve()


def test_missing_file_and_unknown_tool(skills):
    assert (
        json.loads(skills.handle_tool_call("read_skill_file", {"name": "notes", "path": "nope.md"}))["error"]
        == "tool.file_not_found"
    )
    assert json.loads(skills.handle_tool_call("rm_rf", {}))["error"] == "tool.unknown"
