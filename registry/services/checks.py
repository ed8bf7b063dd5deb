"""Publish checks (DESIGN §9): created with the version, run by worker tasks, results saved here.

A check's life: pending → running → done | error (or skipped). ``check_start`` is the only way
into running: it refuses a check already done (a redelivered task does nothing twice) and, given
``stale_after``, one another run holds (a duplicate delivery does not run it twice at once); the
same run (a retry or redelivery of one Celery task, same id) takes its check back.
``check_finish``/``check_fail`` record the outcome only for the run that holds the check (a run
overtaken by a rerun or the sweep records nothing) and copy what listings and downloads read
onto the version (and, for the default version, the skill). The jobs are queued only after the
transaction commits (``worker.dispatch``), so a worker never looks for a row not yet visible.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from registry.access import Actor, require
from registry.errors import Invalid, not_found
from registry.models import CheckHistory, Role, SkillVersion, TokenScope, VersionCheck
from registry.services.audit import audit_record
from skillyard.metrics import check_observed

CHECKS = tuple(VersionCheck.Name.values)
# Past runs shown with a check (newest first): a version's rescans over years stay a short list.
HISTORY_SHOWN = 20


def _state_save(check: VersionCheck) -> None:
    """Copy one check's API shape onto its version (the detail then needs no extra query)."""
    from registry.selectors import check_out

    version = SkillVersion.objects.select_for_update().get(id=check.version_id)
    state = {**check_out(check), "history": _history(check.version_id, check.name)}
    version.checks_state = {**version.checks_state, check.name: state}
    version.save(update_fields=["checks_state"])
    check.version.checks_state = version.checks_state


def _enqueue(version_id: int, name: str) -> None:
    from worker.dispatch import enqueue

    transaction.on_commit(lambda: enqueue(version_id, name))


def checks_create(*, version: SkillVersion) -> None:
    """The three checks of a new version, pending, each queued once the publish commits."""
    checks = VersionCheck.objects.bulk_create([VersionCheck(version=version, name=name) for name in CHECKS])
    for check in checks:
        _state_save(check)
        _enqueue(version.id, check.name)


@transaction.atomic
def check_start(
    *, version_id: int, name: str, run_id: str = "", stale_after: timedelta | None = None
) -> VersionCheck | None:
    """Mark a check running for ``run_id`` (default: a new id) and return it; None when it is
    done already (or gone), or, with ``stale_after``, when another run has held it for less
    than that (its worker may be alive: the sweep takes it back after that long)."""
    check = (
        VersionCheck.objects.select_for_update()
        .select_related("version", "version__skill")
        .filter(version_id=version_id, name=name)
        .first()
    )
    if check is None or check.status in (VersionCheck.Status.DONE, VersionCheck.Status.SKIPPED):
        return None
    if stale_after is not None and _held_by_another(check, run_id, stale_after):
        return None
    check.status, check.run_id = VersionCheck.Status.RUNNING, run_id or uuid.uuid4().hex
    check.started_at, check.finished_at, check.error = timezone.now(), None, ""
    check.attempts += 1
    check.save(update_fields=["status", "run_id", "started_at", "finished_at", "error", "attempts", "updated_at"])
    _state_save(check)
    return check


def _held_by_another(check: VersionCheck, run_id: str, stale_after: timedelta) -> bool:
    if check.status != VersionCheck.Status.RUNNING or not check.run_id or check.run_id == run_id:
        return False
    return check.started_at is not None and check.started_at > timezone.now() - stale_after


def _still_held(check: VersionCheck) -> bool:
    """Does this run still hold its check? (A rerun or the sweep gives it to another.)"""
    return VersionCheck.objects.select_for_update().filter(id=check.id, run_id=check.run_id).exists()


