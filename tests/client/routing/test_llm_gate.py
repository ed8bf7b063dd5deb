"""The optional LLM classifier (routing/llm_gate.py) against a loopback OpenAI-compatible fake."""

from __future__ import annotations

import json
import logging
import time

import pytest

from skillctl.config import Config
from skillctl.errors import UsageError
from skillctl.routing.llm_gate import (
    FAILURE_PAUSE_S,
    Candidate,
    FileCache,
    LlmDecision,
    LlmGate,
    LlmGateSettings,
    MemoryCache,
    parse_decision,
)
from tests.client.runtime.fake_llm import FakeChatServer, reply_saying

ADDER = Candidate("adder", "Use when a user asks to sum, total or add numbers.", 0.41)
TIMER = Candidate("timer", "Start, stop and list countdown timers.", 0.38)
NOTES = Candidate("notes", "Write and search the user's notes.", 0.12)
CANDIDATES = [ADDER, TIMER, NOTES]
MESSAGE = "add up 12, 7 and 30 for me"


def answering(skills: list[str], reason: str = "it asks to add numbers"):
    return reply_saying(json.dumps({"skills": skills, "reason": reason}))


def gate_on(llm: FakeChatServer, *, cache=None, timeout: float = 2.0, clock=time.monotonic) -> LlmGate:
    settings = LlmGateSettings(base_url=llm.base_url, model="router-mini", api_key="sk-test", timeout=timeout)
    return LlmGate(settings, cache=cache, clock=clock)


def test_good_answer_chooses_among_the_candidates():
    with FakeChatServer([answering(["adder"])]) as llm:
        decision = gate_on(llm).decide(MESSAGE, CANDIDATES)
    assert decision == LlmDecision(names=("adder",), reason="it asks to add numbers")
    body = llm.requests[0]
    assert body["model"] == "router-mini"
    assert llm.headers[0]["Authorization"] == "Bearer sk-test"
    shown = json.loads(body["messages"][-1]["content"])
    assert shown["message"] == MESSAGE
    assert [s["name"] for s in shown["skills"]] == ["adder", "timer", "notes"]
    assert shown["skills"][0]["description"] == ADDER.description


def test_an_empty_choice_means_no_skill():
    with FakeChatServer([answering([], "small talk")]) as llm:
        decision = gate_on(llm).decide("thanks, that was quick", CANDIDATES)
    assert decision is not None and decision.names == () and decision.reason == "small talk"


def test_the_model_sees_the_best_five_by_offline_score():
    many = [Candidate(f"skill-{i}", f"does thing {i}", score=i / 10) for i in range(8)]
    with FakeChatServer([answering(["skill-7"])]) as llm:
        gate_on(llm).decide(MESSAGE, many)
    shown = json.loads(llm.requests[0]["messages"][-1]["content"])["skills"]
    assert [s["name"] for s in shown] == ["skill-7", "skill-6", "skill-5", "skill-4", "skill-3"]


def test_a_slow_model_times_out_to_the_offline_decision(caplog):
    def slow(body: dict) -> dict:
        time.sleep(1.5)
        return answering(["adder"])

    caplog.set_level(logging.DEBUG, logger="skillctl.routing.llm_gate")
    with FakeChatServer([slow]) as llm:
        start = time.perf_counter()
        decision = gate_on(llm, timeout=0.3).decide(MESSAGE, CANDIDATES)
        waited = time.perf_counter() - start
    assert decision is None
    assert waited < 1.2
    assert "offline decision stands" in caplog.text


def test_a_broken_endpoint_falls_back_and_pauses_consulting(caplog):
    now = [1000.0]
    caplog.set_level(logging.DEBUG, logger="skillctl.routing.llm_gate")
    with FakeChatServer([]) as llm:  # every request answered 500
        gate = gate_on(llm, clock=lambda: now[0])
        assert gate.decide(MESSAGE, CANDIDATES) is None
        assert gate.decide(MESSAGE, CANDIDATES) is None  # paused: not asked again
        assert len(llm.requests) == 1
        now[0] += FAILURE_PAUSE_S + 1
        assert gate.decide(MESSAGE, CANDIDATES) is None
        assert len(llm.requests) == 2
    assert "model.http_error" in caplog.text


