"""skill_management: list, show, enable and disable, install and create behind the application's
approval, under the tool policy."""

from __future__ import annotations

import json
import subprocess

import pytest

from skillctl.config import Config, load_config
from skillctl.runtime.management import MANAGEMENT_TOOL, Action, ApprovalRequest
from skillctl.skillset import SkillSet
from tests.client.runtime.conftest import config_toml, skillctl_argv, write_skill

NEW_SKILL = (
    "---\nname: weather\ndescription: Forecast the weather for a city.\nversion: 2.1.0\n---\nCall the forecast API.\n"
)


def open_skills(project, **kwargs) -> SkillSet:
    kwargs.setdefault("config", load_config())
    return SkillSet.discover(project_dir=project, include_user=False, semantic=False, manage_skills=True, **kwargs)


def manage(skills, **args) -> dict:
    return json.loads(skills.handle_tool_call(MANAGEMENT_TOOL, args))


def tool_names(skills) -> list[str]:
    return [t["name"] for t in skills.tool_definitions("anthropic")]


# --- offered -----------------------------------------------------------------------------------


def test_offered_only_when_the_application_asks_for_it(project):
    plain = SkillSet.discover(project_dir=project, include_user=False, semantic=False)
    assert MANAGEMENT_TOOL not in tool_names(plain)
    assert manage(plain, action="list")["error"] == "tool.unknown"
    assert MANAGEMENT_TOOL in tool_names(open_skills(project))


def test_under_the_tool_policy_in_group_management(project):
    coding = open_skills(project, config=Config(values={"tools": {"profile": "coding"}}))
    assert MANAGEMENT_TOOL not in tool_names(coding)
    assert manage(coding, action="list")["error"] == "tool.not_allowed"
    lifted = open_skills(
        project, config=Config(values={"tools": {"profile": "coding", "also_allow": ["group:management"]}})
    )
    assert MANAGEMENT_TOOL in tool_names(lifted)


# --- list, show --------------------------------------------------------------------------------


def test_list_gives_each_skill_with_whether_it_is_offered(project):
    write_skill(
        project / ".agents" / "skills" / "off", "---\nname: off\ndescription: Off.\ndefault_enabled: false\n---\n"
    )
    listed = manage(open_skills(project), action="list")
    assert listed["total"] == 3 and listed["truncated"] is False
    by_name = {s["name"]: s for s in listed["skills"]}
    assert by_name["notes"]["offered"] is True and by_name["notes"]["enabled"] is True
    assert by_name["off"] == {
        "name": "off",
        "version": "",
        "description": "Off.",
        "enabled": False,
        "offered": False,
        "not_offered_because": "disabled (skillctl check)",
    }


def test_show_gives_the_manifest_of_one_skill(project):
    write_skill(
        project / ".agents" / "skills" / "triage",
        (
            "---\nname: triage\ndescription: Classify.\nversion: 1.0.0\nnext_skill: notes\n"
            "conditional_next_skills:\n  - {when: a bug, skill: fix-bug}\ntoolsets: ['calc.tools:Calculator']\n---\n"
        ),
    )
    shown = manage(open_skills(project), action="show", name="triage")
    assert shown["version"] == "1.0.0" and shown["next_skill"] == "notes" and shown["mcp_server"] is False
    assert shown["conditional_next_skills"] == [{"when": "a bug", "skill": "fix-bug"}]
    assert shown["toolsets"] == ["calc.tools:Calculator"] and shown["path"].endswith("triage")
    assert manage(open_skills(project), action="show", name="nope")["error"] == "tool.unknown_skill"


def test_malformed_calls_are_bad_calls(project):
    skills = open_skills(project)
    assert manage(skills, action="explode", name="notes")["error"] == "tool.bad_call"
    assert manage(skills, action="enable")["error"] == "tool.bad_call"
    assert manage(skills, action="create", name="x")["error"] == "tool.bad_call"


# --- enable, disable ---------------------------------------------------------------------------


def test_disable_writes_the_setting_skillctl_check_reads_and_enable_undoes_it(project, monkeypatch):
    monkeypatch.chdir(project)
    skills = open_skills(project)
    session = skills.session()
    assert [m.name for m in session.begin("take notes in markdown and keep a meeting journal")] == ["notes"]
    assert manage(skills, action="disable", name="notes") == {"name": "notes", "enabled": False}
    assert load_config().skill_settings("notes") == {"enabled": False}
    got = subprocess.run(skillctl_argv("config", "get", "skills.notes.enabled"), capture_output=True, text=True)
    assert got.stdout.strip() == "false"
    check = subprocess.run(skillctl_argv("check", "notes", "--json"), capture_output=True, text=True)
    assert check.returncode == 1 and "skills.notes.enabled true" in check.stdout
    assert session.begin("take notes in markdown and keep a meeting journal") == []
    assert skills.route("take notes in markdown and keep a meeting journal") == []
    assert manage(skills, action="enable", name="notes") == {"name": "notes", "enabled": True}
    assert subprocess.run(skillctl_argv("check", "notes", "--json"), capture_output=True, text=True).returncode == 0
    assert [m.name for m in session.begin("take notes in markdown and keep a meeting journal")] == ["notes"]


def test_enable_keeps_the_rest_of_the_config(project, home):
    config_toml(home, '# mine\ndefault_registry = "local"\n[skills.notes]\nenv = {A = "1"}\n')
    manage(open_skills(project), action="disable", name="notes")
    text = (home / "config" / "config.toml").read_text()
    assert "# mine" in text and load_config().skill_settings("notes") == {"env": {"A": "1"}, "enabled": False}