@transaction.atomic
def check_finish(
    *, check: VersionCheck, result: dict, routing_vector: bytes | None = None, vector_model: str = ""
) -> bool:
    """``routing_vector``: the manifest check's semantic centroid (the worker computes it; None
    without the semantic extra), stored next to the routing manifest it was made from, with the
    embedder that made it (``vector_model``). False, and nothing recorded, when another run holds
    the check now."""
    if not _still_held(check):
        return False
    check.status, check.result, check.finished_at = VersionCheck.Status.DONE, result, timezone.now()
    check.save(update_fields=["status", "result", "finished_at", "updated_at"])
    check_observed(check)
    _history_record(check)
    _state_save(check)
    fields: dict[str, object]
    if check.name == VersionCheck.Name.SCAN:
        verdict = str(result.get("verdict", ""))
        _verdict_change_record(check, verdict)
        fields = {"scan_verdict": verdict}
    elif check.name == VersionCheck.Name.TESTS:
        fields = {"test_result": str(result.get("result", ""))}
    else:
        fields = {
            "routing_manifest": {k: result.get(k) for k in ("category", "keywords", "phrases", "queries", "negative")},
            "routing_vector": routing_vector,
            "routing_vector_model": vector_model if routing_vector is not None else "",
        }
    # Only this check's column: the other checks of the version finish in parallel.
    SkillVersion.objects.filter(id=check.version_id).update(**fields)
    _skill_checks_refresh(check.version_id)
    return True


@transaction.atomic
def check_fail(*, check: VersionCheck, error: str) -> bool:
    """The check's error; False, and nothing recorded, when another run holds the check now."""
    if not _still_held(check):
        return False
    check.status, check.error, check.finished_at = VersionCheck.Status.ERROR, error[:2000], timezone.now()
    check.save(update_fields=["status", "error", "finished_at", "updated_at"])
    check_observed(check)
    _history_record(check)
    _state_save(check)
    if check.name == VersionCheck.Name.TESTS:
        SkillVersion.objects.filter(id=check.version_id).update(test_result="error")
        _skill_checks_refresh(check.version_id)
    return True


def _history_record(check: VersionCheck) -> None:
    """Keep this run's outcome: a rerun or rescan replaces the check's result, not its past."""
    outcome = check.result.get("verdict") or check.result.get("result") or ""
    CheckHistory.objects.create(
        version_id=check.version_id,
        name=check.name,
        status=check.status,
        outcome=str(outcome) if check.status == VersionCheck.Status.DONE else "",
        rules_version=str(check.result.get("rules_version", "")),
        finished_at=check.finished_at or timezone.now(),
    )


def _history(version_id: int, name: str) -> list[dict]:
    """``checks.<name>.history`` of the version detail: past runs, newest first."""
    rows = CheckHistory.objects.filter(version_id=version_id, name=name).order_by("-finished_at", "-id")
    return [
        {"status": h.status, "outcome": h.outcome, "rules_version": h.rules_version, "finished_at": _iso(h.finished_at)}
        for h in rows[:HISTORY_SHOWN]
    ]


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _verdict_change_record(check: VersionCheck, verdict: str) -> None:
    """A scan that changes a version's verdict (a rescan with new rules) goes to the audit log."""
    version = check.version
    before = SkillVersion.objects.filter(id=version.id).values_list("scan_verdict", flat=True).first() or ""
    if before and before != verdict:
        audit_record(
            actor=None,
            action="version.rescan",
            owner=version.skill.owner.name,
            skill=version.skill.name,
            version=version.version,
            before=before,
            after=verdict,
            rules_version=str(check.result.get("rules_version", "")),
        )


@transaction.atomic
def skill_version_vector_set(*, version_id: int, vector: bytes, model: str) -> None:
    """A version's catalog search vector made again by another embedder (``rerun_checks
    --vectors`` after an upgrade); the routing manifest it encodes is unchanged."""
    SkillVersion.objects.filter(id=version_id).update(routing_vector=vector, routing_vector_model=model)
    _skill_checks_refresh(version_id)  # touches the skill: the search index is keyed on it


def _skill_checks_refresh(version_id: int) -> None:
    from registry.selectors import skill_latest_versions
    from registry.services.summary import skill_summary_refresh

    version = SkillVersion.objects.select_related("skill").get(id=version_id)
    skill = version.skill
    default = skill_latest_versions(skill_ids=[skill.id])[skill.id]
    if default != version.version and version.scan_verdict != "malicious":
        return  # the list shows the default version's results
    if default == version.version:
        skill.scan_verdict, skill.test_result = version.scan_verdict, version.test_result
        # updated_at too: the catalog's search index is keyed on it (a new routing manifest).
        skill.save(update_fields=["scan_verdict", "test_result", "updated_at"])
    # A malicious verdict can end a version's time as the default: an older clean version then
    # stands in, with its own results and summary (DESIGN §13).
    skill_summary_refresh(skill=skill)


