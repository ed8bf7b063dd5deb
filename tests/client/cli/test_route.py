"""`skillctl route --ignore-gates`, `route --explain` for a message that routes to nothing, and
`prompt`'s auto tier: the catalog fallback within its budget and an unknown --skill."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skillctl import SkillSet
from skillctl.errors import UsageError
from skillctl.prompt import CATALOG_BUDGET_TOKENS, estimate_tokens

MISSING_BIN = "skillyard-test-no-such-binary"


def write(root: Path, name: str, description: str, extra: str = "") -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n")


@pytest.fixture
def skills_dir(tmp_path):
    root = tmp_path / "skills"
    write(root, "pdf-tools", "Fill PDF forms, merge PDF files and extract text from PDF documents.")
    write(
        root,
        "k8s-deploy",
        "Deploy services to Kubernetes clusters with kubectl and helm charts.",
        f"requires:\n  bins: [{MISSING_BIN}]\n",
    )
    return root


def skillctl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skillctl", *args], capture_output=True, text=True, timeout=120)


def route_json(*args: str) -> dict:
    result = skillctl("route", *args, "--json", "--no-semantic")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_gated_skill_is_routed_only_with_ignore_gates(skills_dir):
    message = "deploy the services to kubernetes clusters with helm"
    assert route_json(message, "--skills-dir", str(skills_dir))["skills"] == []
    routed = route_json(message, "--skills-dir", str(skills_dir), "--ignore-gates")
    assert [s["name"] for s in routed["skills"]] == ["k8s-deploy"]
    assert set(routed) == {"query", "skills"}  # the --queries line contract is unchanged


def test_ignore_gates_also_ignores_this_machines_disabled_setting(skills_dir):
    from skillctl.config import Config

    config = Config(skills={"pdf-tools": {"enabled": False}})
    message = "merge these pdf files and fill the pdf forms"
    assert SkillSet.from_dir(skills_dir, semantic=False, config=config).route(message) == []
    ignoring = SkillSet.from_dir(skills_dir, semantic=False, config=config, ignore_gates=True)
    assert [m.name for m in ignoring.route(message)] == ["pdf-tools"]


def test_explain_with_no_match_names_the_nearest_skills_and_what_stopped_each(skills_dir):
    line = route_json("a pdf please", "--skills-dir", str(skills_dir), "--explain")
    assert line["skills"] == []
    first = line["nearest"][0]
    assert first["name"] == "pdf-tools" and first["score"] > 0
    assert "below the threshold" in first["stopped_by"]


def test_explain_names_the_machine_gate_that_stopped_a_near_skill(skills_dir):
    line = route_json("deploy to kubernetes with helm", "--skills-dir", str(skills_dir), "--explain")
    assert line["skills"] == []
    near = {n["name"]: n["stopped_by"] for n in line["nearest"]}
    assert near["k8s-deploy"].startswith("not offered here:") and MISSING_BIN in near["k8s-deploy"]


def test_explain_human_output_lists_the_nearest(skills_dir):
    result = skillctl("route", "a pdf please", "--skills-dir", str(skills_dir), "--explain", "--no-semantic")
    assert result.returncode == 0
    assert "no skill matched" in result.stderr and "nearest: pdf-tools" in result.stderr


def test_semantic_explanation_names_the_gate(skills_dir):
    from skillctl.routing import semantic

    if not semantic.available():
        pytest.skip("the semantic extra is not installed")
    skills = SkillSet.from_dir(skills_dir, semantic=True, ignore_gates=True)
    message = "what is the capital of France?"
    assert skills.route(message) == []
    [best, *_] = skills.nearest(message)
    assert best["stopped_by"].startswith("gate: needs it with probability")


def test_explain_names_the_stage_that_decided(skills_dir):
    result = skillctl(
        "route",
        "merge these pdf files and fill the pdf forms",
        "--skills-dir",
        str(skills_dir),
        "--ignore-gates",
        "--explain",
        "--no-semantic",
    )
    assert result.returncode == 0 and "decided by: lexical threshold" in result.stdout
    line = route_json(
        "merge these pdf files and fill the pdf forms", "--skills-dir", str(skills_dir), "--ignore-gates", "--explain"
    )
    assert line["skills"][0]["stage"] == "lexical threshold"


def test_auto_tier_falls_back_to_the_catalog_closest_first_within_budget(tmp_path):
    root = tmp_path / "many"
    filler = " ".join(["Handles assorted paperwork for teams and keeps records tidy."] * 12)
    for i in range(80):
        write(root, f"tool-{i:02d}", f"Tool number {i}. {filler}")
    write(root, "zz-invoices", "Create and send invoices to customers. " + filler)
    skills = SkillSet.from_dir(root, semantic=False)
    tier, block = skills.build_prompt("invoices?")
    assert tier == "catalog"
    assert estimate_tokens(block) <= CATALOG_BUDGET_TOKENS
    assert block.index("<name>zz-invoices</name>") < block.index("<name>tool-")
    assert "more skills available]" in block and "records tidy. Handles" not in block


def test_auto_tier_json_catalog_counts_what_it_left_out(tmp_path):
    root = tmp_path / "many"
    for i in range(120):
        write(root, f"tool-{i:03d}", f"Tool number {i} for assorted paperwork of many kinds and sizes.")
    _, block = SkillSet.from_dir(root, semantic=False).build_prompt("sizes of paperwork?", fmt="json")
    data = json.loads(block)
    assert data["not_listed"] > 0 and len(data["available_skills"]) + data["not_listed"] == 120


def test_unknown_skill_for_the_prompt_is_a_usage_error(skills_dir):
    skills = SkillSet.from_dir(skills_dir, semantic=False)
    with pytest.raises(UsageError) as err:
        skills.prompt("x", tier="full", chosen=["pdf-tool"])
    assert err.value.code == "prompt.unknown_skill" and "pdf-tools" in err.value.hint
    result = skillctl("prompt", "--skill", "nope", "--skills-dir", str(skills_dir), "--no-semantic")
    assert result.returncode == 2 and "nope" in result.stderr


def test_route_notices_edited_added_and_deleted_skill_folders_without_reindex(skills_dir):
    """The index fingerprints each SKILL.md and compares the set of skill folders on every run."""
    import shutil

    names = lambda message: [s["name"] for s in route_json(message, "--skills-dir", str(skills_dir))["skills"]]  # noqa: E731
    assert names("merge these pdf files and fill the pdf forms") == ["pdf-tools"]
    pdf = skills_dir / "pdf-tools" / "SKILL.md"
    pdf.write_text(
        pdf.read_text().replace(
            "Fill PDF forms, merge PDF files and extract text from PDF documents.",
            "Bake sourdough bread and proof the dough overnight.",
        )
    )
    assert names("bake sourdough bread and proof the dough") == ["pdf-tools"]
    assert names("merge these pdf files and fill the pdf forms") == []
    write(skills_dir, "guitar", "Tune guitar strings and learn chords.")
    assert names("tune my guitar strings") == ["guitar"]
    shutil.rmtree(skills_dir / "guitar")
    assert names("tune my guitar strings") == []
