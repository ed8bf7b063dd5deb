"""Advisories over the API: filing (rights, validation), reading per skill, by id and as a feed,
withdrawing, private visibility, ids, and the audit log."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from registry import services
from registry.access import Actor
from registry.models import Advisory, AuditEvent, SkillVersion
from tests.registry.conftest import Api, make_zip

pytestmark = pytest.mark.django_db


def publish(api: Api, name: str, *versions: str, **fields) -> None:
    for version in versions or ("1.0.0",):
        assert api.publish(name, make_zip(name, version=version), **fields).status_code == 201


def file(api: Api, name: str, **fields):
    body = {"summary": "Sends the API key out", "severity": "high", "affected": "^1.0", **fields}
    return api.post(f"/api/v1/skills/{name}/advisories", body)


def test_filing_an_advisory_answers_201_with_the_osv_object(alice_api):
    publish(alice_api, "pdf-tools", "1.0.0", "1.2.0", "2.0.0")
    response = file(alice_api, "pdf-tools", details="It posts `$API_KEY`.", aliases=["CVE-2026-12345"])
    assert response.status_code == 201
    osv = response.json()
    year = timezone.now().year
    assert osv["id"] == f"SKY-{year}-0001"
    assert (osv["summary"], osv["details"], osv["aliases"]) == (
        "Sends the API key out",
        "It posts `$API_KEY`.",
        ["CVE-2026-12345"],
    )
    assert osv["database_specific"] == {"severity": "high"} and "severity" not in osv
    (affected,) = osv["affected"]
    assert affected["package"] == {"ecosystem": "Skillyard", "name": "pdf-tools"}
    assert affected["ranges"] == [{"type": "SEMVER", "events": [{"introduced": "1.0.0"}, {"fixed": "2.0.0-0"}]}]
    assert affected["versions"] == ["1.0.0", "1.2.0"]
    assert osv["published"].endswith("Z") and "withdrawn" not in osv
    assert osv["references"][0]["url"].endswith(f"/advisories/{osv['id']}")


def test_ids_count_up_within_the_year(alice_api):
    publish(alice_api, "pdf-tools")
    ids = [file(alice_api, "pdf-tools").json()["id"] for _ in range(3)]
    year = timezone.now().year
    assert ids == [f"SKY-{year}-0001", f"SKY-{year}-0002", f"SKY-{year}-0003"]


def test_only_publishers_of_the_skill_or_staff_may_file(alice_api, bob, bob_api, token_for, alice):
    publish(alice_api, "pdf-tools")
    assert file(Api(), "pdf-tools").json()["code"] == "auth.required"
    refused = file(bob_api, "pdf-tools")
    assert refused.status_code == 403 and refused.json()["code"] == "permission.role"
    assert file(Api(token_for(alice, "read")), "pdf-tools").json()["code"] == "token.scope"
    bob.is_staff = True
    bob.save()
    assert file(bob_api, "pdf-tools").status_code == 201
    assert file(Api(token_for(bob, "read")), "pdf-tools").json()["code"] == "token.scope"


def test_a_private_skills_advisories_exist_only_for_those_who_see_it(alice_api, bob_api):
    publish(alice_api, "secret", visibility="private")
    osv = file(alice_api, "secret").json()
    for api in (Api(), bob_api):
        assert api.get("/api/v1/skills/secret/advisories").status_code == 404
        assert api.get(f"/api/v1/advisories/{osv['id']}").json()["code"] == "advisory.not_found"
        assert api.get("/api/v1/advisories").json()["advisories"] == []
        assert file(api, "secret").status_code in (401, 404)
        assert api.post(f"/api/v1/advisories/{osv['id']}/withdraw").status_code in (401, 404)
    assert [a["id"] for a in alice_api.get("/api/v1/advisories").json()["advisories"]] == [osv["id"]]
    assert alice_api.get("/api/v1/skills/secret/advisories").json()["advisories"][0]["id"] == osv["id"]


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("severity", "urgent", "advisory.severity_invalid"),
        ("affected", "latest", "advisory.affected_invalid"),
        ("affected", ">=2 <1", "advisory.affected_invalid"),
        ("affected", "", "request.invalid"),
        ("summary", "", "request.invalid"),
    ],
)
def test_an_advisory_that_says_nothing_clear_is_refused(alice_api, field, value, code):
    publish(alice_api, "pdf-tools")
    response = file(alice_api, "pdf-tools", **{field: value})
    assert response.status_code in (400, 422) and response.json()["code"] == code, response.json()
    assert not Advisory.objects.exists()


def test_a_withdrawn_advisory_keeps_its_id_with_withdrawn_set(alice_api, bob_api):
    publish(alice_api, "pdf-tools")
    osv = file(alice_api, "pdf-tools").json()
    assert bob_api.post(f"/api/v1/advisories/{osv['id']}/withdraw").json()["code"] == "permission.role"
    withdrawn = alice_api.post(f"/api/v1/advisories/{osv['id']}/withdraw").json()
    assert withdrawn["id"] == osv["id"] and withdrawn["withdrawn"] >= osv["published"]
    listed = Api().get("/api/v1/skills/pdf-tools/advisories").json()["advisories"]
    assert [(a["id"], bool(a.get("withdrawn"))) for a in listed] == [(osv["id"], True)]
    again = alice_api.post(f"/api/v1/advisories/{osv['id']}/withdraw").json()
    assert again["withdrawn"] == withdrawn["withdrawn"]  # withdrawing twice changes nothing


def test_filing_and_withdrawing_go_to_the_audit_log(alice_api):
    publish(alice_api, "pdf-tools")
    osv = file(alice_api, "pdf-tools").json()
    alice_api.post(f"/api/v1/advisories/{osv['id']}/withdraw")
    events = AuditEvent.objects.filter(skill="pdf-tools", action__startswith="advisory.").order_by("id")
    assert [(e.action, e.data["advisory"], e.actor.username) for e in events] == [
        ("advisory.create", osv["id"], "alice"),
        ("advisory.withdraw", osv["id"], "alice"),
    ]


def backdate(name: str, osv_id: str, days: int = 3) -> None:
    """An advisory filed, and its skill's versions published, ``days`` ago."""
    then = timezone.now() - timedelta(days=days)
    Advisory.objects.filter(osv_id=osv_id).update(published_at=then, modified_at=then)
    SkillVersion.objects.filter(skill__name=name).update(published_at=then)


