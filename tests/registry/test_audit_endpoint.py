"""`POST /api/v1/audit`: what the registry knows now about installed versions (the contract
`skillctl audit` reads), in a fixed number of queries."""

from __future__ import annotations

import pytest

from registry import services
from registry.models import SkillVersion
from tests.registry.conftest import Api, make_zip

pytestmark = pytest.mark.django_db
WARN_FINDING = {"rule": "shell.pipe_to_shell", "severity": "high", "path": "x.sh", "line": 1, "message": "m"}


def publish(api: Api, name: str, *versions: str, **fields) -> None:
    for version in versions or ("1.0.0",):
        assert api.publish(name, make_zip(name, version=version), **fields).status_code == 201


def finish(name: str, version: str, check: str, result: dict) -> None:
    """Record a check's outcome as the worker does (start, then finish)."""
    sv = SkillVersion.objects.get(skill__name=name, version=version)
    started = services.check_start(version_id=sv.id, name=check)
    assert started is not None and services.check_finish(check=started, result=result)


def audit(api: Api, *pairs: tuple[str, str]):
    return api.post("/api/v1/audit", {"skills": [{"name": n, "version": v} for n, v in pairs]})


def by_name(response) -> dict:
    assert response.status_code == 200, response.json()
    return {(r["name"], r["version"]): r for r in response.json()["results"]}


def test_a_clean_version_reports_its_state_and_the_latest_clean_version(alice_api):
    publish(alice_api, "pdf-tools", "1.0.0", "1.1.0", "2.0.0-rc.1")
    finish("pdf-tools", "1.0.0", "scan", {"verdict": "pass", "findings": []})
    body = audit(Api(), ("pdf-tools", "1.0.0")).json()
    assert body["as_of"].endswith("Z")
    assert body["results"] == [
        {
            "name": "pdf-tools",
            "version": "1.0.0",
            "found": True,
            "scan_verdict": "pass",
            "scan_findings": [],
            "test_result": "",
            "test_summary": "",
            "yanked": False,
            "yanked_reason": "",
            "deprecated": "",
            "advisories": [],
            "latest_clean": "1.1.0",
        }
    ]


def test_unknown_private_and_missing_versions_are_not_found(alice_api, bob_api):
    publish(alice_api, "pdf-tools")
    publish(alice_api, "secret", visibility="private")
    asked = [("pdf-tools", "9.9.9"), ("secret", "1.0.0"), ("gone", "1.0.0")]
    for api in (Api(), bob_api):
        results = audit(api, *asked).json()["results"]
        assert results == [{"name": n, "version": v, "found": False} for n, v in asked]
    assert by_name(audit(alice_api, ("secret", "1.0.0")))["secret", "1.0.0"]["found"] is True


def test_an_open_advisory_is_reported_on_the_versions_it_holds_and_latest_clean_skips_them(alice_api):
    publish(alice_api, "pdf-tools", "1.0.0", "1.1.0", "1.2.0", "2.0.0")
    osv = alice_api.post(
        "/api/v1/skills/pdf-tools/advisories", {"summary": "Leaks", "severity": "critical", "affected": ">=1.1,<2"}
    ).json()
    results = by_name(audit(Api(), ("pdf-tools", "1.0.0"), ("pdf-tools", "1.1.0")))
    assert results["pdf-tools", "1.0.0"]["advisories"] == []
    assert [a["id"] for a in results["pdf-tools", "1.1.0"]["advisories"]] == [osv["id"]]
    assert results["pdf-tools", "1.1.0"]["advisories"][0]["affected"][0]["versions"] == ["1.1.0", "1.2.0"]
    assert results["pdf-tools", "1.1.0"]["latest_clean"] == "2.0.0"
    alice_api.post(f"/api/v1/advisories/{osv['id']}/withdraw")
    assert by_name(audit(Api(), ("pdf-tools", "1.1.0")))["pdf-tools", "1.1.0"]["advisories"] == []


def test_latest_clean_is_null_when_every_version_is_affected(alice_api):
    publish(alice_api, "pdf-tools", "1.0.0", "1.1.0")
    alice_api.post("/api/v1/skills/pdf-tools/advisories", {"summary": "Leaks", "severity": "low", "affected": "*"})
    assert by_name(audit(Api(), ("pdf-tools", "1.0.0")))["pdf-tools", "1.0.0"]["latest_clean"] is None


def test_yanked_deprecated_warn_and_failed_tests_are_reported_with_their_details(alice_api):
    publish(alice_api, "pdf-tools", "1.0.0", "1.1.0")
    alice_api.post("/api/v1/skills/pdf-tools/versions/1.0.0/yank", {"reason": "broken"})
    alice_api.post("/api/v1/skills/pdf-tools/versions/1.0.0/deprecate", {"message": "use 1.1"})
    finish("pdf-tools", "1.0.0", "scan", {"verdict": "warn", "findings": [WARN_FINDING]})
    finish("pdf-tools", "1.0.0", "tests", {"result": "failed", "exit_code": 1, "log": "ok 1\nFAIL: test_rotate\n\n"})
    entry = by_name(audit(Api(), ("pdf-tools", "1.0.0")))["pdf-tools", "1.0.0"]
    assert (entry["yanked"], entry["yanked_reason"], entry["deprecated"]) == (True, "broken", "use 1.1")
    assert entry["scan_verdict"] == "warn" and entry["scan_findings"] == [WARN_FINDING]
    assert (entry["test_result"], entry["test_summary"]) == ("failed", "FAIL: test_rotate")
    assert entry["latest_clean"] == "1.1.0"


