"""docs/skill-fields.md: its examples validate without a finding and mean what the page says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillctl.format import load_skill

DOC = Path(__file__).resolve().parents[3] / "docs" / "skill-fields.md"


def example(marker: str) -> str:
    text = DOC.read_text("utf-8")
    start = text.index(f"<!-- {marker}:")
    return re.search(r"```yaml\n(.*?)```", text[start:], re.S).group(1)


def skill_from(tmp_path: Path, marker: str) -> Path:
    text = example(marker)
    name = re.search(r"^name: (\S+)$", text, re.M).group(1)
    folder = tmp_path / name
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(text)
    (folder / "scripts" / "report.py").write_text("print('report')\n")
    return folder


@pytest.mark.parametrize(
    "marker",
    [
        "fields-example",
        "fields-example-openclaw",
        "fields-example-runtime",
        "fields-example-seed-002",
        "fields-example-seed-003",
    ],
)
def test_documented_examples_validate_without_a_finding(tmp_path, marker):
    report = load_skill(skill_from(tmp_path, marker))
    assert report.valid and [f.code for f in report.findings] == []


def test_the_complete_example_means_what_the_page_says(tmp_path):
    m = load_skill(skill_from(tmp_path, "fields-example")).manifest
    assert m.version == "1.2.0" and m.os == ["linux", "darwin"]
    assert (m.requires.bins, m.requires.any_bins, m.requires.env) == (["curl"], ["jq", "gojq"], ["WEATHER_API_KEY"])
    assert (m.requires.config, m.requires.skills) == (["weather.units"], ["geo-lookup"])
    assert m.install[0].command() and m.primary_env == "WEATHER_API_KEY"
    assert m.triggers.keywords == ["weather", "forecast", "temperature"] and m.triggers.patterns
    assert m.vars["WEATHER_API_KEY"].secret and m.vars["UNITS"].default == "metric"
    assert (m.runtime.entrypoint, m.runtime.requires_network, m.runtime.timeout_seconds) == (
        "scripts/report.py",
        True,
        30,
    )


def test_the_openclaw_form_gates_the_same_way(tmp_path):
    m = load_skill(skill_from(tmp_path, "fields-example-openclaw")).manifest
    assert m.requires.bins == ["gh"] and m.requires.env == ["GH_TOKEN"] and m.os == ["linux", "darwin"]
    assert m.install[0].kind == "brew" and m.install[0].package == "gh"


def test_the_runtime_example_means_what_the_page_says(tmp_path):
    m = load_skill(skill_from(tmp_path, "fields-example-runtime")).manifest
    assert m.allowed_tools == ["load_skill", "read_skill_file"] and m.vars["ISSUES_TOKEN"].secret
    assert m.mcp is not None and (m.mcp.command, m.mcp.args, m.mcp.env) == (
        "python3",
        ["server.py"],
        {"TOKEN": "${ISSUES_TOKEN}"},
    )
    assert (m.mcp.startup_timeout, m.mcp.idle_timeout) == (20, 300)
    assert m.next_skill == "summary"
    assert [(c.when, c.skill) for c in m.conditional_next_skills] == [
        ("the user reports a bug", "fix-bug"),
        ("the user wants a feature", "plan-feature"),
    ]
    assert m.toolsets == ["acme_tools.calc:Calculator"]


def test_the_seed_forms_mean_what_the_page_says(tmp_path):
    m = load_skill(skill_from(tmp_path, "fields-example-seed-002")).manifest
    assert (m.requires.bins, m.requires.any_bins, m.requires.env) == (["gh"], ["curl", "wget"], ["GITHUB_TOKEN"])
    assert m.primary_env == "GITHUB_TOKEN" and [s.kind for s in m.install] == ["brew", "apt"]
    m = load_skill(skill_from(tmp_path, "fields-example-seed-003")).manifest
    assert m.requires.bins == ["npx"] and m.vars["REVIEW_STYLE"].default == "balanced"
    assert m.vars["GITHUB_TOKEN"].required and m.vars["MAX_FILES"].default == "20"
