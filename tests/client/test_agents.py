"""--agent links: the documented folders, relative links, never clobbering someone's folder."""

from __future__ import annotations

import os

import pytest

from skillctl import agents
from skillctl.errors import ExitCode, SkillctlError


@pytest.fixture
def installed(tmp_path):
    skill = tmp_path / ".agents/skills/hello"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: hello\ndescription: hi\n---\n")
    return skill


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def test_the_widely_used_agents_are_known():
    assert {
        "claude",
        "codex",
        "cursor",
        "copilot",
        "gemini",
        "opencode",
        "openclaw",
        "windsurf",
        "cline",
        "roo",
        "kiro",
        "amp",
        "goose",
        "qwen",
        "continue",
        "zed",
        "junie",
        "trae",
        "kilo",
        "augment",
        "droid",
    } <= set(agents.AGENTS)


def test_auto_and_all_take_only_the_agents_that_are_here(tmp_path, home):
    project = tmp_path / "proj"
    (project / ".windsurf").mkdir(parents=True)  # used in this project
    (home / ".claude").mkdir()  # used on this machine
    (project / ".kiro/skills").mkdir(parents=True)  # its skills folder exists already
    assert agents.expand(["auto"], scope="project", base=project) == ["claude", "kiro", "windsurf"]
    assert agents.expand(["all"], scope="project", base=project) == ["claude", "kiro", "windsurf"]
    (project / ".roo/skills").mkdir(parents=True)  # a folder alone is not a sign of use, but "all" links there
    assert "roo" in agents.expand(["all"], scope="project", base=project)
    assert agents.expand(["auto"], scope="project", base=tmp_path / "empty") == ["claude"]


def test_all_creates_no_folder_for_an_absent_agent(tmp_path, home, installed):
    (home / ".cursor").mkdir()
    agents.link(
        "hello", installed, agents.expand(["all"], scope="project", base=tmp_path), scope="project", base=tmp_path
    )
    assert (tmp_path / ".cursor/skills/hello").is_symlink()
    assert not (tmp_path / ".claude").exists() and not (tmp_path / ".gemini").exists()


def test_unlink_removes_the_skills_folder_it_left_empty_never_the_agent_folder(tmp_path, home, installed):
    (tmp_path / ".claude").mkdir()  # how --agent auto knows Claude Code is used here
    agents.link("hello", installed, ["claude", "windsurf"], scope="project", base=tmp_path)
    (tmp_path / ".windsurf/rules.md").write_text("theirs")
    agents.unlink("hello", installed.parent, ["claude", "windsurf"], scope="project", base=tmp_path)
    assert (tmp_path / ".claude").is_dir() and not (tmp_path / ".claude/skills").exists()
    assert "claude" in agents.expand(["auto"], scope="project", base=tmp_path)
    assert not (tmp_path / ".windsurf/skills").exists() and (tmp_path / ".windsurf/rules.md").exists()
    assert installed.is_dir()


def test_unknown_agent_is_a_usage_error():
    with pytest.raises(SkillctlError) as err:
        agents.expand(["vim"])
    assert err.value.exit_code == ExitCode.USAGE and err.value.hint


@pytest.mark.parametrize(
    ("agent", "project", "user"),
    [
        ("claude", ".claude/skills", ".claude/skills"),
        ("copilot", ".github/skills", ".copilot/skills"),
        ("opencode", ".opencode/skills", ".config/opencode/skills"),
        ("openclaw", "skills", ".openclaw/skills"),
    ],
)
def test_documented_folders(tmp_path, agent, project, user):
    assert agents.agent_folder(agent, scope="project", base=tmp_path) == tmp_path / project
    assert agents.agent_folder(agent, scope="user", base=tmp_path) == tmp_path / user


def test_links_are_relative_and_codex_needs_none(tmp_path, installed):
    made = agents.link("hello", installed, ["claude", "codex", "cline"], scope="project", base=tmp_path)
    assert tmp_path / ".agents/skills/hello" not in made  # codex reads .agents/skills itself
    claude = tmp_path / ".claude/skills/hello"
    assert claude in made and not os.path.isabs(os.readlink(claude))
    assert (claude / "SKILL.md").exists()
    moved = tmp_path.parent / "moved"
    tmp_path.rename(moved)  # a project moved elsewhere keeps working links
    assert (moved / ".claude/skills/hello/SKILL.md").exists()


def test_someone_elses_folder_is_a_collision_unless_forced(tmp_path, installed):
    theirs = tmp_path / ".cursor/skills/hello"
    theirs.mkdir(parents=True)
    with pytest.raises(SkillctlError) as err:
        agents.link("hello", installed, ["cursor"], scope="project", base=tmp_path)
    assert err.value.code == "install.collision" and theirs.is_dir() and not theirs.is_symlink()
    agents.link("hello", installed, ["cursor"], scope="project", base=tmp_path, force=True)
    assert theirs.is_symlink()


def test_unlink_only_removes_our_links(tmp_path, installed):
    agents.link("hello", installed, ["claude"], scope="project", base=tmp_path)
    theirs = tmp_path / ".gemini/skills/hello"
    theirs.mkdir(parents=True)
    agents.unlink("hello", installed.parent, ["claude", "gemini"], scope="project", base=tmp_path)
    assert not (tmp_path / ".claude/skills/hello").exists() and theirs.is_dir()
