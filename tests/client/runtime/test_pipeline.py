"""Skill pipelines: next_skill, conditional_next_skills through skill_transition, and every
rule that refuses a transition (each with its stable code)."""

from __future__ import annotations

import json

import pytest

from skillctl.config import Config
from skillctl.reporting import Reporter
from skillctl.runtime.pipeline import MAX_DEPTH, TRANSITION_TOOL, TransitionKind
from skillctl.skillset import SkillSet
from tests.client.runtime.conftest import write_skill

MISSING_BIN = "skillyard-test-no-such-binary"


def skill_md(name: str, body: str, extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: The {name} step of a pipeline.\n{extra}---\n{body}\n"


@pytest.fixture
def skills_dir(tmp_path, home):
    root = tmp_path / "skills"
    write_skill(root / "gather", skill_md("gather", "Gather the requirements.", "next_skill: triage\n"))
    write_skill(
        root / "triage",
        skill_md(
            "triage",
            "Classify the request.",
            (
                "next_skill: summary\n"
                "conditional_next_skills:\n"
                "  - {when: the user reports a bug, skill: fix-bug}\n"
                "  - {when: the user wants a feature, skill: plan-feature}\n"
                "  - {when: the request is about billing, skill: billing}\n"
                "  - {when: the request needs the cluster, skill: cluster}\n"
                "  - {when: the request is off, skill: archive}\n"
            ),
        ),
    )
    write_skill(root / "fix-bug", skill_md("fix-bug", "Reproduce, then fix."))
    write_skill(root / "plan-feature", skill_md("plan-feature", "Write a plan."))
    write_skill(root / "summary", skill_md("summary", "Summarise."))
    write_skill(root / "cluster", skill_md("cluster", "Use kubectl.", f"requires:\n  bins: [{MISSING_BIN}]\n"))
    write_skill(root / "archive", skill_md("archive", "Archive it."))
    write_skill(root / "ping", skill_md("ping", "Ping.", "next_skill: pong\n"))
    write_skill(root / "pong", skill_md("pong", "Pong.", "next_skill: ping\n"))
    write_skill(root / "dangling", skill_md("dangling", "Go nowhere.", "next_skill: nowhere\n"))
    return root


def open_skills(root, **kwargs) -> SkillSet:
    config = Config(skills={"archive": {"enabled": False}}, values={"skills": {"archive": {"enabled": False}}})
    return SkillSet.from_dir(root, semantic=False, config=config, reporter=Reporter(), **kwargs)


def tool_names(session) -> list[str]:
    return [t["function"]["name"] for t in session.tool_definitions("openai")]


def error(reply: str) -> str:
    return json.loads(reply)["error"]


# --- next_skill ------------------------------------------------------------------------------


def test_next_skill_follows_when_the_turn_ends_without_tool_calls(skills_dir):
    session = open_skills(skills_dir).session()
    session.begin("gather what we need")
    assert session.active_skill is None and session.on_turn_end(had_tool_calls=False) is None
    assert "Gather the requirements." in session.handle_tool_call("load_skill", {"name": "gather"})
    assert session.active_skill == "gather"
    assert session.on_turn_end(had_tool_calls=True) is None  # tool results still to come back
    transition = session.on_turn_end(had_tool_calls=False)
    assert (transition.source, transition.target, transition.kind, transition.depth) == (
        "gather",
        "triage",
        TransitionKind.NEXT,
        1,
    )
    assert session.active_skill == "triage" and "Classify the request." in transition.message
    assert session.transitions == [transition]


def test_a_skill_without_next_skill_ends_the_pipeline(skills_dir):
    session = open_skills(skills_dir).session()
    session.activate("summary")
    assert session.on_turn_end(had_tool_calls=False) is None and session.active_skill == "summary"


# --- conditional_next_skills and skill_transition ---------------------------------------------


def test_skill_transition_is_offered_only_while_the_active_skill_has_conditional_next_skills(skills_dir):
    session = open_skills(skills_dir).session()
    assert TRANSITION_TOOL not in tool_names(session)
    session.activate("gather")
    assert TRANSITION_TOOL not in tool_names(session)
    session.activate("triage")
    [spec] = [t["function"] for t in session.tool_definitions("openai") if t["function"]["name"] == TRANSITION_TOOL]
    skill = spec["parameters"]["properties"]["skill"]
    assert skill["enum"] == ["fix-bug", "plan-feature", "billing", "cluster", "archive"]
    assert "'fix-bug' when the user reports a bug" in skill["description"]
    assert "'plan-feature' when the user wants a feature" in spec["description"]
    session.handle_tool_call(TRANSITION_TOOL, {"skill": "fix-bug", "reason": "the login page crashes"})
    assert session.active_skill == "fix-bug" and TRANSITION_TOOL not in tool_names(session)


def test_skill_transition_answers_with_the_instructions_of_the_target(skills_dir):
    session = open_skills(skills_dir).session()
    session.activate("triage")
    reply = session.handle_tool_call(TRANSITION_TOOL, json.dumps({"skill": "plan-feature", "reason": "dark mode"}))
    assert "Write a plan." in reply and "the user wants a feature (dark mode)" in reply
    [transition] = session.transitions
    assert transition.kind is TransitionKind.CONDITIONAL and transition.target == "plan-feature"


def test_an_explicit_transition_wins_over_next_skill_which_is_the_fallback(skills_dir):
    session = open_skills(skills_dir).session()
    session.activate("triage")
    session.handle_tool_call(TRANSITION_TOOL, {"skill": "fix-bug"})
    assert session.on_turn_end(had_tool_calls=False) is None  # fix-bug has no next_skill
    session.activate("triage")
    assert session.on_turn_end(had_tool_calls=False).target == "summary"


def test_skill_transition_to_a_skill_not_listed_is_refused(skills_dir):
    session = open_skills(skills_dir).session()
    session.activate("triage")
    assert error(session.handle_tool_call(TRANSITION_TOOL, {"skill": "summary"})) == "pipeline.not_a_next_skill"
    assert session.active_skill == "triage"


def test_skill_transition_without_conditional_next_skills_is_refused(skills_dir):
    session = open_skills(skills_dir).session()
    assert error(session.handle_tool_call(TRANSITION_TOOL, {"skill": "fix-bug"})) == "pipeline.no_next_skills"
    session.activate("gather")
    assert error(session.handle_tool_call(TRANSITION_TOOL, {"skill": "fix-bug"})) == "pipeline.no_next_skills"
    assert error(session.handle_tool_call(TRANSITION_TOOL, {})) == "tool.bad_call"


# --- refused targets ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "code", "why"),
    [
        ("billing", "pipeline.unknown_skill", "no skill of that name"),
        ("archive", "pipeline.skill_disabled", "skills.archive.enabled true"),
        ("cluster", "pipeline.skill_gated", MISSING_BIN),
    ],
)
def test_skill_transition_to_an_unknown_disabled_or_gated_skill_is_refused_with_a_reason(skills_dir, target, code, why):
    session = open_skills(skills_dir).session()
    session.activate("triage")
    reply = json.loads(session.handle_tool_call(TRANSITION_TOOL, {"skill": target}))
    assert reply["error"] == code and why in reply["message"] and reply["hint"]
    assert session.active_skill == "triage" and session.transitions == []