def test_enabling_an_unknown_skill_is_refused(project):
    assert manage(open_skills(project), action="enable", name="nope")["error"] == "tool.unknown_skill"


# --- install, create: only with the application's approval --------------------------------------


@pytest.mark.parametrize("action", ["install", "create"])
def test_without_an_approval_callback_install_and_create_are_refused(project, tmp_path, action):
    source = write_skill(tmp_path / "src" / "weather", NEW_SKILL)
    args = (
        {"source": str(source)} if action == "install" else {"name": "weather", "description": "d", "instructions": "i"}
    )
    reply = manage(open_skills(project), action=action, **args)
    assert reply["error"] == "management.needs_approval" and reply["hint"]
    assert not (project / ".agents" / "skills" / "weather").exists()


def test_a_declined_request_changes_nothing(project, tmp_path):
    asked: list[ApprovalRequest] = []
    skills = open_skills(project, approve=lambda request: asked.append(request) or False)
    source = write_skill(tmp_path / "src" / "weather", NEW_SKILL)
    assert manage(skills, action="install", source=str(source))["error"] == "management.declined"
    [request] = asked
    assert (request.action, request.name, request.source) == (Action.INSTALL, "weather", str(source))
    assert request.destination == str(project.resolve() / ".agents" / "skills")
    assert not (project / ".agents" / "skills" / "weather").exists()


def test_an_approved_install_installs_for_the_next_session(project, tmp_path):
    skills = open_skills(project, approve=lambda request: True)
    session = skills.session()
    source = write_skill(tmp_path / "src" / "weather", NEW_SKILL)
    reply = manage(skills, action="install", source=str(source))
    assert [c["name"] for c in reply["changes"]] == ["weather"] and "next session" in reply["note"]
    assert (project / ".agents" / "skills" / "weather" / "SKILL.md").is_file() and "weather" in skills.names
    assert json.loads(session.handle_tool_call("load_skill", {"name": "weather"}))["error"] == "tool.unknown_skill"
    skills.close()
    assert "Call the forecast API." in skills.handle_tool_call("load_skill", {"name": "weather"})


def test_an_approved_create_writes_a_valid_skill(project):
    asked: list[ApprovalRequest] = []
    skills = open_skills(project, approve=lambda request: asked.append(request) or True)
    reply = manage(
        skills,
        action="create",
        name="standup",
        description="Run the team's daily standup: yes, briefly.",
        instructions="# Standup\nAsk each person three questions.",
    )
    assert reply["created"] == "standup" and asked[0].action is Action.CREATE and asked[0].description.startswith("Run")
    skills.close()
    text = skills.handle_tool_call("load_skill", {"name": "standup"})
    assert "Ask each person three questions." in text
    assert skills.entry("standup").manifest.description == "Run the team's daily standup: yes, briefly."


def test_create_refuses_an_invalid_name_or_skill_and_keeps_nothing(project):
    skills = open_skills(project, approve=lambda request: True)
    bad_name = manage(skills, action="create", name="Bad Name", description="d", instructions="i")
    assert bad_name["error"] == "init.invalid_name"
    too_long = manage(skills, action="create", name="wordy", description="x" * 2000, instructions="i")
    assert too_long["error"] == "management.invalid_skill"
    assert not (project / ".agents" / "skills" / "wordy").exists()
    assert manage(skills, action="create", name="notes", description="d", instructions="i")["error"] == "init.exists"


def test_install_into_a_folder_of_skills_has_no_scope(tmp_path, home):
    write_skill(tmp_path / "skills" / "notes", "---\nname: notes\ndescription: Notes.\n---\n")
    skills = SkillSet.from_dir(tmp_path / "skills", semantic=False, manage_skills=True, approve=lambda r: True)
    assert manage(skills, action="install", source="weather")["error"] == "management.no_scope"


# --- delete ------------------------------------------------------------------------------------


def test_delete_needs_the_same_approval_as_install(project):
    assert manage(open_skills(project), action="delete", name="notes")["error"] == "management.needs_approval"
    asked: list[ApprovalRequest] = []
    skills = open_skills(project, approve=lambda request: asked.append(request) or False)
    assert manage(skills, action="delete", name="notes")["error"] == "management.declined"
    [request] = asked
    assert (request.action, request.name) == (Action.DELETE, "notes")
    assert request.destination == str(project / ".agents" / "skills" / "notes")
    assert (project / ".agents" / "skills" / "notes" / "SKILL.md").is_file()


def test_an_approved_delete_uninstalls_for_the_next_session(project, tmp_path):
    skills = open_skills(project, approve=lambda request: True)
    source = write_skill(tmp_path / "src" / "weather", NEW_SKILL)
    manage(skills, action="install", source=str(source))
    skills.close()
    session = skills.session()
    reply = manage(skills, action="delete", name="weather")
    assert [(c["name"], c["action"]) for c in reply["changes"]] == [("weather", "removed")]
    assert not (project / ".agents" / "skills" / "weather").exists() and "weather" not in skills.names
    assert "weather" not in (project / "skills.toml").read_text()
    assert "weather" in session.snapshot.names  # the running conversation keeps its snapshot


def test_a_skill_outside_the_install_folders_is_not_removable(project):
    write_skill(project / "skills" / "house", "---\nname: house\ndescription: Workspace skill.\n---\n")
    asked: list = []
    skills = open_skills(project, approve=lambda request: asked.append(request) or True)
    assert manage(skills, action="delete", name="house")["error"] == "management.not_removable"
    assert manage(skills, action="delete", name="ghost")["error"] == "tool.unknown_skill"
    assert not asked and (project / "skills" / "house" / "SKILL.md").is_file()
