"""Rescans when the scanner learns (DESIGN §13): a new rule set re-judges published versions,
newest first and in batches, only the scan; the history keeps every verdict with its rules; a
version turned malicious is audited and named by `POST /api/v1/audit`."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.management import call_command

from registry import services
from registry.models import AuditEvent, CheckHistory, SkillVersion, VersionCheck
from skillctl.format import scanner
from tests.registry.conftest import Api, make_zip
from worker import dispatch
from worker.engines import scan as scan_engine
from worker.tasks import rescan_checks, run_check_now

pytestmark = pytest.mark.django_db
OLD_RULES = scanner.RULES_VERSION
NEW_RULES = OLD_RULES + ".test"


def publish_scanned(api: Api, name: str, *versions: str) -> list[SkillVersion]:
    """Publish and run the real scan and tests checks, with today's rules."""
    found = []
    for version in versions:
        files = {"scripts/main.py": "print('hello')\n"}
        assert api.publish(name, make_zip(name, version=version, files=files)).status_code == 201
        sv = SkillVersion.objects.get(skill__name=name, version=version)
        assert run_check_now(sv.id, "scan") == "done"
        found.append(sv)
    return found


@pytest.fixture
def new_rules(monkeypatch):
    """Call it to change the scanner's rule set: a new version, and a rule that calls `print(`
    malicious (the engine's real scan runs; only its judgement of this one line is added)."""
    real = scanner.scan_archive

    def scan_archive(source):  # noqa: ANN001, ANN202
        report = real(source)
        finding = scanner.ScanFinding("test.print_is_evil", "critical", "scripts/main.py", 1, "print", "print(")
        return scanner.ScanReport([*report.findings, finding])

    def change() -> None:
        monkeypatch.setattr(scanner, "RULES_VERSION", NEW_RULES)
        monkeypatch.setattr(scanner, "scan_archive", scan_archive)

    return change


def scan_state(sv: SkillVersion) -> dict:
    return Api().get(f"/api/v1/skills/{sv.skill.name}/versions/{sv.version}").json()["checks"]["scan"]


def test_a_scan_records_its_rules_version_and_history(alice_api):
    (sv,) = publish_scanned(alice_api, "pdf-tools", "1.0.0")
    state = scan_state(sv)
    assert state["verdict"] == "pass" and state["rules_version"] == OLD_RULES
    assert [(h["outcome"], h["rules_version"]) for h in state["history"]] == [("pass", OLD_RULES)]


def test_nothing_is_rescanned_while_the_rules_are_the_same(alice_api):
    publish_scanned(alice_api, "pdf-tools", "1.0.0")
    assert rescan_checks() == 0


def test_new_rules_rescan_only_the_scan_and_the_version_turns_malicious(alice_api, new_rules, bob_api):
    old, sv = publish_scanned(alice_api, "pdf-tools", "1.0.0", "1.1.0")
    new_rules()
    for check in ("tests", "manifest"):
        assert run_check_now(sv.id, check) == "done"
    before = {c.name: (c.status, c.result) for c in VersionCheck.objects.filter(version=sv)}
    assert rescan_checks() == 2
    assert VersionCheck.objects.get(version=sv, name="scan").status == "pending"
    assert SkillVersion.objects.get(id=sv.id).scan_verdict == "pass"  # until the new verdict lands
    for version in (sv, old):
        assert run_check_now(version.id, "scan") == "done"
    after = {c.name: (c.status, c.result) for c in VersionCheck.objects.filter(version=sv)}
    assert {k: after[k] for k in ("tests", "manifest")} == {k: before[k] for k in ("tests", "manifest")}
    assert SkillVersion.objects.get(id=sv.id).scan_verdict == "malicious"
    rows = CheckHistory.objects.filter(version=sv, name="scan").order_by("finished_at")
    assert [(h.outcome, h.rules_version) for h in rows] == [("pass", OLD_RULES), ("malicious", NEW_RULES)]
    events = AuditEvent.objects.filter(action="version.rescan", skill="pdf-tools", version="1.1.0")
    assert [(e.data["before"], e.data["after"], e.data["rules_version"]) for e in events] == [
        ("pass", "malicious", NEW_RULES)
    ]
    for api in (Api(), bob_api):
        body = api.post("/api/v1/audit", {"skills": [{"name": "pdf-tools", "version": "1.1.0"}]}).json()
        assert body["results"][0]["found"] is True and body["results"][0]["scan_verdict"] == "malicious"
    assert rescan_checks() == 0  # everything judged by the new rules now