@transaction.atomic
def check_rerun(*, actor: Actor, version: SkillVersion, name: str) -> VersionCheck:
    """An owner asks for a check again (a new scanner, a fixed test environment)."""
    if name not in CHECKS:
        raise Invalid("check.unknown", f"No check named {name!r}; checks are {', '.join(CHECKS)}.")
    require(actor, owner=version.skill.owner, role=Role.PUBLISHER, scope=TokenScope.PUBLISH)
    check = checks_reset(versions=[version], names=[name])[0]
    audit_record(
        actor=actor,
        action="check.rerun",
        owner=version.skill.owner.name,
        skill=version.skill.name,
        version=version.version,
        check=name,
    )
    return check


def checks_reset(*, versions, names) -> list[VersionCheck]:  # noqa: ANN001
    """Back to pending (created if missing) and queued: reruns and the operator's command."""
    checks = []
    for version in versions:
        for name in names:
            check, _ = VersionCheck.objects.get_or_create(version=version, name=name)
            check.status, check.result, check.error, check.run_id = VersionCheck.Status.PENDING, {}, "", ""
            check.started_at = check.finished_at = None
            check.save()
            _state_save(check)
            _enqueue(version.id, name)
            checks.append(check)
    return checks


@transaction.atomic
def checks_rescan(*, rules_version: str, limit: int | None = None) -> int:
    """Queue a new scan of published versions whose verdict came from other rules than
    ``rules_version``, newest first, at most ``limit`` (a batch; None: all). Only finished scans
    are taken (a pending or running one is queued already) and only the scan: the tests and the
    manifest keep their results. The old verdict stays on the version until the new one lands."""
    done = VersionCheck.objects.select_for_update().filter(
        name=VersionCheck.Name.SCAN, status=VersionCheck.Status.DONE, version__deleted_at__isnull=True
    )
    outdated = done.filter(Q(result__rules_version__isnull=True) | ~Q(result__rules_version=rules_version))
    checks = list(outdated.select_related("version").order_by("-version__published_at", "-version_id")[:limit])
    for check in checks:
        _history_backfill(check)
    checks_reset(versions=[c.version for c in checks], names=[VersionCheck.Name.SCAN])
    return len(checks)


def _history_backfill(check: VersionCheck) -> None:
    """A verdict given before history was kept joins it before the rescan replaces it."""
    if not CheckHistory.objects.filter(version_id=check.version_id, name=check.name).exists():
        _history_record(check)


def checks_sweep(*, stale_after: timedelta, pending_after: timedelta | None = None, now: datetime | None = None) -> int:
    """Checks whose run or message was lost go back to the queue: those left running longer than
    ``stale_after`` (their worker died) and, given ``pending_after``, those pending that long (their
    message was lost: Redis restarted without persistence, or the broker was down when the publish
    committed). Each is saved pending again, so its age starts over (a check whose message was
    only late is queued at most once per ``pending_after``), and queued once this commits. A
    duplicate message is harmless: ``check_start`` finds the check done, or held by a live run,
    and does nothing. Rows a run is taking right now (locked) are left to it."""
    moment = now or timezone.now()
    lost = Q(status=VersionCheck.Status.RUNNING, started_at__lt=moment - stale_after)
    if pending_after is not None:
        lost |= Q(status=VersionCheck.Status.PENDING, updated_at__lt=moment - pending_after)
    with transaction.atomic():
        found = VersionCheck.objects.select_for_update(skip_locked=True, of=("self",)).filter(lost)
        checks = list(found.select_related("version"))
        for check in checks:
            check.status, check.run_id = VersionCheck.Status.PENDING, ""  # a running one's run is presumed dead
            check.save(update_fields=["status", "run_id", "updated_at"])
            _state_save(check)
            _enqueue(check.version_id, check.name)
    return len(checks)


def version_for_check(*, name: str, version: str) -> SkillVersion:
    found = (
        SkillVersion.objects.select_related("skill", "skill__owner").filter(skill__name=name, version=version).first()
    )
    if found is None:
        raise not_found("version")
    return found
