"""Skill authors' `triggers` patterns: a pattern that backtracks for ever is cut off and dropped
(one hostile skill must not hang every route, hook call and catalog search), and a pattern hits
only whole stretches of text."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

from skillctl.routing.manifests import build_offline
from skillctl.routing.patterns import compile_patterns
from skillctl.routing.scoring import ScoringIndex, rank_lexical

BACKTRACKS = "^(a|aa)+$"  # exponential on a line of a's that does not end the way it wants
HOSTILE_MESSAGE = "a" * 60 + "!"


def test_a_pattern_that_backtracks_for_ever_is_cut_off_dropped_and_named(caplog):
    [pattern] = compile_patterns("evil", [BACKTRACKS])
    with caplog.at_level(logging.WARNING, logger="skillctl.routing.patterns"):
        assert pattern.hit(HOSTILE_MESSAGE) is False
    assert pattern.dropped
    assert "skill 'evil'" in caplog.text and BACKTRACKS in caplog.text
    assert pattern.hit("aaaa") is False  # dropped: not tried again, not even where it would match
    [fresh] = compile_patterns("evil", [BACKTRACKS])
    assert fresh.hit("aaaa")  # the same pattern matches what it can match in time


def test_routing_with_a_hostile_skill_installed_still_routes_the_others():
    index = ScoringIndex(
        [
            build_offline(name="evil", description="Formats text.", trigger_patterns=[BACKTRACKS]),
            build_offline(
                name="pdf-tools", description="Fill PDF forms and merge PDF files.", trigger_patterns=["pdfs?"]
            ),
        ]
    )
    assert rank_lexical(index, HOSTILE_MESSAGE) == []
    [match] = rank_lexical(index, "merge these pdf files " + HOSTILE_MESSAGE)
    assert match.name == "pdf-tools" and "triggers: /pdfs?/" in match.reasons


def test_a_pattern_hits_whole_stretches_of_text_not_the_inside_of_a_word():
    [short] = compile_patterns("qveris", ["市值|涨跌|pe|pb"])
    assert short.hit("what is the PE ratio of AAPL")
    assert short.hit("腾讯的市值是多少")  # scripts without spaces: inside a "word" is fine
    assert not short.hit("what type of pipeline is this")  # "pe" in "type" and "pipeline"
    [empty] = compile_patterns("lazy", ["x*"])
    assert not empty.hit("anything at all")  # matches everywhere, and nothing
    assert compile_patterns("bad", ["(unclosed", "fine"])[0].source == "fine"


def test_skillctl_route_returns_with_a_hostile_skill_installed(tmp_path: Path):
    folder = tmp_path / "skills" / "evil"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: evil\ndescription: Formats text nicely.\ntriggers:\n  patterns:\n    - '{BACKTRACKS}'\n---\n# Evil\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "skillctl", "route", HOSTILE_MESSAGE, "--json", "--no-semantic"]
        + ["--skills-dir", str(tmp_path / "skills")],
        capture_output=True,
        text=True,
        timeout=120,  # a hang fails here instead of stalling the suite
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["skills"] == []
    assert "trigger pattern" in result.stderr and "evil" in result.stderr


def test_a_skill_listing_hundreds_of_triggers_does_not_claim_every_message():
    from skillctl.routing.manifests import MAX_TRIGGER_PATTERNS, MAX_TRIGGER_WORDS

    common = ["help", "code", "file", "make", "write", "fix", "data", "test", "app", "email"] * 3
    greedy = build_offline(
        name="greedy",
        description="Does everything.",
        trigger_keywords=[f"zz{k}" for k in range(MAX_TRIGGER_WORDS)] + common,
        trigger_patterns=[f"zz{k}" for k in range(MAX_TRIGGER_PATTERNS)] + ["help"],
    )
    assert len(greedy.trigger_words) == MAX_TRIGGER_WORDS and len(greedy.trigger_patterns) == MAX_TRIGGER_PATTERNS
    assert rank_lexical(ScoringIndex([greedy]), "help me fix the code in this file and email the test data") == []