def test_the_history_shows_both_verdicts_newest_first_on_the_version_detail(alice_api, new_rules):
    (sv,) = publish_scanned(alice_api, "pdf-tools", "1.0.0")
    new_rules()
    rescan_checks()
    run_check_now(sv.id, "scan")
    state = alice_api.get("/api/v1/skills/pdf-tools/versions/1.0.0").json()["checks"]["scan"]  # the owner sees it
    assert [(h["outcome"], h["rules_version"]) for h in state["history"]] == [
        ("malicious", NEW_RULES),
        ("pass", OLD_RULES),
    ]


def test_rescans_go_newest_first_in_batches_and_leave_running_ones_alone(alice_api, new_rules, settings):
    versions = publish_scanned(alice_api, "pdf-tools", "1.0.0", "1.1.0", "1.2.0")
    new_rules()
    services.checks_reset(versions=[versions[0]], names=["scan"])  # a rerun someone started...
    running = services.check_start(version_id=versions[0].id, name="scan")  # ...that a worker runs now
    assert running is not None
    settings.SKILLYARD_RESCAN_BATCH = 1
    assert rescan_checks() == 1
    pending = VersionCheck.objects.filter(name="scan", status="pending").values_list("version__version", flat=True)
    assert list(pending) == ["1.2.0"]
    assert rescan_checks() == 1
    assert rescan_checks() == 0  # 1.0.0's scan is running: not queued twice
    assert VersionCheck.objects.get(version=versions[0], name="scan").status == "running"


def test_a_verdict_from_before_rules_had_versions_is_rescanned_and_kept_in_history(alice_api):
    (sv,) = publish_scanned(alice_api, "pdf-tools", "1.0.0")
    check = VersionCheck.objects.get(version=sv, name="scan")
    VersionCheck.objects.filter(id=check.id).update(result={"verdict": "pass", "findings": []})
    CheckHistory.objects.all().delete()
    assert rescan_checks() == 1
    assert [(h.outcome, h.rules_version) for h in CheckHistory.objects.filter(version=sv)] == [("pass", "")]


def test_the_command_queues_every_outdated_scan_at_once(alice_api, new_rules, capsys):
    publish_scanned(alice_api, "pdf-tools", "1.0.0", "1.1.0", "1.2.0")
    new_rules()
    call_command("rerun_checks", "--check", "scan", "--rules-changed")
    assert f"queued 3 scan(s) of versions judged with rules older than {NEW_RULES}" in capsys.readouterr().out
    assert VersionCheck.objects.filter(name="scan", status="pending").count() == 3
    assert VersionCheck.objects.filter(name="tests", status="pending").count() == 3  # never run, never reset
    with pytest.raises(Exception, match="--check scan"):
        call_command("rerun_checks", "--rules-changed")


def test_the_engine_reports_the_scanners_rules_version(new_rules):
    assert scan_engine.rules_version() == OLD_RULES
    new_rules()
    assert scan_engine.rules_version() == NEW_RULES


def test_the_beat_schedule_rescans_at_the_named_interval():
    rescan = settings.CELERY_BEAT_SCHEDULE["checks-rescan"]
    assert rescan["task"] == rescan_checks.name == "checks.rescan"
    assert rescan["schedule"] == settings.SKILLYARD_RESCAN_INTERVAL_SECONDS > 0
    assert rescan_checks.time_limit


def test_the_embedded_runner_rescans_in_the_background_until_none_is_left(
    alice_api, new_rules, settings, monkeypatch, django_capture_on_commit_callbacks
):
    versions = publish_scanned(alice_api, "pdf-tools", "1.0.0", "1.1.0")
    new_rules()
    settings.SKILLYARD_RESCAN_BATCH, settings.SKILLYARD_RESCAN_INTERVAL_SECONDS = 1, 0
    ran: list[tuple[int, str]] = []

    def enqueue(version_id, name):  # noqa: ANN001, ANN202 - the pool, run here (one test database connection)
        ran.append((version_id, name))
        run_check_now(version_id, name)

    settings.SKILLYARD_CHECKS_ENABLED = True
    monkeypatch.setattr(dispatch, "enqueue", enqueue)
    with django_capture_on_commit_callbacks(execute=True):
        dispatch._rescan_loop()
    assert sorted(ran) == sorted((v.id, "scan") for v in versions)
    assert set(SkillVersion.objects.values_list("scan_verdict", flat=True)) == {"malicious"}
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    assert dispatch.start_rescans() is None  # with a broker, the workers' beat does it
