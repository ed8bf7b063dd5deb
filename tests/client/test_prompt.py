"""Prompt tiers one by one: none, breadcrumb, catalog (xml/markdown/json), full, auto."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillctl.skillset import SkillSet

SECRET = "sk-live-123456789"


def write(folder: Path, frontmatter: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\n{frontmatter}\n---\n{body}\n")


@pytest.fixture
def skills(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DEPLOY_TOKEN", SECRET)
    root = tmp_path / "skills"
    write(
        root / "deploy",
        "name: deploy\ndescription: Deploy <apps> & services to Kubernetes clusters.\n"
        "vars:\n  REGION:\n    default: eu-west-1\n  DEPLOY_TOKEN:\n    secret: true",
        "# Deploy\nRun {baseDir}/scripts/deploy.sh in {{REGION}} with token {{DEPLOY_TOKEN}}.",
    )
    (root / "deploy" / "scripts").mkdir()
    (root / "deploy" / "scripts" / "deploy.sh").write_text("echo deploy\n")
    (root / "deploy" / "references").mkdir()
    (root / "deploy" / "references" / "api.md").write_text("# API\n")
    write(
        root / "hidden",
        "name: hidden\ndescription: Internal cleanup of Kubernetes clusters.\ndisable-model-invocation: true",
        "# Hidden",
    )
    return SkillSet.from_dir(root, semantic=False)


def test_none_tier_is_empty(skills):
    assert skills.prompt("deploy the apps to kubernetes clusters", tier="none") == ""


def test_breadcrumb_counts_only_offered_skills(skills):
    assert skills.prompt(tier="breadcrumb") == "[1 skills available]"


def test_catalog_xml_is_escaped_and_leaves_out_hidden_skills(skills):
    block = skills.prompt(tier="catalog")
    assert block.startswith("<available_skills>") and block.endswith("</available_skills>")
    assert "<name>deploy</name>" in block
    assert "Deploy &lt;apps&gt; &amp; services" in block
    assert "<location>" in block and "SKILL.md</location>" in block
    assert "hidden" not in block


def test_catalog_markdown_and_json(skills):
    assert "- **deploy**:" in skills.prompt(tier="catalog", fmt="markdown")
    data = json.loads(skills.prompt(tier="catalog", fmt="json"))
    assert [s["name"] for s in data["available_skills"]] == ["deploy"]


def test_empty_catalog_emits_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    (tmp_path / "empty").mkdir()
    empty = SkillSet.from_dir(tmp_path / "empty", semantic=False)
    assert empty.prompt(tier="catalog") == "" and empty.prompt(tier="breadcrumb") == ""


def test_full_substitutes_vars_resolves_basedir_masks_secrets_lists_resources(skills, tmp_path):
    block = skills.prompt(tier="full", fmt="markdown", chosen=["deploy"])
    base = (tmp_path / "skills" / "deploy").resolve()
    assert f"Run {base}/scripts/deploy.sh in eu-west-1" in block
    assert SECRET not in block and "{{DEPLOY_TOKEN}}" not in block
    assert "`scripts/deploy.sh`" in block and "`references/api.md`" in block
    assert "echo deploy" not in block  # resources are listed, not read
    assert "tokens)" in block


def test_full_xml_carries_a_token_estimate(skills):
    block = skills.prompt(tier="full", chosen=["deploy"])
    assert '<skill name="deploy"' in block and 'tokens="' in block and SECRET not in block


def test_auto_is_full_for_a_routed_message_catalog_otherwise(skills):
    assert skills.build_prompt("deploy the apps and services to kubernetes clusters")[0] == "full"
    tier, block = skills.build_prompt("hello there")
    assert tier == "catalog" and "<name>deploy</name>" in block  # the model still sees the skill
    assert skills.build_prompt(None)[0] == "catalog"


def test_disabled_in_config_is_left_out(tmp_path, monkeypatch):
    from skillctl.config import Config

    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    write(tmp_path / "s" / "deploy", "name: deploy\ndescription: Deploy apps.", "# d")
    skills = SkillSet.from_dir(tmp_path / "s", semantic=False, config=Config(skills={"deploy": {"enabled": False}}))
    assert skills.prompt(tier="catalog") == ""
    assert skills.route("use deploy to deploy apps") == []


def test_disabled_by_default_is_left_out_until_config_enables_it(tmp_path, monkeypatch):
    from skillctl.config import Config

    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    write(tmp_path / "s" / "deploy", "name: deploy\ndescription: Deploy apps.\ndefault_enabled: false", "# d")
    skills = SkillSet.from_dir(tmp_path / "s", semantic=False)
    assert skills.prompt(tier="catalog") == ""
    assert skills.route("use deploy to deploy apps") == []
    enabled = SkillSet.from_dir(tmp_path / "s", semantic=False, config=Config(skills={"deploy": {"enabled": True}}))
    assert "deploy" in enabled.prompt(tier="catalog")
    assert [m.name for m in enabled.route("use deploy to deploy apps")] == ["deploy"]


@pytest.mark.parametrize(
    ("requires", "fix_env"),
    [
        ("os: [win32]", None),  # another OS: never offered here
        ("requires:\n  bins: [no-such-binary-xyz]", None),
        ("requires:\n  env: [DEPLOY_API_KEY]", "DEPLOY_API_KEY"),
        ("requires:\n  skills: [not-installed-skill]", None),
    ],
)
def test_a_skill_that_cannot_work_here_is_neither_routed_nor_offered(tmp_path, monkeypatch, requires, fix_env):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DEPLOY_API_KEY", raising=False)
    write(tmp_path / "s" / "deploy", f"name: deploy\ndescription: Deploy apps.\n{requires}", "# d")
    write(tmp_path / "s" / "notes", "name: notes\ndescription: Take meeting notes.", "# n")
    skills = SkillSet.from_dir(tmp_path / "s", semantic=False)
    assert "deploy" in skills.names  # installed and listed ...
    assert [e.name for e in skills.offered()] == ["notes"]  # ... but not offered, and says why
    assert list(skills.left_out()) == ["deploy"] and skills.left_out()["deploy"]
    assert "deploy" not in skills.prompt(tier="catalog")
    assert skills.route("use deploy to deploy apps") == []
    if fix_env:  # once the requirement is met, it is offered (a fresh index read)
        monkeypatch.setenv(fix_env, "set")
        again = SkillSet.from_dir(tmp_path / "s", semantic=False)
        assert [m.name for m in again.route("use deploy to deploy apps")] == ["deploy"]


def many_skills(root: Path, count: int) -> None:
    for i in range(count):
        write(
            root / f"tool-{i:03d}",
            f"name: tool-{i:03d}\ndescription: Tool number {i} keeps invoices, receipts and ledgers tidy for accountants.",
            "# Tool",
        )


def test_auto_gives_the_breadcrumb_when_nothing_is_near_and_the_catalog_is_over_budget(tmp_path, monkeypatch):
    """Seed 004's tier 1: skills exist but none fits the message, and listing them all would cost
    more than the budget allows on every turn."""
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    many_skills(tmp_path / "skills", 120)
    skills = SkillSet.from_dir(tmp_path / "skills", semantic=False)
    assert skills.build_prompt("is a tomato technically a fruit or a vegetable") == (
        "breadcrumb",
        "[120 skills available]",
    )
    tier, block = skills.build_prompt("tidy the ledgers")  # near: the catalog, cut, closest first
    assert tier in ("catalog", "full") and "<name>tool-" in block
    assert skills.build_prompt("is a tomato technically a fruit or a vegetable", budget=100_000)[0] == "catalog"


def test_a_small_catalog_is_given_even_when_nothing_is_near(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    many_skills(tmp_path / "skills", 3)
    skills = SkillSet.from_dir(tmp_path / "skills", semantic=False)
    tier, block = skills.build_prompt("is a tomato technically a fruit or a vegetable")
    assert tier == "catalog" and block.count("<skill>") == 3


def test_catalog_shows_the_authors_brief_description(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    write(
        tmp_path / "skills" / "greet",
        "name: greet\ndescription: Extended greeting capabilities in forty languages with formal forms.\n"
        "brief_description: Greets people.",
        "# Greet",
    )
    write(tmp_path / "skills" / "plain", "name: plain\ndescription: First sentence. Second sentence.", "# Plain")
    skills = SkillSet.from_dir(tmp_path / "skills", semantic=False)
    block = skills.prompt(tier="catalog", fmt="markdown")
    assert "**greet**: Greets people." in block and "forty languages" not in block
    assert "**plain**: First sentence. Second sentence." in block
