"""A skill whose required variable has no value is unavailable everywhere a model could meet it
(seed 003, issue 36 item 3): not routed, not in the catalog, not given by the hook or load_skill,
and ``route --explain`` names the variable. No declared ``{{VAR}}`` reaches a model unresolved."""

from __future__ import annotations

import json

import pytest

from skillctl import SkillSet, agent_hooks
from skillctl.cli.main import main
from skillctl.config import Config

WEATHER = """\
---
name: weather
description: Weather forecasts for any city, from the weather service API.
vars:
  WEATHER_TOKEN:
    required: true
    secret: true
  UNITS: metric
  STATION:
    description: an optional station id
---
# weather

Call the forecast API with token {{WEATHER_TOKEN}} in {{UNITS}} units at station {{STATION}}.
Leave {{ something.else }} alone: it is not a variable of this skill.
"""
MESSAGE = "what is the weather forecast for Paris tomorrow"


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("WEATHER_TOKEN", raising=False)
    folder = tmp_path / "skills" / "weather"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(WEATHER)
    other = tmp_path / "skills" / "pdf-tools"
    other.mkdir()
    (other / "SKILL.md").write_text("---\nname: pdf-tools\ndescription: Merge and split PDF files.\n---\nSteps.\n")
    return tmp_path / "skills"


def skillset(root) -> SkillSet:
    return SkillSet.from_dir(root, semantic=False, config=Config())


def test_unavailable_skill_is_not_offered_routed_or_in_the_catalog(root):
    skills = skillset(root)
    assert [e.name for e in skills.offered()] == ["pdf-tools"]
    assert "WEATHER_TOKEN" in skills.left_out()["weather"]
    assert skills.route(MESSAGE) == []
    assert "weather" not in skills.prompt(MESSAGE, tier="catalog")
    [near] = [n for n in skills.nearest(MESSAGE) if n["name"] == "weather"]
    assert "WEATHER_TOKEN" in near["stopped_by"]


def test_route_explain_names_the_missing_variable(root, capsys):
    code = main(["route", "--skills-dir", str(root), "--explain", "--json", MESSAGE])
    out = capsys.readouterr().out
    line = json.loads(out.splitlines()[-1])
    assert code == 0 and line["skills"] == []
    [left] = line["left_out"]
    assert left["name"] == "weather" and "WEATHER_TOKEN" in left["reason"]


def test_the_hook_gives_no_unavailable_skill(root):
    event = agent_hooks.PromptEvent(MESSAGE, None, None, None)
    assert "weather" not in agent_hooks.context_for(skillset(root), event)


def test_load_skill_of_an_unavailable_skill_is_refused_with_the_variable(root):
    reply = json.loads(skillset(root).handle_tool_call("load_skill", {"name": "weather"}))
    assert reply["error"] == "vars.missing" and "WEATHER_TOKEN" in reply["message"]


def test_with_its_value_the_skill_is_routed_and_no_declared_placeholder_is_left(root):
    (root / "weather" / "vars.json").write_text(json.dumps({"WEATHER_TOKEN": "tok-very-secret"}))
    skills = skillset(root)
    assert [m.name for m in skills.route(MESSAGE)] == ["weather"]
    for text in (skills.prompt(MESSAGE, tier="full"), skills.handle_tool_call("load_skill", {"name": "weather"})):
        assert "in metric units at station ." in text  # the default, and "" for an unset optional one
        assert "{{WEATHER_TOKEN}}" not in text and "tok-very-secret" not in text  # secret: masked
        assert "{{UNITS}}" not in text and "{{STATION}}" not in text
        assert "{{ something.else }}" in text
    context = agent_hooks.context_for(skills, agent_hooks.PromptEvent(MESSAGE, None, None, None))
    assert "metric units" in context and "{{" not in context.replace("{{ something.else }}", "")
