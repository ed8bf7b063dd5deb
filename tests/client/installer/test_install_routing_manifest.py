"""A skill installed from a folder (archive, URL, git) gets a routing manifest from the registry's
own generator, reads a shipped keywords.json (seed 000), and asks the LLM when one is configured."""

from __future__ import annotations

import json

import pytest

from skillctl.config import Config
from skillctl.format.archive import pack_skill
from skillctl.installer import Operations
from skillctl.installer.project import Scope
from skillctl.reporting import Reporter
from skillctl.routing.manifests import load_registry_manifest
from skillctl.skillset import SkillSet
from tests.client.runtime.fake_llm import FakeChatServer, reply_saying

SKILL_MD = (
    "---\nname: otel-analyzer\ndescription: Analyze OpenTelemetry traces. Use when the user wants to find "
    "slow spans or latency bottlenecks.\n---\n# Otel analyzer\n\n## When to use\n- find the slowest spans\n"
)


@pytest.fixture
def proj(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SKILLYARD_USER_SKILLS", str(tmp_path / "user"))
    for name in ("BASE_URL", "MODEL", "API_KEY"):
        monkeypatch.delenv(f"SKILLYARD_LLM_{name}", raising=False)
    root = tmp_path / "proj"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


def skill_folder(root, keywords: dict | None = None):
    folder = root / "vendor" / "otel-analyzer"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    if keywords is not None:
        (folder / "keywords.json").write_text(json.dumps(keywords))
    return folder


def install(proj, source, reporter=None) -> None:
    Operations.for_scope(Scope.project(proj), config=Config(), reporter=reporter or Reporter()).install([str(source)])


def test_a_folder_install_gets_the_manifest_the_registry_would_make(proj, tmp_path):
    from worker.engines.manifest import generate_manifest

    folder = skill_folder(proj)
    install(proj, folder)
    saved = load_registry_manifest("otel-analyzer")
    assert saved is not None and saved["source"] == "offline" and saved["queries"]
    pack_skill(folder, tmp_path / "otel.zip")
    registry = generate_manifest(archive=(tmp_path / "otel.zip").read_bytes(), digest="x", config=None)
    assert saved == registry  # one generator: the same keywords from the registry and from a folder


def test_a_shipped_keywords_json_is_read(proj):
    keywords = {"category": "Observability", "keywords": ["jaeger", "otel"], "phrases": ["trace analysis"]}
    install(proj, skill_folder(proj, keywords))
    saved = load_registry_manifest("otel-analyzer")
    assert (saved["category"], saved["keywords"], saved["phrases"]) == (
        "observability",
        ["jaeger", "otel"],
        ["trace analysis"],
    )
    skills = SkillSet.discover(project_dir=proj, include_user=False, semantic=False)
    assert [m.name for m in skills.route("run a trace analysis on this jaeger dump")] == ["otel-analyzer"]


def test_a_configured_llm_writes_the_manifest_at_install(proj, monkeypatch):
    answer = {
        "category": "observability",
        "keywords": [f"kw{i}" for i in range(16)],
        "phrases": [f"phrase number {i}" for i in range(11)],
        "queries": [f"why is request {i} slow" for i in range(16)],
        "negative": "Not for metrics dashboards.",
    }
    with FakeChatServer([reply_saying(json.dumps(answer))]) as llm:
        monkeypatch.setenv("SKILLYARD_LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("SKILLYARD_LLM_MODEL", "fake")
        monkeypatch.setenv("SKILLYARD_LLM_API_KEY", "sk-test")
        install(proj, skill_folder(proj))
    saved = load_registry_manifest("otel-analyzer")
    assert (saved["source"], saved["model"], saved["keywords"][:2]) == ("llm", "fake", ["kw0", "kw1"])
    assert "Analyze OpenTelemetry traces" in llm.requests[0]["messages"][1]["content"]


def test_an_llm_that_fails_leaves_the_offline_manifest_and_says_so(proj, monkeypatch):
    with FakeChatServer([]) as llm:  # every request answered 500
        monkeypatch.setenv("SKILLYARD_LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("SKILLYARD_LLM_MODEL", "fake")
        monkeypatch.setenv("SKILLYARD_LLM_API_KEY", "sk-test")
        reporter = Reporter()
        install(proj, skill_folder(proj), reporter)
    assert load_registry_manifest("otel-analyzer")["source"] == "offline"
    assert any("LLM manifest failed" in w for w in reporter.warnings)
