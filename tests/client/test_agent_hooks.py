"""skillctl.agent_hooks: the Claude Code event, its transcript, and settings.json edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillctl import agent_hooks
from skillctl.errors import SkillctlError


def test_parse_event_reads_prompt_cwd_session_and_transcript(tmp_path):
    event = agent_hooks.parse_event(
        json.dumps(
            {
                "session_id": "abc",
                "cwd": str(tmp_path),
                "prompt": "rotate it",
                "transcript_path": "/t.jsonl",
                "hook_event_name": "UserPromptSubmit",
            }
        )
    )
    assert event == agent_hooks.PromptEvent("rotate it", tmp_path, "abc", Path("/t.jsonl"))


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"prompt": 3}', '{"cwd": "/"}'])
def test_parse_event_refuses_what_is_not_a_prompt_event(text):
    with pytest.raises(SkillctlError) as info:
        agent_hooks.parse_event(text)
    assert info.value.code == "hook.bad_event"


def _user(text):
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}})


def test_transcript_prompts_are_the_last_user_texts_without_the_current_one(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = [
        _user("first question"),
        json.dumps(
            {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "answer"}]}}
        ),
        _user([{"type": "tool_result", "tool_use_id": "x", "content": "tool output"}]),  # not a prompt
        _user([{"type": "text", "text": "rotate report.pdf"}]),
        "{broken json",
        _user("and invoice.pdf too"),
    ]
    path.write_text("\n".join(lines) + "\n")
    assert agent_hooks.transcript_prompts(path, current="and invoice.pdf too") == [
        "first question",
        "rotate report.pdf",
    ]
    assert agent_hooks.transcript_prompts(path, current="something new", limit=1) == ["and invoice.pdf too"]
    assert agent_hooks.transcript_prompts(tmp_path / "missing.jsonl", current="x") == []
    assert agent_hooks.transcript_prompts(None, current="x") == []


def test_install_adds_the_hook_and_keeps_everything_else(tmp_path):
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    other = {"type": "command", "command": "echo branch"}
    settings.write_text(json.dumps({"model": "opus", "hooks": {"UserPromptSubmit": [{"hooks": [other]}], "Stop": []}}))
    assert agent_hooks.install_claude(settings, "/venv/bin/skillctl hook claude") is True
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and data["hooks"]["Stop"] == []
    groups = data["hooks"]["UserPromptSubmit"]
    assert groups[0] == {"hooks": [other]}
    assert groups[1] == {"hooks": [{"type": "command", "command": "/venv/bin/skillctl hook claude", "timeout": 30}]}
    assert agent_hooks.claude_installed(settings)


def test_install_is_idempotent_and_updates_a_moved_executable(tmp_path):
    settings = tmp_path / "settings.json"
    assert agent_hooks.install_claude(settings, "/old/skillctl hook claude") is True
    before = settings.read_text()
    assert agent_hooks.install_claude(settings, "/old/skillctl hook claude") is False
    assert settings.read_text() == before
    assert agent_hooks.install_claude(settings, "/new/skillctl hook claude") is True
    hooks = [h for g in json.loads(settings.read_text())["hooks"]["UserPromptSubmit"] for h in g["hooks"]]
    assert [h["command"] for h in hooks] == ["/new/skillctl hook claude"]


@pytest.mark.parametrize("text", ["{not json", '["a list"]', '{"hooks": {"UserPromptSubmit": {"a": 1}}}'])
def test_install_refuses_a_settings_file_it_cannot_edit_and_leaves_it_alone(tmp_path, text):
    settings = tmp_path / "settings.json"
    settings.write_text(text)
    with pytest.raises(SkillctlError) as info:
        agent_hooks.install_claude(settings, "skillctl hook claude")
    assert info.value.code == "hook.settings_invalid" and info.value.hint
    assert settings.read_text() == text
    assert not agent_hooks.claude_installed(settings)
