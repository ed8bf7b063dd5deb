"""The skill forms of the seeds (002's gating under ``metadata``, 003's vars and nameless skills)
read into the same manifest as ours, with ours still working (issue 36 items 1, 2, 4, 6)."""

from __future__ import annotations

import pytest

from skillctl.format import normalise
from skillctl.format.load import load_skill
from skillctl.format.manifest import InstallSpec, VarSpec
from skillctl.format.parse import parse_skill_md

# Seed 002's own example: every gating field directly under `metadata:`.
SEED_002 = """\
---
name: github
description: "Interact with GitHub using the `gh` CLI. Use for issues, PRs, CI runs, and API queries."
homepage: https://cli.github.com
license: MIT
metadata:
  emoji: "🐙"
  requires:
    bins: ["gh"]
    env: ["GITHUB_TOKEN"]
    config: ["tools.github.enabled"]
  anyBins: ["curl", "wget"]
  os: ["darwin", "linux"]
  primaryEnv: "GITHUB_TOKEN"
  always: false
  skillKey: gh
  install:
    - id: brew
      kind: brew
      formula: gh
      bins: ["gh"]
      label: "Install GitHub CLI (brew)"
    - id: apt
      kind: apt
      package: gh
      bins: ["gh"]
      label: "Install GitHub CLI (apt)"
      os: ["linux"]
---

# GitHub Skill
"""


def test_seed_002_gating_directly_under_metadata_is_read():
    report = parse_skill_md(SEED_002)
    m = report.manifest
    assert m.requires.bins == ["gh"] and m.requires.env == ["GITHUB_TOKEN"]
    assert m.requires.config == ["tools.github.enabled"]
    assert m.requires.any_bins == ["curl", "wget"]  # a sibling of `requires` in the seed's example
    assert m.os == ["darwin", "linux"] and m.primary_env == "GITHUB_TOKEN" and m.key == "gh"
    assert m.emoji == "🐙"
    assert [(s.kind, s.package, s.os) for s in m.install] == [("brew", "gh", []), ("apt", "gh", ["linux"])]
    # Only the policy's flow-style note ("gh" in [...]); no metadata.value_type for the seed's form.
    assert {f.code for f in report.findings} == {"frontmatter.flow_style"}


def test_precedence_top_level_then_gating_block_then_metadata():
    fm = {
        "name": "demo",
        "description": "d",
        "license": "MIT",
        "metadata": {"requires": {"bins": ["from-metadata"]}, "os": ["win32"], "primaryEnv": "META"},
    }
    assert normalise(fm)[0].requires.bins == ["from-metadata"]
    fm["metadata"]["openclaw"] = {"requires": {"bins": ["from-openclaw"]}, "primaryEnv": "CLAW"}
    manifest = normalise(fm)[0]
    assert manifest.requires.bins == ["from-openclaw"] and manifest.primary_env == "CLAW" and manifest.os == ["win32"]
    fm["requires"] = {"bins": ["from-top"]}
    assert normalise(fm)[0].requires.bins == ["from-top"]


def test_a_wrong_type_under_metadata_is_a_warning_not_an_error():
    _, findings = normalise({"name": "demo", "description": "d", "license": "MIT", "metadata": {"requires": 5}})
    assert {(f.code, f.is_error) for f in findings} == {("field.type", False)}


def test_always_under_metadata_is_read():
    fm = {"name": "demo", "description": "d", "metadata": {"always": True}}
    assert normalise(fm)[0].always is True


# --- seed 003: vars shorthand ----------------------------------------------------------------
def test_vars_string_shorthand_is_the_default_value():
    fm = {"name": "demo", "description": "d", "vars": {"STYLE": "balanced", "TIMEOUT": None}}
    assert normalise(fm)[0].vars == {"STYLE": VarSpec(default="balanced"), "TIMEOUT": VarSpec()}


# --- seed 003: a skill without a name takes its folder's ----------------------------------------
def nameless(folder, name="code-review"):
    skill = folder / name
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\ndescription: Review code.\nlicense: MIT\n---\n\nReview it.\n")
    return skill


def test_a_skill_without_name_takes_its_folders_name_with_a_warning(tmp_path):
    report = load_skill(nameless(tmp_path))
    assert report.valid and report.manifest.name == "code-review" and report.manifest.key == "code-review"
    assert [(f.code, f.is_error) for f in report.findings] == [("name.from_folder", False)]


def test_a_nameless_skill_in_a_folder_that_is_no_valid_name_is_still_an_error(tmp_path):
    report = load_skill(nameless(tmp_path, "Code Review"))
    assert "name.missing" in {f.code for f in report.errors}


def test_a_nameless_skill_is_an_error_under_strict(tmp_path):
    report = load_skill(nameless(tmp_path), strict=True)
    assert "name.missing" in {f.code for f in report.errors}


def test_a_nameless_skill_md_without_folder_is_still_an_error():
    assert "name.missing" in {f.code for f in parse_skill_md("---\ndescription: d\n---\nx\n").errors}


@pytest.mark.parametrize("kind, package", [("brew", "gh"), ("apt", "gh"), ("uv", "ruff")])
def test_install_spec_kinds_from_metadata(kind, package):
    fm = {"name": "demo", "description": "d", "metadata": {"install": [{"kind": kind, "package": package}]}}
    assert normalise(fm)[0].install == [InstallSpec(kind=kind, package=package)]