def test_an_unreachable_endpoint_falls_back():
    with FakeChatServer([]) as llm:
        url = llm.base_url
    settings = LlmGateSettings(base_url=url, model="m", timeout=0.5)
    assert LlmGate(settings).decide(MESSAGE, CANDIDATES) is None


@pytest.mark.parametrize(
    "content",
    [
        "Sure, the adder skill fits.",
        '{"skills": "adder"}',
        '{"skills": [1]}',
        '["adder"]',
        '{"skills": ["adder"',
    ],
)
def test_an_answer_that_is_not_the_json_asked_for_falls_back(content, caplog):
    caplog.set_level(logging.DEBUG, logger="skillctl.routing.llm_gate")
    with FakeChatServer([reply_saying(content)]) as llm:
        assert gate_on(llm).decide(MESSAGE, CANDIDATES) is None
    assert "answer refused" in caplog.text


def test_a_chat_message_that_is_not_an_object_falls_back():
    class OddServer:
        def complete(self, messages: list[dict], tools: list[dict]):
            return "adder"

    settings = LlmGateSettings(base_url="http://127.0.0.1:9/v1", model="m")
    assert LlmGate(settings, chat=OddServer()).decide(MESSAGE, CANDIDATES) is None


def test_a_made_up_name_discredits_the_whole_answer():
    with FakeChatServer([answering(["adder", "calculator"])]) as llm:
        assert gate_on(llm).decide(MESSAGE, CANDIDATES) is None


def test_a_fenced_answer_is_read_and_trimmed_to_three_distinct_names():
    fenced = "```json\n" + json.dumps({"skills": ["timer", "adder", "timer", "notes", "adder"]}) + "\n```"
    decision = parse_decision(fenced, ["adder", "timer", "notes"])
    assert decision.names == ("timer", "adder", "notes")
    assert decision.reason == ""


def test_a_wide_margin_skips_the_model():
    with FakeChatServer([answering(["adder"])]) as llm:
        gate = gate_on(llm)
        assert not gate.consults(gate.settings.skip_margin)
        assert gate.decide(MESSAGE, CANDIDATES, margin=gate.settings.skip_margin + 0.1) is None
        assert llm.requests == []
        assert gate.decide(MESSAGE, CANDIDATES, margin=gate.settings.skip_margin / 2) is not None


def test_the_same_message_and_candidate_set_is_answered_from_the_cache():
    with FakeChatServer([answering(["adder"])]) as llm:
        gate = gate_on(llm, cache=MemoryCache(ttl=60))
        first = gate.decide(MESSAGE, CANDIDATES)
        again = gate.decide(MESSAGE, list(reversed(CANDIDATES)))
    assert len(llm.requests) == 1
    assert first is not None and not first.cached
    assert again == LlmDecision(names=("adder",), reason="it asks to add numbers", cached=True)


def test_another_candidate_set_or_message_asks_again():
    with FakeChatServer([answering(["adder"]), answering([]), answering(["timer"])]) as llm:
        gate = gate_on(llm, cache=MemoryCache(ttl=60))
        gate.decide(MESSAGE, CANDIDATES)
        gate.decide(MESSAGE, [ADDER, TIMER])
        gate.decide("start a ten minute timer", CANDIDATES)
    assert len(llm.requests) == 3


def test_the_file_cache_outlives_the_process_until_its_ttl(tmp_path):
    now = [5000.0]
    with FakeChatServer([answering(["adder"]), answering(["timer"])]) as llm:
        gate_on(llm, cache=FileCache(tmp_path, ttl=60, clock=lambda: now[0])).decide(MESSAGE, CANDIDATES)
        fresh = gate_on(llm, cache=FileCache(tmp_path, ttl=60, clock=lambda: now[0]))
        assert fresh.decide(MESSAGE, CANDIDATES) == LlmDecision(("adder",), "it asks to add numbers", cached=True)
        assert len(llm.requests) == 1
        now[0] += 61
        assert fresh.decide(MESSAGE, CANDIDATES).names == ("timer",)
    assert len(llm.requests) == 2
    stored = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    assert [s["names"] for s in stored] == [["timer"]]
    assert MESSAGE not in json.dumps(stored)  # what was asked is not kept, only the answer


