"""The learned gate (routing/gate.py): a skill's own words are never overruled, the shipped
coefficients match their training data, and inference needs numpy only.

Every example request here was written for these tests (issue 37), none taken from a benchmark set.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from skillctl.routing import followers, gate
from skillctl.routing.match import Match, Stage

ROOT = Path(__file__).resolve().parents[3]
TRAINING = ROOT / "bench" / "data" / "routing" / "training.jsonl"

# Skills whose stated use is exactly a request (issue 37: "the adder example and a dozen like
# it"); many such requests read like chat when no skill for them is installed.
EXACT_USE = [
    ("adder", "Use when a user asks to sum, total or add numbers.", "add up 12, 7 and 30 for me"),
    (
        "unit-converter",
        "Use when a user asks to convert a quantity between units of measure, such as miles to kilometres.",
        "convert 26.2 miles to kilometres",
    ),
    (
        "timezone-converter",
        "Use when a user asks what time it is in another time zone or to convert a time between zones.",
        "convert 3pm Berlin time to Tokyo time",
    ),
    ("word-counter", "Use when a user asks how many words or characters a text has.", "count the words in my essay"),
    ("password-generator", "Use when a user asks to generate a strong random password.", "generate a random password"),
    ("dice-roller", "Use when a user asks to roll dice, such as a d6 or a d20.", "roll two twenty-sided dice"),
    ("joke-teller", "Use when a user asks for a joke.", "tell me a joke"),
    (
        "spell-checker",
        "Use when a user asks to check the spelling of a text.",
        "check the spelling of: recieve the pakage tomorow",
    ),
    (
        "translator",
        "Use when a user asks to translate text into another language.",
        "translate this text into Italian: good night and sleep well",
    ),
    (
        "weather-forecast",
        "Use when a user asks about the weather forecast for a place.",
        "weather forecast for Lisbon tomorrow",
    ),
    (
        "tip-calculator",
        "Use when a user asks how much to tip on a restaurant bill.",
        "how much should I tip on an 84 dollar bill",
    ),
    ("synonym-finder", "Use when a user asks for synonyms of a word.", "give me synonyms for happy"),
    ("haiku-writer", "Use when a user asks to write a haiku.", "write a haiku about a heron at dusk"),
    ("acronym-expander", "Use when a user asks what an acronym stands for.", "what does the acronym NATO stand for"),
]


@pytest.fixture(scope="module")
def exact_use_router(tmp_path_factory):
    """The skills installed as folders, routed as `skillctl route` routes (semantic, learned gate)."""
    from skillctl.routing import semantic
    from skillctl.skillset import SkillSet

    if not semantic.available():
        pytest.skip("the semantic extra is not installed")
    root = tmp_path_factory.mktemp("skills")
    for name, description, _ in EXACT_USE:
        (root / name).mkdir()
        (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SKILLYARD_HOME", str(tmp_path_factory.mktemp("home")))
        skills = SkillSet.from_dir(root, semantic=True, ignore_gates=True)
        assert skills.semantic
        yield skills.router()


@pytest.mark.parametrize(("skill", "request_text"), [(name, request) for name, _, request in EXACT_USE])
def test_a_skill_whose_stated_use_is_the_request_is_routed_first(exact_use_router, skill, request_text):
    routed = exact_use_router.route(request_text)
    assert routed and routed[0].name == skill, [(m.name, m.components.get("gate")) for m in routed]
    assert routed[0].stage in (Stage.GATE, Stage.TRIGGER, Stage.NAME)


def candidate(name: str, **components: float) -> Match:
    base = {"evidence": 0.3, "invoked": 0.0, "trigger": 0.0}
    return Match(name, 1.0, [], {**base, **components})


def model(threshold: float = 0.5) -> gate.GateModel:
    n = len(gate.FEATURES)
    return gate.GateModel((0.0,) * n, (1.0,) * n, (0.0,) * n, 0.0, threshold, 0.5, "")


def test_a_triggered_skill_is_routed_on_its_own_evidence_whatever_the_chat_prior_says():
    cands = [candidate("a"), candidate("b", trigger=1.0)]
    chosen = gate.decide(cands, [0.1, 0.05], model(), 3, own=[0.1, 0.6])
    assert [m.name for m in chosen] == ["b"] and chosen[0].stage is Stage.TRIGGER


def test_a_trigger_word_without_the_skills_own_evidence_is_left_to_the_gate():
    cands = [candidate("a"), candidate("b", trigger=1.0)]
    assert gate.decide(cands, [0.1, 0.05], model(), 3, own=[0.1, 0.3]) == []


def test_a_skill_invoked_by_name_comes_first_whatever_its_probability():
    chosen = gate.decide([candidate("a"), candidate("b", invoked=1.0)], [0.9, 0.02], model(), 3)
    assert [(m.name, m.stage) for m in chosen] == [("b", Stage.NAME), ("a", Stage.GATE)]


def test_candidates_under_the_threshold_are_left_out_and_say_their_probability():
    a, b = candidate("a"), candidate("b")
    assert gate.decide([a, b], [0.49, 0.2], model(0.5), 3) == []
    assert a.components["gate"] == 0.49 and any("probability 0.49" in r for r in a.reasons)


def test_the_most_probable_candidates_are_routed_at_most_limit():
    cands = [candidate(c) for c in "abcd"]
    chosen = gate.decide(cands, [0.6, 0.9, 0.7, 0.8], model(0.5), 3)
    assert [m.name for m in chosen] == ["b", "d", "c"]


def follower_model(bar: float = 0.5) -> followers.FollowerModel:
    """A follower model that reads one thing: whether the candidate is the best of one of the requests."""
    n = len(followers.FOLLOWER_FEATURES)
    coef = tuple(5.0 if f == "tops_a_request" else 0.0 for f in followers.FOLLOWER_FEATURES)
    return followers.FollowerModel((0.0,) * n, (1.0,) * n, coef, -2.5, bar)


def gated(names: str, probabilities: list[float]) -> tuple[list[Match], list[Match], list[list[float]]]:
    cands = [candidate(n) for n in names]
    chosen = gate.decide(cands, probabilities, model(0.5), 3)
    rows = [[0.0] * len(gate.FEATURES) for _ in cands]
    return cands, chosen, rows


def test_a_candidate_the_follower_model_finds_likely_follows_the_first_skill():
    cands, chosen, rows = gated("abc", [0.9, 0.2, 0.3])
    found = followers.followers(cands, rows, chosen, frozenset({"b"}), 2, follower_model())
    assert [(m.name, m.stage) for m in found] == [("b", Stage.FOLLOWER)]
    assert any("follows a" in r for r in found[0].reasons) and cands[2].components["follower"] < 0.5


def test_nothing_follows_when_the_gate_routed_nothing():
    cands, chosen, rows = gated("ab", [0.2, 0.1])
    assert chosen == [] and followers.followers(cands, rows, chosen, frozenset("ab"), 2, follower_model()) == []


def test_a_skill_the_gate_routed_is_not_a_follower_too():
    cands, chosen, rows = gated("ab", [0.9, 0.8])
    assert followers.followers(cands, rows, chosen, frozenset("ab"), 2, follower_model()) == []


def test_follower_features_are_read_against_the_first_skill():
    rows = [[0.0] * len(gate.FEATURES) for _ in range(2)]
    rows[0][gate.FEATURES.index("evidence")], rows[1][gate.FEATURES.index("evidence")] = 0.9, 0.6
    lead, other = followers.features(rows, [0.8, 0.2], 0, [False, True], 2)
    named = dict(zip(followers.FOLLOWER_FEATURES, other, strict=True))
    assert named["evidence_below_first"] == pytest.approx(0.3) and named["tops_a_request"] == 1.0
    assert named["first_log_odds"] == pytest.approx(lead[0]) and named["requests"] == 2.0


def test_the_shipped_follower_model_loads_and_a_file_of_other_features_is_refused(tmp_path):
    shipped = followers.model()
    assert shipped is not None and 0 < shipped.bar <= 1
    data = json.loads(gate.GATE_FILE.read_text())
    data["follower"]["features"] = ["rank"]
    (tmp_path / "gate.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="train_gate"):
        followers.FollowerModel.load(tmp_path / "gate.json")


def test_the_shipped_gate_was_trained_on_the_current_training_rows():
    shipped = json.loads(gate.GATE_FILE.read_text())
    assert shipped["data_sha256"] == hashlib.sha256(TRAINING.read_bytes()).hexdigest(), (
        "bench/data/routing/training.jsonl changed: run bench/train_gate.py"
    )
    assert tuple(shipped["features"]) == gate.FEATURES


def test_a_gate_file_of_other_features_is_refused(tmp_path):
    shipped = json.loads(gate.GATE_FILE.read_text())
    (tmp_path / "gate.json").write_text(json.dumps({**shipped, "features": ["evidence"]}))
    with pytest.raises(ValueError, match="train_gate"):
        gate.GateModel.load(tmp_path / "gate.json")


def test_gate_inference_needs_numpy_only():
    code = (
        "import sys; sys.modules['sklearn'] = None\n"
        "from skillctl.routing import gate\n"
        "m = gate.model(); n = len(gate.FEATURES)\n"
        "p = m.probabilities([[0.0] * n, [1.0] * n])\n"
        "assert len(p) == 2 and all(0 < x < 1 for x in p)\n"
        "assert 'sklearn' not in [k for k, v in sys.modules.items() if v is not None]\n"
    )
    env_path = str(ROOT / "client")
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": env_path}, check=False
    )
    assert result.returncode == 0, result.stderr


def test_features_follow_the_declared_order():
    form = gate.MessageForm.of("please do the thing?", "please do the thing?", 1)
    components = {
        "no_skill": 0.25,
        "skill_no_skill": 0.1,
        "evidence": 0.7,
        "semantic": 0.5,
        "example": 0.4,
        "bm25": 0.1,
        "lexical": 0.05,
        "name": 0.0,
        "negative": 0.0,
    }
    [row] = gate.features([Match("a", 2.0, [], components)], form, [False])
    named = dict(zip(gate.FEATURES, row, strict=True))
    assert named["evidence"] == 0.7 and named["no_skill"] == 0.25 and named["question"] == 1.0
    assert named["chat_margin"] == pytest.approx(0.7 - 0.5) and named["first"] == 1.0


def llm_gate_at(server, *, skip_margin: float):
    from skillctl.routing.llm_gate import LlmGate, LlmGateSettings

    settings = LlmGateSettings(base_url=server.base_url, model="router-mini", skip_margin=skip_margin, timeout=2.0)
    return LlmGate(settings)


def test_where_the_gate_is_unsure_the_llm_classifier_chooses_among_the_candidates(exact_use_router):
    from tests.client.runtime.fake_llm import FakeChatServer, reply_saying

    answer = reply_saying(json.dumps({"skills": ["tip-calculator"], "reason": "a bill to split"}))
    with FakeChatServer([answer]) as llm:
        exact_use_router.llm_gate = llm_gate_at(llm, skip_margin=2.0)  # every margin is small
        try:
            routed = exact_use_router.route("add up 12, 7 and 30 for me")
        finally:
            exact_use_router.llm_gate = None
    assert [(m.name, m.stage) for m in routed] == [("tip-calculator", Stage.LLM)]
    assert "LLM classifier: a bill to split" in routed[0].reasons
    shown = json.loads(llm.requests[0]["messages"][-1]["content"])
    assert shown["skills"][0]["name"] == "adder"  # the gate's candidates, best first


def test_a_failing_llm_classifier_leaves_the_gates_decision(exact_use_router):
    from tests.client.runtime.fake_llm import FakeChatServer

    offline = [m.name for m in exact_use_router.route("add up 12, 7 and 30 for me")]
    with FakeChatServer([]) as llm:  # every request answered 500
        exact_use_router.llm_gate = llm_gate_at(llm, skip_margin=2.0)
        try:
            routed = exact_use_router.route("add up 12, 7 and 30 for me")
        finally:
            exact_use_router.llm_gate = None
    assert [m.name for m in routed] == offline and len(llm.requests) == 1


def test_a_sure_gate_never_asks_the_llm_classifier(exact_use_router):
    from tests.client.runtime.fake_llm import FakeChatServer

    with FakeChatServer([]) as llm:
        exact_use_router.llm_gate = llm_gate_at(llm, skip_margin=0.0)  # no margin is below 0
        try:
            exact_use_router.route("generate a random password")
        finally:
            exact_use_router.llm_gate = None
    assert llm.requests == []


@pytest.mark.parametrize(
    "hostile",
    [" " * 50_000, "a, " * 20_000, "[" * 20_000, "? then " * 10_000, "word." * 20_000, "\n" * 50_000 + "x"],
)
def test_the_whole_pipeline_reads_hostile_input_in_linear_time(exact_use_router, hostile):
    import time

    start = time.perf_counter()
    exact_use_router.route(hostile)
    exact_use_router.nearest(hostile)
    assert time.perf_counter() - start < 3.0  # a backtracking pattern took seconds to minutes here