def test_the_feed_lists_advisories_modified_since_a_time(alice_api):
    publish(alice_api, "pdf-tools", "1.0.0")
    publish(alice_api, "csv-tools", "1.0.0")
    old = file(alice_api, "pdf-tools").json()
    backdate("pdf-tools", old["id"])
    new = file(alice_api, "csv-tools").json()
    since = (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert [a["id"] for a in Api().get("/api/v1/advisories", since=since).json()["advisories"]] == [new["id"]]
    assert [a["id"] for a in Api().get("/api/v1/advisories").json()["advisories"]] == [old["id"], new["id"]]
    assert Api().get("/api/v1/advisories", since="yesterday").json()["code"] == "advisory.since_invalid"


def test_a_newly_published_version_in_the_range_joins_versions_and_moves_modified(alice_api):
    publish(alice_api, "pdf-tools", "1.0.0")
    osv = file(alice_api, "pdf-tools").json()
    backdate("pdf-tools", osv["id"])
    since = (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert Api().get("/api/v1/advisories", since=since).json()["advisories"] == []
    publish(alice_api, "pdf-tools", "2.0.0")  # outside ^1.0: nothing changes for the advisory
    assert Api().get("/api/v1/advisories", since=since).json()["advisories"] == []
    publish(alice_api, "pdf-tools", "1.1.0")
    (fresh,) = Api().get("/api/v1/advisories", since=since).json()["advisories"]
    assert fresh["affected"][0]["versions"] == ["1.0.0", "1.1.0"] and fresh["modified"] >= since


def test_the_service_refuses_outsiders_before_it_writes(alice_api, bob):
    publish(alice_api, "pdf-tools")
    with pytest.raises(services.advisories.Forbidden):
        services.advisories.advisory_create(
            actor=Actor(bob), name="pdf-tools", summary="x", severity="low", affected="*"
        )
    assert not Advisory.objects.exists()
