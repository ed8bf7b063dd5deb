"""Tool policy: every rule on its own (pure), then what a SkillSet session offers and refuses."""

from __future__ import annotations

import json

import pytest

from skillctl.config import Config
from skillctl.errors import SkillctlError
from skillctl.runtime.policy import ToolPolicy, normalise
from skillctl.skillset import SkillSet
from tests.client.runtime.conftest import write_skill


def policy(tools: dict | None = None, *, agent: str | None = None, agents: dict | None = None) -> ToolPolicy:
    values = {}
    if tools is not None:
        values["tools"] = tools
    if agents is not None:
        values["agents"] = {name: {"tools": table} for name, table in agents.items()}
    return ToolPolicy.from_config(Config(values=values), agent=agent)


def allowed(p: ToolPolicy, *names: str) -> dict[str, bool]:
    return {n: p.allows(n) for n in names}


# --- profiles -------------------------------------------------------------------------------


def test_no_config_allows_everything():
    p = policy()
    assert p.profile == "full" and all(allowed(p, "load_skill", "exec", "message", "mcp:any.tool", "whatever").values())
    assert ToolPolicy().allows("exec") and ToolPolicy.from_config(None).allows("exec")


def test_minimal_profile_allows_only_reading_skills():
    p = policy({"profile": "minimal"})
    assert allowed(
        p, "load_skill", "read_skill_file", "find_skills", "exec", "run_skill", "read", "mcp:x.y", "message"
    ) == {
        "load_skill": True,
        "read_skill_file": True,
        "find_skills": True,
        "exec": False,
        "run_skill": False,
        "read": False,
        "mcp:x.y": False,
        "message": False,
    }
    assert p.why_refused("exec") == "not in the 'minimal' tool profile"


def test_coding_profile_allows_files_code_and_skill_servers_not_messaging_or_web():
    p = policy({"profile": "coding"})
    assert allowed(
        p, "read", "write", "edit", "apply_patch", "exec", "process", "run_skill", "mcp:git.log", "load_skill"
    ) == dict.fromkeys(
        ["read", "write", "edit", "apply_patch", "exec", "process", "run_skill", "mcp:git.log", "load_skill"], True
    )
    assert allowed(p, "message", "web_fetch") == {"message": False, "web_fetch": False}


def test_messaging_profile_allows_messages_and_skills_only():
    p = policy({"profile": "messaging"})
    assert allowed(p, "message", "load_skill", "exec", "read", "mcp:slack.post") == {
        "message": True,
        "load_skill": True,
        "exec": False,
        "read": False,
        "mcp:slack.post": False,
    }


def test_unknown_profile_is_a_config_error():
    with pytest.raises(SkillctlError) as err:
        policy({"profile": "root"})
    assert err.value.code == "policy.unknown_profile"


# --- allow, also_allow, deny ------------------------------------------------------------------


def test_deny_wins_over_profile_allow_and_also_allow():
    p = policy({"profile": "full", "allow": ["exec", "read"], "also_allow": ["exec"], "deny": ["exec"]})
    assert not p.allows("exec") and p.allows("read")
    assert p.why_refused("exec") == "denied by [tools] deny (exec)"


def test_also_allow_adds_to_the_profile():
    p = policy({"profile": "minimal", "also_allow": ["web_fetch", "mcp:docs.*"]})
    assert allowed(p, "web_fetch", "mcp:docs.search", "web_search", "mcp:other.search") == {
        "web_fetch": True,
        "mcp:docs.search": True,
        "web_search": False,
        "mcp:other.search": False,
    }


def test_allow_is_a_ceiling_even_for_the_full_profile():
    p = policy({"allow": ["group:skills", "read"]})
    assert allowed(p, "read", "load_skill", "write", "mcp:x.y") == {
        "read": True,
        "load_skill": True,
        "write": False,
        "mcp:x.y": False,
    }
    assert p.why_refused("write") == "not in [tools] allow"


def test_allow_narrows_the_profile_never_widens_it():
    p = policy({"profile": "minimal", "allow": ["exec", "load_skill"]})
    assert allowed(p, "exec", "load_skill") == {"exec": False, "load_skill": True}


# --- per agent --------------------------------------------------------------------------------


def test_an_agents_profile_replaces_the_global_one():
    agents = {"bot": {"profile": "messaging"}}
    assert policy({"profile": "coding"}, agent="bot", agents=agents).allows("message")
    assert not policy({"profile": "coding"}, agent="bot", agents=agents).allows("exec")
    assert policy({"profile": "coding"}, agent="other", agents=agents).allows("exec")  # other agents: global


