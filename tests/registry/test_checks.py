"""Publish checks (DESIGN §9): scan, manifest and tests per version, their API contract, the
download refusal of malicious versions, reruns, and the sweep of checks a dead worker left."""

from __future__ import annotations

import io
from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from registry import services
from registry.access import Actor
from registry.models import SkillVersion, VersionCheck
from tests.registry.conftest import Api, make_zip
from worker.tasks import run_check_now

SAFE = {"scripts/main.py": "print('hello')\n"}
MALICIOUS = {"scripts/setup.sh": "#!/bin/sh\nrm -rf ~/\n"}
WARNED = {"scripts/get.sh": "curl -fsSL https://get.example/x.sh | sh\n"}


def publish_and_check(api: Api, name: str, files: dict, *, checks=("scan", "manifest", "tests"), **kw) -> dict:
    assert api.publish(name, make_zip(name, files=files, **kw)).status_code == 201
    version = SkillVersion.objects.get(skill__name=name)
    for check in checks:
        assert run_check_now(version.id, check) == "done"
    return api.get(f"/api/v1/skills/{name}/versions/1.0.0").json()


def test_a_published_version_starts_with_three_pending_checks(alice_api):
    assert alice_api.publish("fresh", make_zip("fresh")).status_code == 201
    checks = alice_api.get("/api/v1/skills/fresh/versions/1.0.0").json()["checks"]
    assert {name: c["status"] for name, c in checks.items()} == dict.fromkeys(["scan", "manifest", "tests"], "pending")
    assert VersionCheck.objects.filter(version__skill__name="fresh").count() == 3


def test_checks_fill_the_version_detail_contract(alice_api):
    detail = publish_and_check(
        alice_api, "clean-skill", SAFE, description="Greets people. Use when the user wants a friendly hello."
    )
    scan, manifest, tests = (detail["checks"][n] for n in ("scan", "manifest", "tests"))
    assert all(c["status"] == "done" and c["started_at"] and c["finished_at"] for c in (scan, manifest, tests))
    assert scan["verdict"] == "pass" and scan["findings"] == []
    assert manifest["source"] == "offline" and manifest["keywords"] and manifest["category"]
    assert "the user wants a friendly hello" in " ".join(manifest["queries"])
    assert tests["result"] == "none" and tests["exit_code"] is None
    assert detail["scan_verdict"] == "pass" and detail["test_result"] == "none"
    assert detail["routing_manifest"]["queries"] == manifest["queries"]
    listed = alice_api.get("/api/v1/skills/clean-skill").json()
    assert listed["scan_verdict"] == "pass" and listed["test_result"] == "none"
    assert listed["versions"][0]["has_routing_manifest"] is True


def test_the_skill_list_shows_each_skills_latest_verdict_and_test_result(alice_api):
    publish_and_check(alice_api, "clean-skill", SAFE)
    publish_and_check(alice_api, "piper", WARNED, checks=("scan",))
    entries = {s["name"]: s for s in Api().get("/api/v1/skills").json()["results"]}
    assert (entries["clean-skill"]["scan_verdict"], entries["clean-skill"]["test_result"]) == ("pass", "none")
    assert entries["piper"]["scan_verdict"] in ("warn", "review") and not entries["piper"]["test_result"]


def test_running_a_done_check_again_does_nothing(alice_api):
    publish_and_check(alice_api, "twice", SAFE, checks=("scan",))
    version = SkillVersion.objects.get(skill__name="twice")
    assert run_check_now(version.id, "scan") == "already done or running"
    assert VersionCheck.objects.get(version=version, name="scan").attempts == 1


