"""The manifest check's LLM manifest (a fake OpenAI-compatible endpoint on loopback, the only
fake allowed) reaches `skillctl install`, and routing uses its synthetic queries: a request in
words found only in those queries routes to the skill."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import start_registry
from tests.e2e.test_checks_live import wait_for_checks
from tests.e2e.test_install_registry import Cli, make
from tests.worker.engines.conftest import fake_llm  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ANSWER = {
    "category": "communication",
    "keywords": [f"kw{i}" for i in range(15)] + ["onboarding", "gizmo"],
    "phrases": [f"phrase number {i}" for i in range(10)],
    "queries": ["make the onboarding gizmo say hi to newcomers"] + [f"synthetic request {i}" for i in range(16)],
    "negative": "not for farewells",
}


def _tidy(value):
    """ANSWER's shape, about tidying instead (a second skill's manifest)."""
    if isinstance(value, list):
        return [_tidy(v) for v in value]
    return value.replace("onboarding", "tidying").replace("gizmo", "desk").replace("hi to newcomers", "bye")


def test_routing_uses_the_registry_manifest_of_an_installed_skill(fake_llm, tmp_path):  # noqa: F811
    fake_llm.answer(json.dumps(ANSWER))
    reg = start_registry(
        tmp_path / "registry",
        env_extra={
            "SKILLYARD_LLM_BASE_URL": fake_llm.url,
            "SKILLYARD_LLM_MODEL": "fake-model",
            "SKILLYARD_LLM_API_KEY": "k",
        },
    )
    try:
        reg.publish(make(tmp_path, "greeter", "1.0.0"))
        detail = wait_for_checks(reg.url, "greeter", "1.0.0", reg.token)
        assert detail["checks"]["manifest"]["source"] == "llm", detail["checks"]["manifest"]
        fake_llm.answer(json.dumps({key: _tidy(value) for key, value in ANSWER.items()}))
        reg.publish(make(tmp_path, "tidier", "1.0.0"))
        wait_for_checks(reg.url, "tidier", "1.0.0", reg.token)
        (tmp_path / "client").mkdir()
        cli = Cli(tmp_path / "client", reg.url)
        # Two skills: their manifests come in one batch request (tests/client/installer checks
        # the request count against a stand-in registry; this, against the real one).
        assert cli("install", "greeter", "tidier").returncode == 0
        saved = {p.name for p in (tmp_path / "client/home").rglob("routing/registry/*.json")}
        assert saved == {"greeter.json", "tidier.json"}, saved
        routed = cli("route", "the onboarding gizmo should say hi to newcomers", "--json", "--no-semantic")
        assert [s["name"] for s in json.loads(routed.stdout)["skills"]] == ["greeter"], routed.stderr
        # The same skill folder without the registry's manifest (another home): nothing routes.
        cli.env["SKILLYARD_HOME"] = str(tmp_path / "other-home")
        plain = cli(
            "route",
            "the onboarding gizmo should say hi to newcomers",
            "--json",
            "--no-semantic",
            "--skills-dir",
            str(cli.project / ".agents/skills"),
        )
        assert json.loads(plain.stdout)["skills"] == [], plain.stdout
    finally:
        reg.stop()