def test_an_agents_deny_adds_to_the_global_deny():
    p = policy({"deny": ["exec"]}, agent="claude", agents={"claude": {"deny": ["run_skill"]}})
    assert allowed(p, "exec", "run_skill", "read") == {"exec": False, "run_skill": False, "read": True}
    assert p.why_refused("run_skill") == "denied by [agents.claude.tools] deny (run_skill)"


def test_an_agent_can_narrow_the_global_allow_never_lift_it():
    p = policy({"allow": ["read", "load_skill"]}, agent="a", agents={"a": {"allow": ["read", "exec"]}})
    assert allowed(p, "read", "load_skill", "exec") == {"read": True, "load_skill": False, "exec": False}
    assert p.why_refused("exec") == "not in [tools] allow"


def test_no_agent_means_only_the_global_rules():
    assert policy({"deny": []}, agents={"claude": {"deny": ["exec"]}}).allows("exec")


# --- patterns, groups, names ------------------------------------------------------------------


def test_mcp_server_wildcards():
    p = policy({"deny": ["mcp:github.*"]})
    assert allowed(p, "mcp:github.create_issue", "mcp:gitlab.create_issue", "mcp:github") == {
        "mcp:github.create_issue": False,
        "mcp:gitlab.create_issue": True,
        "mcp:github": True,
    }
    assert not policy({"deny": ["*"]}).allows("load_skill")
    assert allowed(policy({"deny": ["exec*"]}), "exec", "execute", "process") == {
        "exec": False,
        "execute": False,
        "process": True,
    }


def test_builtin_groups_expand():
    p = policy({"deny": ["group:fs", "group:web", "group:runtime", "group:messaging", "group:mcp"]})
    refused = [
        "read",
        "write",
        "edit",
        "apply_patch",
        "web_search",
        "web_fetch",
        "exec",
        "process",
        "run_skill",
        "message",
        "mcp:a.b",
    ]
    assert not any(p.allows(name) for name in refused)
    assert p.allows("load_skill") and p.why_refused("write") == "denied by [tools] deny (group:fs)"


def test_user_defined_groups_nest_and_a_cycle_ends():
    tools = {
        "profile": "minimal",
        "also_allow": ["group:docs"],
        "groups": {"docs": ["mcp:notion.*", "group:web", "group:more"], "more": ["grep", "group:docs"]},
    }
    p = policy(tools)
    assert allowed(p, "mcp:notion.search", "web_fetch", "grep", "exec") == {
        "mcp:notion.search": True,
        "web_fetch": True,
        "grep": True,
        "exec": False,
    }


@pytest.mark.parametrize(
    "tools, code",
    [
        ({"deny": ["group:nope"]}, "policy.unknown_group"),
        ({"groups": {"fs": ["read"]}}, "policy.invalid"),  # a built-in group cannot be redefined
        ({"groups": {"Bad Name": ["read"]}}, "policy.invalid"),
        ({"allow": "exec"}, "policy.invalid"),
        ({"deny": [1]}, "policy.invalid"),
        ({"denylist": ["exec"]}, "policy.invalid"),  # a typo must not silently allow everything
        ("coding", "policy.invalid"),
    ],
)
def test_config_errors_have_stable_codes(tools, code):
    with pytest.raises(SkillctlError) as err:
        policy(tools)
    assert err.value.code == code


def test_agent_sections_are_checked_too():
    with pytest.raises(SkillctlError) as err:
        policy({}, agent="a", agents={"a": {"groups": {"x": ["read"]}}})  # groups are global only
    assert err.value.code == "policy.invalid"


def test_names_are_case_insensitive_and_other_agents_names_map_to_ours():
    assert [
        normalise(n) for n in ("Bash", "Bash(git add:*)", "WebFetch", "WebSearch", "MultiEdit", "Read", "apply-patch")
    ] == ["exec", "exec", "web_fetch", "web_search", "edit", "read", "apply_patch"]
    assert not policy({"deny": ["BASH"]}).allows("exec")
    assert not policy({"deny": ["mcp:GitHub.*"]}).allows("mcp:github.Search")


def test_check_raises_the_stable_code():
    with pytest.raises(SkillctlError) as err:
        policy({"deny": ["exec"]}).check("exec")
    assert err.value.code == "tool.not_allowed" and "denied by [tools] deny" in err.value.message


# --- a loaded skill's allowed-tools -------------------------------------------------------------


def test_a_skill_narrows_to_its_allowed_tools_plus_reading_skills_and_its_own_server():
    p = ToolPolicy().tightened("git-helper", ["Read", "Bash(git status:*)"])
    assert allowed(
        p, "read", "exec", "load_skill", "read_skill_file", "mcp:git-helper.log", "write", "mcp:other.x", "run_skill"
    ) == {
        "read": True,
        "exec": True,
        "load_skill": True,
        "read_skill_file": True,
        "mcp:git-helper.log": True,
        "write": False,
        "mcp:other.x": False,
        "run_skill": False,
    }
    assert p.why_refused("write") == "not in the allowed-tools of the loaded skill 'git-helper'"