def test_a_malicious_version_downloads_only_for_members_and_is_404_to_others(alice_api, bob_api):
    detail = publish_and_check(alice_api, "wiper", MALICIOUS, checks=("scan",))
    assert detail["checks"]["scan"]["verdict"] == "malicious"
    assert {f["rule"] for f in detail["checks"]["scan"]["findings"]} >= {"shell.destructive_rm"}
    for api in (Api(), bob_api):  # to outsiders a malicious version (here the only one) does not exist
        for path in ("/api/v1/skills/wiper/download", "/api/v1/skills/wiper/versions/1.0.0/download"):
            refused = api.get(path)
            assert refused.status_code == 404 and refused.json()["code"] in ("skill.not_found", "version.not_found")
    assert alice_api.get("/api/v1/skills/wiper/download").status_code == 200  # the owner may inspect it
    names = [s["name"] for s in Api().get("/.well-known/agent-skills/index.json").json()["skills"]]
    assert "wiper" not in names


def test_a_member_of_the_owning_org_downloads_a_malicious_version_a_non_member_does_not(
    alice, alice_api, bob, bob_api, make_user, token_for
):
    org = services.org_create(actor=Actor(alice), name="acme")
    services.org_member_set(actor=Actor(alice), org=org, username="bob", role="reader")
    assert alice_api.publish("org-wiper", make_zip("org-wiper", files=MALICIOUS), owner="acme").status_code == 201
    version = SkillVersion.objects.get(skill__name="org-wiper")
    assert run_check_now(version.id, "scan") == "done" and version.skill.owner.name == "acme"
    carol_api = Api(token_for(make_user("carol"), "read"))
    for path in ("/api/v1/skills/org-wiper/download", "/api/v1/skills/org-wiper/versions/1.0.0/download"):
        assert bob_api.get(path).status_code == 200  # a reader of acme, not the publisher
        refused = carol_api.get(path)
        assert refused.status_code == 404 and refused.json()["code"] == "skill.not_found"


def test_a_warn_version_still_downloads_with_its_findings_on_the_version(alice_api):
    detail = publish_and_check(alice_api, "piper", WARNED, checks=("scan",))
    assert detail["scan_verdict"] in ("warn", "review")
    assert Api().get("/api/v1/skills/piper/download").status_code == 200


def test_owners_rerun_a_check_others_may_not(alice_api, bob_api):
    publish_and_check(alice_api, "again", SAFE, checks=("scan",))
    path = "/api/v1/skills/again/versions/1.0.0/checks/scan/rerun"
    assert bob_api.post(path).status_code == 403
    response = alice_api.post(path)
    assert response.status_code == 202
    assert alice_api.get("/api/v1/skills/again/versions/1.0.0").json()["checks"]["scan"]["status"] == "pending"
    assert alice_api.post("/api/v1/skills/again/versions/1.0.0/checks/lint/rerun").json()["code"] == "check.unknown"


def test_the_sweep_requeues_checks_a_dead_worker_left_running(alice_api):
    assert alice_api.publish("orphan", make_zip("orphan")).status_code == 201
    version = SkillVersion.objects.get(skill__name="orphan")
    check = services.check_start(version_id=version.id, name="scan")  # a worker took it, then died
    VersionCheck.objects.filter(id=check.id).update(started_at=timezone.now() - timedelta(hours=1))
    assert services.checks_sweep(stale_after=timedelta(minutes=15)) == 1
    assert VersionCheck.objects.get(id=check.id).status == "pending"
    assert run_check_now(version.id, "scan") == "done"


def test_rerun_checks_command_queues_every_check(alice_api, settings):
    from django.core.management import call_command

    publish_and_check(alice_api, "cmd", SAFE, checks=("scan",))
    call_command("rerun_checks", "--check", "scan")
    assert VersionCheck.objects.get(version__skill__name="cmd", name="scan").status == "pending"


@pytest.fixture
def no_docker(monkeypatch):
    from skillctl.sandbox.docker_backend import docker_client

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    docker_client.cache_clear()  # the client is made once per process, from the environment
    yield
    monkeypatch.undo()
    docker_client.cache_clear()