def test_failures_are_not_cached(tmp_path):
    with FakeChatServer([reply_saying("no idea"), answering(["adder"])]) as llm:
        assert gate_on(llm, cache=FileCache(tmp_path, ttl=60)).decide(MESSAGE, CANDIDATES) is None
        assert gate_on(llm, cache=FileCache(tmp_path, ttl=60)).decide(MESSAGE, CANDIDATES).names == ("adder",)


def test_off_by_default_even_with_the_endpoint_in_the_environment():
    env = {"SKILLYARD_LLM_BASE_URL": "http://127.0.0.1:9/v1", "SKILLYARD_LLM_MODEL": "m"}
    assert LlmGate.from_config(Config(), env=env) is None


def test_config_turns_it_on_with_the_environments_endpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path))
    env = {
        "SKILLYARD_LLM_BASE_URL": "http://127.0.0.1:9/v1",
        "SKILLYARD_LLM_MODEL": "m",
        "SKILLYARD_LLM_API_KEY": "sk-secret",
    }
    config = Config(values={"routing": {"llm": {"enabled": True, "skip_margin": 0.2, "timeout": 1.5}}})
    gate = LlmGate.from_config(config, env=env)
    assert gate is not None
    assert gate.settings == LlmGateSettings("http://127.0.0.1:9/v1", "m", "sk-secret", skip_margin=0.2, timeout=1.5)
    assert "sk-secret" not in repr(gate.settings) + repr(gate)


def test_routing_own_endpoint_wins_and_the_environment_switch_wins_over_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path))
    env = {"SKILLYARD_LLM_BASE_URL": "http://127.0.0.1:9/v1", "SKILLYARD_LLM_MODEL": "big"}
    own = {"enabled": False, "model": "small"}
    config = Config(values={"routing": {"llm": own}})
    assert LlmGate.from_config(config, env=env) is None
    gate = LlmGate.from_config(config, env={**env, "SKILLYARD_LLM_ROUTING": "1"})
    assert gate is not None and gate.settings.model == "small"
    on = Config(values={"routing": {"llm": {"enabled": True}}})
    assert LlmGate.from_config(on, env={**env, "SKILLYARD_LLM_ROUTING": "0"}) is None


def test_from_config_caches_answers_in_the_state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path))
    with FakeChatServer([answering(["adder"])]) as llm:
        config = Config(values={"routing": {"llm": {"enabled": True, "base_url": llm.base_url, "model": "m"}}})
        LlmGate.from_config(config, env={}).decide(MESSAGE, CANDIDATES)
        again = LlmGate.from_config(config, env={}).decide(MESSAGE, CANDIDATES)
    assert again is not None and again.cached
    assert len(list((tmp_path / "state" / "routing-llm").glob("*.json"))) == 1


def test_cache_ttl_zero_never_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path))
    with FakeChatServer([answering(["adder"]), answering(["adder"])]) as llm:
        values = {"enabled": True, "base_url": llm.base_url, "model": "m", "cache_ttl": 0}
        gate = LlmGate.from_config(Config(values={"routing": {"llm": values}}), env={})
        gate.decide(MESSAGE, CANDIDATES)
        gate.decide(MESSAGE, CANDIDATES)
    assert len(llm.requests) == 2


@pytest.mark.parametrize(
    "values",
    [
        {"enabled": True},  # no endpoint anywhere
        {"enabled": "yes", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
        {"enabled": True, "base_url": "http://127.0.0.1:9/v1", "model": "m", "timeout": 0},
        {"enabled": True, "base_url": "http://127.0.0.1:9/v1", "model": "m", "skip_margin": "small"},
        {"enabled": True, "base_url": "http://127.0.0.1:9/v1", "model": "m", "cache_ttl": -1},
    ],
)
def test_a_wrong_setting_is_a_config_error(values):
    with pytest.raises(UsageError) as caught:
        LlmGate.from_config(Config(values={"routing": {"llm": values}}), env={})
    assert caught.value.code == "config.invalid"


def test_an_endpoint_in_clear_text_off_this_machine_is_refused():
    values = {"enabled": True, "base_url": "http://203.0.113.7/v1", "model": "m"}
    with pytest.raises(UsageError) as caught:
        LlmGate.from_config(Config(values={"routing": {"llm": values}}), env={})
    assert caught.value.code == "transport.insecure_url"