def test_a_malicious_version_of_a_public_skill_is_named_to_anyone_with_nothing_else(alice_api, bob_api):
    publish(alice_api, "pdf-tools", "1.0.0", "1.1.0")
    alice_api.post("/api/v1/skills/pdf-tools/versions/1.1.0/deprecate", {"message": "bad"})
    finding = {**WARN_FINDING, "rule": "shell.destructive_rm", "severity": "critical"}
    finish("pdf-tools", "1.1.0", "scan", {"verdict": "malicious", "findings": [finding]})
    for api in (Api(), bob_api, alice_api):
        entry = by_name(audit(api, ("pdf-tools", "1.1.0")))["pdf-tools", "1.1.0"]
        assert entry["found"] is True and entry["scan_verdict"] == "malicious"
        assert entry["scan_findings"] == [] and entry["deprecated"] == "" and entry["advisories"] == []
        assert entry["latest_clean"] == "1.0.0"


def test_more_than_the_limit_is_refused(alice_api):
    response = audit(Api(), *[("s", f"1.0.{i}") for i in range(501)])
    assert response.status_code == 422 and response.json()["code"] == "audit.too_many"
    assert audit(Api(), *[("s", f"1.0.{i}") for i in range(500)]).status_code == 200


def test_a_malformed_request_is_400(anon_api):
    assert anon_api.post("/api/v1/audit", {"skills": [{"name": "x"}]}).json()["code"] == "request.invalid"
    assert anon_api.post("/api/v1/audit", {"skills": "x"}).status_code == 400


def test_the_audit_costs_the_same_queries_for_one_skill_or_many(
    alice_api, token_for, alice, django_assert_max_num_queries
):
    for i in range(8):
        publish(alice_api, f"skill-{i}", "1.0.0", "1.1.0")
        finish(f"skill-{i}", "1.0.0", "scan", {"verdict": "warn", "findings": [WARN_FINDING]})
        alice_api.post(f"/api/v1/skills/skill-{i}/advisories", {"summary": "x", "severity": "low", "affected": "1.0.0"})
    reader = Api(token_for(alice, "read"))
    pairs = [(f"skill-{i}", v) for i in range(8) for v in ("1.0.0", "1.1.0")]
    # token (+ its last-used stamp), versions, advisories, the flagged versions' check details
    with django_assert_max_num_queries(5):
        results = by_name(audit(reader, *pairs))
    assert all(results[f"skill-{i}", "1.0.0"]["scan_findings"] == [WARN_FINDING] for i in range(8))
    assert all(len(results[f"skill-{i}", "1.0.0"]["advisories"]) == 1 for i in range(8))


def test_the_openapi_schema_documents_the_audit_and_advisory_contracts(anon_api):
    schema = anon_api.client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    paths = schema["paths"]
    assert "AuditIn" in str(paths["/api/v1/audit"]["post"]["requestBody"])
    assert "AuditOut" in str(paths["/api/v1/audit"]["post"]["responses"]["200"])
    assert "AdvisoryIn" in str(paths["/api/v1/skills/{name}/advisories"]["post"]["requestBody"])
    assert {"/api/v1/advisories", "/api/v1/advisories/{osv_id}", "/api/v1/advisories/{osv_id}/withdraw"} <= set(paths)
    result = schema["components"]["schemas"]["AuditResultOut"]["properties"]
    assert {"found", "scan_verdict", "test_summary", "advisories", "latest_clean"} <= set(result)


def test_latest_clean_in_range_is_the_newest_clean_version_the_projects_range_reaches(alice_api):
    publish(alice_api, "pdf-tools", "1.0.0", "1.1.0", "1.2.0", "2.0.0")
    alice_api.post("/api/v1/skills/pdf-tools/versions/1.2.0/deprecate", {"message": "use 2.x"})
    alice_api.post("/api/v1/skills/pdf-tools/advisories", {"summary": "Leaks", "severity": "high", "affected": "<1.1"})
    asked = [{"name": "pdf-tools", "version": "1.0.0", "range": "^1.0"}]
    [entry] = alice_api.post("/api/v1/audit", {"skills": asked}).json()["results"]
    # 1.2.0 is deprecated, 2.0.0 is outside the range: an update reaches 1.1.0
    assert (entry["latest_clean"], entry["latest_clean_in_range"]) == ("2.0.0", "1.1.0")
    [plain] = audit(Api(), ("pdf-tools", "1.0.0")).json()["results"]
    assert "latest_clean_in_range" not in plain