def test_a_refused_next_skill_is_reported_and_does_not_happen(skills_dir):
    skills = open_skills(skills_dir)
    session = skills.session()
    session.activate("dangling")
    assert session.on_turn_end(had_tool_calls=False) is None
    [refused] = session.refused
    assert refused.code == "pipeline.unknown_skill" and (refused.source, refused.target) == ("dangling", "nowhere")
    assert "[pipeline.unknown_skill]" in skills.reporter.warnings[0] and session.active_skill == "dangling"


def test_ignore_gates_lets_a_pipeline_reach_gated_and_disabled_skills(skills_dir):
    session = open_skills(skills_dir, ignore_gates=True).session()
    session.activate("triage")
    assert "Use kubectl." in session.handle_tool_call(TRANSITION_TOOL, {"skill": "cluster"})


# --- depth -----------------------------------------------------------------------------------


def test_at_most_five_transitions_per_user_message(skills_dir):
    session = open_skills(skills_dir).session()
    session.begin("ping")
    session.activate("ping")
    targets = [t.target for t in iter(lambda: session.on_turn_end(had_tool_calls=False), None)]
    assert MAX_DEPTH == 5 and targets == ["pong", "ping", "pong", "ping", "pong"]
    assert [r.code for r in session.refused] == ["pipeline.depth_limit"]
    session.begin("ping again")  # a new user message: counting starts again
    assert session.refused == [] and session.on_turn_end(had_tool_calls=False).depth == 1


def test_skill_transitions_count_towards_the_depth_too(skills_dir):
    write_skill(
        skills_dir / "loop", skill_md("loop", "Loop.", "conditional_next_skills:\n  - {when: always, skill: loop}\n")
    )
    session = open_skills(skills_dir).session()
    session.activate("loop")
    replies = [session.handle_tool_call(TRANSITION_TOOL, {"skill": "loop"}) for _ in range(MAX_DEPTH + 1)]
    assert all("Loop." in r for r in replies[:MAX_DEPTH]) and error(replies[-1]) == "pipeline.depth_limit"


# --- policy ----------------------------------------------------------------------------------


def test_skill_transition_is_under_the_tool_policy(skills_dir):
    config = Config(values={"tools": {"deny": [TRANSITION_TOOL]}})
    session = SkillSet.from_dir(skills_dir, semantic=False, config=config).session()
    session.activate("triage")
    assert TRANSITION_TOOL not in tool_names(session)
    assert error(session.handle_tool_call(TRANSITION_TOOL, {"skill": "fix-bug"})) == "tool.not_allowed"
    minimal = SkillSet.from_dir(
        skills_dir, semantic=False, config=Config(values={"tools": {"profile": "minimal"}})
    ).session()
    minimal.activate("triage")
    assert TRANSITION_TOOL in tool_names(minimal)  # group:skills: reading and following skills


def test_a_skill_with_allowed_tools_can_still_hand_over(skills_dir):
    write_skill(
        skills_dir / "narrow",
        skill_md(
            "narrow",
            "Only read.",
            ("allowed-tools: [read]\nconditional_next_skills:\n  - {when: done, skill: summary}\n"),
        ),
    )
    session = open_skills(skills_dir).session()
    session.activate("narrow")
    assert "Summarise." in session.handle_tool_call(TRANSITION_TOOL, {"skill": "summary"})