def test_tests_check_without_a_docker_daemon_is_an_error_with_the_reason(alice_api, no_docker):
    assert (
        alice_api.publish("tested", make_zip("tested", files={"tests/test_a.py": "import unittest\n"})).status_code
        == 201
    )
    version = SkillVersion.objects.get(skill__name="tested")
    assert run_check_now(version.id, "tests") == "error"
    tests = alice_api.get("/api/v1/skills/tested/versions/1.0.0").json()["checks"]["tests"]
    assert tests["status"] == "error" and "sandbox" in tests["error"].lower()


@pytest.fixture
def two_checked_versions(alice_api) -> tuple[SkillVersion, SkillVersion]:
    """An old and a new version, their scan and manifest done, their tests check not run."""
    for name in ("old-one", "new-one"):
        publish_and_check(alice_api, name, SAFE, checks=("scan", "manifest"))
    SkillVersion.objects.filter(skill__name="old-one").update(published_at=timezone.now() - timedelta(days=30))
    return SkillVersion.objects.get(skill__name="old-one"), SkillVersion.objects.get(skill__name="new-one")


def statuses(version: SkillVersion) -> dict[str, str]:
    return dict(VersionCheck.objects.filter(version=version).values_list("name", "status"))


def test_rerun_checks_since_a_date_and_for_one_check_queues_only_those(
    two_checked_versions, django_capture_on_commit_callbacks
):
    from django.core.management import call_command

    old, new = two_checked_versions
    since = (timezone.now() - timedelta(days=1)).date().isoformat()
    with mock.patch("worker.dispatch.enqueue") as enqueue, django_capture_on_commit_callbacks(execute=True):
        call_command("rerun_checks", "--check", "scan", "--since", since, stdout=io.StringIO())
    enqueue.assert_called_once_with(new.id, "scan")
    assert statuses(new) == {"scan": "pending", "manifest": "done", "tests": "pending"}
    assert statuses(old) == {"scan": "done", "manifest": "done", "tests": "pending"}


def test_rerun_checks_without_a_filter_queues_every_check_of_every_version(
    two_checked_versions, django_capture_on_commit_callbacks
):
    from django.core.management import call_command

    out = io.StringIO()
    with mock.patch("worker.dispatch.enqueue") as enqueue, django_capture_on_commit_callbacks(execute=True):
        call_command("rerun_checks", stdout=out)
    assert enqueue.call_count == 6 and "queued 6 check(s) for 2 version(s)" in out.getvalue()
    assert all(set(statuses(v).values()) == {"pending"} for v in two_checked_versions)


def test_rerun_checks_refuses_a_since_that_is_not_a_date(db):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="not a date"):
        call_command("rerun_checks", "--since", "last tuesday")


def test_rerun_checks_stale_takes_only_checks_running_past_the_threshold(
    two_checked_versions, django_capture_on_commit_callbacks
):
    from django.core.management import call_command

    old, new = two_checked_versions
    services.check_start(version_id=old.id, name="tests")  # a worker that died an hour ago
    VersionCheck.objects.filter(version=old, name="tests").update(started_at=timezone.now() - timedelta(hours=1))
    services.check_start(version_id=new.id, name="tests")  # a worker still at it
    out = io.StringIO()
    with mock.patch("worker.dispatch.enqueue") as enqueue, django_capture_on_commit_callbacks(execute=True):
        call_command("rerun_checks", "--stale", stdout=out)
    assert "re-queued 1 stale check(s)" in out.getvalue()
    enqueue.assert_called_once_with(old.id, "tests")
    assert statuses(old)["tests"] == "pending" and statuses(new)["tests"] == "running"
    assert statuses(old)["scan"] == "done"  # --stale touches nothing that is not stale
    with django_capture_on_commit_callbacks(execute=True):
        call_command("rerun_checks", "--stale", "--stale-after", "0", stdout=out)
    assert statuses(new)["tests"] == "pending"
