"""The agent loop end to end, the model faked at the HTTP edge (an OpenAI-compatible server on
loopback): a three-step pipeline (next_skill, then skill_transition) and a tool the policy
refuses, whose refusal the model reads as the tool's result."""

from __future__ import annotations

import json

import pytest

from skillctl.config import Config
from skillctl.errors import SkillctlError
from skillctl.runtime.agent_loop import MAX_MODEL_CALLS, OpenAIChat, run_turn
from skillctl.runtime.pipeline import TransitionKind
from skillctl.skillset import SkillSet
from tests.client.runtime.conftest import write_skill
from tests.client.runtime.fake_llm import FakeChatServer, reply_calling, reply_saying

API_KEY = "sk-test-key"


@pytest.fixture
def skills(tmp_path, home):
    root = tmp_path / "skills"
    write_skill(
        root / "intake",
        "---\nname: intake\ndescription: Take in a support request.\nnext_skill: triage\n---\n"
        "Collect the facts: what happened, when, to whom.\n",
    )
    write_skill(
        root / "triage",
        "---\nname: triage\ndescription: Classify a support request.\nconditional_next_skills:\n"
        "  - {when: the user reports a bug, skill: fix-bug}\n  - {when: the user wants a feature, skill: plan-feature}\n"
        "---\nDecide what kind of request it is, then hand over with skill_transition.\n",
    )
    write_skill(
        root / "fix-bug",
        "---\nname: fix-bug\ndescription: Fix a reported bug.\n---\n"
        "Reproduce the bug first. Read references/runbook.md.\n",
        {"references/runbook.md": "restart it\n"},
    )
    write_skill(root / "plan-feature", "---\nname: plan-feature\ndescription: Plan a feature.\n---\nWrite a plan.\n")
    config = Config(values={"tools": {"deny": ["read_skill_file"]}})
    with SkillSet.from_dir(root, semantic=False, config=config) as skills:
        yield skills


def tool_names(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def last(request: dict) -> dict:
    return request["messages"][-1]


def test_a_three_step_pipeline_and_a_refused_tool(skills):
    script = [
        reply_calling("load_skill", name="intake"),
        reply_saying("The login page crashes on enter, since this morning, for every user."),
        reply_calling("skill_transition", skill="fix-bug", reason="the login page crashes"),
        reply_calling("read_skill_file", name="fix-bug", path="references/runbook.md"),
        reply_saying("I could not read the runbook here; reproduce it with: open /login, press enter."),
    ]
    session = skills.session()
    messages = [{"role": "system", "content": "You are a support agent.\n\n" + skills.prompt(tier="catalog")}]
    with FakeChatServer(script) as llm:
        model = OpenAIChat(llm.base_url, model="fake-model", api_key=API_KEY)
        result = run_turn(session, messages, "the login page crashes when I press enter", model)

    first, after_load, after_handover, after_transition, after_refusal = llm.requests
    assert first["model"] == "fake-model" and last(first) == {
        "role": "user",
        "content": "the login page crashes when I press enter",
    }
    assert tool_names(first) == ["load_skill"]  # read_skill_file is denied: not offered
    assert all(h["Authorization"] == f"Bearer {API_KEY}" for h in llm.headers)
    assert "Collect the facts" in last(after_load)["content"] and last(after_load)["role"] == "tool"

    # step 1 -> 2: intake's turn ended without tool calls, so its next_skill (triage) follows
    handover = last(after_handover)
    assert (
        handover["role"] == "system"
        and "The skill 'intake' hands over to 'triage' (its next_skill" in handover["content"]
    )
    assert "Decide what kind of request it is" in handover["content"]
    [transition_tool] = [t["function"] for t in after_handover["tools"] if t["function"]["name"] == "skill_transition"]
    assert transition_tool["parameters"]["properties"]["skill"]["enum"] == ["fix-bug", "plan-feature"]

    # step 2 -> 3: the model branches with skill_transition and reads fix-bug's instructions
    assert last(after_transition)["role"] == "tool" and "Reproduce the bug first." in last(after_transition)["content"]
    assert "skill_transition" not in tool_names(after_transition)  # fix-bug lists no next skills

    # the refused tool: the model gets the refusal as the tool's result, and carries on
    refusal = json.loads(last(after_refusal)["content"])
    assert last(after_refusal)["role"] == "tool" and refusal["error"] == "tool.not_allowed"
    assert "denied by [tools] deny (read_skill_file)" in refusal["message"]

    assert result.finished and result.reply.startswith("I could not read the runbook")
    assert (result.model_calls, result.tool_calls) == (5, 3)
    assert [(t.source, t.target, t.kind) for t in result.transitions] == [
        ("intake", "triage", TransitionKind.NEXT),
        ("triage", "fix-bug", TransitionKind.CONDITIONAL),
    ]
    assert session.active_skill == "fix-bug"
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "system",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]


def test_a_model_that_never_stops_calling_tools_is_stopped(skills):
    with FakeChatServer([reply_calling("load_skill", name="plan-feature")] * (MAX_MODEL_CALLS + 1)) as llm:
        result = run_turn(skills.session(), [], "plan dark mode", OpenAIChat(llm.base_url, model="fake"))
    assert not result.finished and result.model_calls == MAX_MODEL_CALLS == len(llm.requests)
    assert "Authorization" not in llm.headers[0]  # no key, no header


def test_a_failing_server_is_an_error_with_a_code(skills):
    with FakeChatServer([]) as llm:
        with pytest.raises(SkillctlError) as err:
            run_turn(skills.session(), [], "hello", OpenAIChat(llm.base_url, model="fake"))
    assert err.value.code == "model.http_error" and "500" in err.value.message
    with pytest.raises(SkillctlError) as err:
        OpenAIChat(llm.base_url, model="fake").complete([], [])
    assert err.value.code == "model.unreachable"
    assert "connection refused (is the model server running on that port?)" in err.value.message


def test_a_key_never_goes_to_a_remote_server_over_plain_http():
    with pytest.raises(SkillctlError) as err:
        OpenAIChat("http://models.example.com/v1", model="fake", api_key=API_KEY)
    assert err.value.code == "transport.insecure_url"
    assert API_KEY not in repr(OpenAIChat("https://models.example.com/v1", model="m", api_key=API_KEY))