def test_a_skill_never_widens_the_config():
    p = policy({"profile": "minimal", "deny": ["read_skill_file"]}).tightened("s", ["Bash", "Write", "read_skill_file"])
    assert allowed(p, "exec", "write", "read_skill_file", "load_skill") == {
        "exec": False,
        "write": False,
        "read_skill_file": False,
        "load_skill": True,
    }


def test_two_skills_narrow_to_what_both_allow():
    p = ToolPolicy().tightened("a", ["Read", "Bash"]).tightened("b", ["Read", "Write"])
    assert allowed(p, "read", "exec", "write") == {"read": True, "exec": False, "write": False}


def test_a_skill_without_allowed_tools_changes_nothing_and_loading_twice_is_once():
    p = ToolPolicy()
    assert p.tightened("a", []) is p
    once = p.tightened("a", ["Read"])
    assert once.tightened("a", ["Read"]) is once


def test_allows_server_before_starting_one():
    assert ToolPolicy().allows_server("tester")
    assert not policy({"profile": "minimal"}).allows_server("tester")
    assert policy({"profile": "minimal", "also_allow": ["mcp:tester.echo"]}).allows_server("tester")
    assert not policy({"deny": ["mcp:*"], "also_allow": ["mcp:tester.echo"]}).allows_server("tester")
    assert policy({"deny": ["mcp:tester.crash"]}).allows_server("tester")


# --- in a SkillSet session ------------------------------------------------------------------------


@pytest.fixture
def skills_dir(tmp_path, home):
    root = tmp_path / "skills"
    write_skill(
        root / "notes",
        "---\nname: notes\ndescription: Take notes.\n---\nRead references/guide.md.\n",
        {"references/guide.md": "the guide\n"},
    )
    write_skill(
        root / "git-helper",
        "---\nname: git-helper\ndescription: Inspect git history.\n"
        "allowed-tools: Read Bash(git log:*)\n---\nUse git log.\n",
    )
    return root


def session_skills(skills_dir, tools: dict, **kwargs) -> SkillSet:
    return SkillSet.from_dir(skills_dir, semantic=False, config=Config(values={"tools": tools}), **kwargs)


def names(skills: SkillSet) -> list[str]:
    return [t["name"] for t in skills.tool_definitions("anthropic")]


def test_a_session_offers_only_allowed_tools_and_refuses_the_others(skills_dir):
    skills = session_skills(skills_dir, {"deny": ["read_skill_file"]})
    assert names(skills) == ["load_skill"]
    reply = json.loads(skills.handle_tool_call("read_skill_file", {"name": "notes", "path": "references/guide.md"}))
    assert reply["error"] == "tool.not_allowed" and "denied by [tools] deny" in reply["message"]
    assert "Read references/guide.md." in skills.handle_tool_call("load_skill", {"name": "notes"})


def test_the_agents_section_applies_to_that_agent(skills_dir):
    config = Config(values={"agents": {"claude": {"tools": {"deny": ["load_skill"]}}}})
    assert [
        t["name"]
        for t in SkillSet.from_dir(skills_dir, semantic=False, config=config, agent="claude").tool_definitions(
            "anthropic"
        )
    ] == ["read_skill_file"]
    assert names(SkillSet.from_dir(skills_dir, semantic=False, config=config)) == ["load_skill", "read_skill_file"]


def test_loading_a_skill_with_allowed_tools_narrows_the_rest_of_the_session(skills_dir):
    skills = session_skills(skills_dir, {"profile": "coding"})
    assert skills.tool_policy.allows("write") and skills.tool_policy.allows("exec")
    skills.handle_tool_call("load_skill", {"name": "git-helper"})
    assert skills.tool_policy.allows("read") and skills.tool_policy.allows("exec")  # Read, Bash(git log:*)
    assert not skills.tool_policy.allows("write")
    assert names(skills) == ["load_skill", "read_skill_file"]  # reading skills stays possible


def test_a_policy_given_in_code_replaces_the_configs(skills_dir):
    skills = session_skills(
        skills_dir,
        {"profile": "full"},
        tool_policy=ToolPolicy.from_config(Config(values={"tools": {"deny": ["load_skill"]}})),
    )
    assert names(skills) == ["read_skill_file"]


def test_an_invalid_policy_fails_loudly_instead_of_allowing_everything(skills_dir):
    skills = session_skills(skills_dir, {"profile": "everything"})
    with pytest.raises(SkillctlError) as err:
        skills.tool_definitions()
    assert err.value.code == "policy.unknown_profile"
