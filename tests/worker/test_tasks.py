"""The publish-check tasks as Celery runs them (worker/tasks.py): acknowledged late and put back
when their worker dies, retried with backoff on transient errors, hard time-limited, and the
beat schedule's sweep. Retries run in Celery's eager mode (``Task.apply``), which follows the
retry chain in this process: the same code path a worker takes, without its waiting."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from unittest import mock

import pytest
import yaml
from django.conf import settings
from django.db import DatabaseError, OperationalError
from django.utils import timezone

from registry import services
from registry.access import Actor
from registry.models import SkillVersion, VersionCheck
from skillctl.routing import semantic
from tests.registry.conftest import _isolated, alice, make_user, make_zip, upload  # noqa: F401 - fixtures
from worker.celery import app
from worker.engines.tests import CAPS
from worker.tasks import CHECK_TIME_LIMIT, run_check, sweep_checks

CHECK_STALE_SECONDS = settings.SKILLYARD_CHECK_STALE_SECONDS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def version(alice) -> SkillVersion:  # noqa: F811 - the fixture imported above
    result = services.skill_version_publish(actor=Actor(alice), name="tasked", archive=upload(make_zip("tasked")))
    return result.version


def test_the_check_task_is_acked_late_put_back_on_worker_loss_and_retried_on_transient_errors():
    assert run_check.name == "checks.run"
    assert run_check.acks_late and run_check.reject_on_worker_lost
    assert set(run_check.autoretry_for) == {DatabaseError, ConnectionError}
    assert run_check.retry_backoff and run_check.retry_backoff_max == 300
    assert run_check.max_retries == 5
    assert settings.CELERY_TASK_ACKS_LATE and settings.CELERY_TASK_REJECT_ON_WORKER_LOST
    assert settings.CELERY_WORKER_PREFETCH_MULTIPLIER == 1


def test_the_check_task_has_a_hard_time_limit_above_the_sandbox_run_and_below_redelivery():
    assert run_check.time_limit == CHECK_TIME_LIMIT
    assert CAPS.max_timeout_seconds < run_check.soft_time_limit < run_check.time_limit
    # Redis hands an unacknowledged task to another worker after this: a live check must be over.
    assert settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] > CHECK_STALE_SECONDS
    assert CHECK_STALE_SECONDS > CHECK_TIME_LIMIT  # the sweep never takes a live check for dead
    # a message is presumed lost only after a live run would have been presumed dead
    assert settings.SKILLYARD_CHECK_PENDING_SECONDS >= CHECK_STALE_SECONDS
    app.loader.import_default_modules()
    ours = [task for name, task in app.tasks.items() if not name.startswith("celery.")]
    assert {t.name for t in ours} >= {"checks.run", "checks.sweep", "worker.ping"}
    assert all(task.time_limit for task in ours), "every task has a hard time limit (STYLE principle 5)"


def test_the_beat_schedule_sweeps_with_the_stale_threshold_and_compose_runs_one_beat():
    sweep = settings.CELERY_BEAT_SCHEDULE["checks-sweep"]
    assert sweep["task"] == sweep_checks.name == "checks.sweep"
    assert 0 < sweep["schedule"] == settings.SKILLYARD_CHECK_SWEEP_SECONDS <= CHECK_STALE_SECONDS / 2
    services_ = yaml.safe_load((ROOT / "docker-compose.yaml").read_text())["services"]
    beat = services_["beat"]["command"]  # one beat of its own: the workers scale, the schedule must not
    assert beat[:4] == ["celery", "-A", "worker", "beat"] and "-B" not in services_["worker"]["command"]


def test_the_sweep_task_requeues_only_checks_older_than_the_threshold(version, django_capture_on_commit_callbacks):
    for name in ("scan", "tests"):
        services.check_start(version_id=version.id, name=name)
    VersionCheck.objects.filter(version=version, name="scan").update(
        started_at=timezone.now() - timedelta(seconds=CHECK_STALE_SECONDS + 1)
    )
    with mock.patch("worker.dispatch.enqueue") as enqueue, django_capture_on_commit_callbacks(execute=True):
        assert sweep_checks() == 1
    enqueue.assert_called_once_with(version.id, "scan")
    statuses = dict(VersionCheck.objects.filter(version=version).values_list("name", "status"))
    assert statuses == {"scan": "pending", "manifest": "pending", "tests": "running"}


def flaky_archive_open(failures: int, error: Exception):
    """registry.storage.archive_open that fails ``failures`` times, then opens the archive."""
    from registry.storage import archive_open

    calls = {"n": 0}

    def opener(key: str):
        calls["n"] += 1
        if calls["n"] <= failures:
            raise error
        return archive_open(key)

    return opener


@pytest.mark.parametrize("error", [OperationalError("database is locked"), ConnectionError("storage reset")])
def test_a_transient_error_is_retried_with_growing_backoff_and_the_check_completes(version, error):
    with (
        mock.patch("registry.storage.archive_open", flaky_archive_open(3, error)),
        mock.patch.object(run_check, "retry", wraps=run_check.retry) as retry,
    ):
        result = run_check.apply(args=(version.id, "scan"))
    assert result.get() == "done"
    countdowns = [call.kwargs["countdown"] for call in retry.call_args_list]
    assert len(countdowns) == 3
    assert all(0 <= c <= 2**i for i, c in enumerate(countdowns))  # exponential, with full jitter
    check = VersionCheck.objects.get(version=version, name="scan")
    assert check.status == "done" and check.attempts == 4


def test_a_transient_error_that_never_ends_gives_up_and_leaves_the_check_to_the_sweep(version):
    with mock.patch("registry.storage.archive_open", flaky_archive_open(99, OperationalError("gone"))):
        result = run_check.apply(args=(version.id, "scan"))
    assert result.failed() and isinstance(result.result, OperationalError)
    check = VersionCheck.objects.get(version=version, name="scan")
    assert check.attempts == run_check.max_retries + 1
    assert check.status == "running"  # not an error of the skill: the sweep queues it again


def test_an_engine_failure_is_the_checks_error_and_never_retried(version):
    with (
        mock.patch("worker.engines.engine", return_value=mock.Mock(side_effect=ValueError("bad input"))),
        mock.patch.object(run_check, "retry", wraps=run_check.retry) as retry,
    ):
        assert run_check.apply(args=(version.id, "scan")).get() == "error"
    retry.assert_not_called()
    check = VersionCheck.objects.get(version=version, name="scan")
    assert check.status == "error" and check.error == "ValueError: bad input" and check.attempts == 1


def test_the_manifest_check_stores_the_skills_semantic_centroid(version):
    if not semantic.available():
        pytest.skip("the semantic extra is not installed")
    import numpy as np

    assert run_check.apply(args=(version.id, "manifest")).get() == "done"
    version.refresh_from_db()
    stored = bytes(version.routing_vector)
    assert len(stored) == semantic.DIM * 4 and version.routing_vector_model == semantic.MODEL_ID
    expected = semantic.centroid(semantic.encoder().encode(semantic.centroid_texts(routing_of(version))))
    assert np.allclose(np.frombuffer(stored, dtype=np.float32), expected, atol=1e-6)


def test_without_semantic_the_manifest_check_stores_no_vector(version, monkeypatch):
    monkeypatch.setenv("SKILLYARD_SEMANTIC", "0")
    assert run_check.apply(args=(version.id, "manifest")).get() == "done"
    version.refresh_from_db()
    assert version.routing_manifest is not None and version.routing_vector is None
    assert version.routing_vector_model == ""


def routing_of(version: SkillVersion):
    """The routing manifest the client would build for this version (its manifest check's)."""
    from skillctl.routing.manifests import build_offline, merge_registry

    offline = build_offline(name=version.skill.name, description=version.skill.description)
    return merge_registry(offline, version.routing_manifest)


# --- one run at a time, and only the run that holds a check records it -------------------------


def test_another_delivery_of_a_check_a_run_holds_does_nothing(version):
    services.check_start(version_id=version.id, name="scan", run_id="task-a")  # a worker is on it
    assert run_check.apply(args=(version.id, "scan"), task_id="task-b").get() == "already done or running"
    check = VersionCheck.objects.get(version=version, name="scan")
    assert (check.status, check.run_id, check.attempts) == ("running", "task-a", 1)


def test_the_same_task_redelivered_takes_its_check_back_and_finishes_it(version):
    services.check_start(version_id=version.id, name="scan", run_id="task-a")  # its worker died
    assert run_check.apply(args=(version.id, "scan"), task_id="task-a").get() == "done"
    check = VersionCheck.objects.get(version=version, name="scan")
    assert (check.status, check.attempts) == ("done", 2)


def test_a_check_held_past_the_stale_threshold_is_taken_over(version):
    services.check_start(version_id=version.id, name="scan", run_id="task-a")
    VersionCheck.objects.filter(version=version, name="scan").update(
        started_at=timezone.now() - timedelta(seconds=CHECK_STALE_SECONDS + 1)
    )
    assert run_check.apply(args=(version.id, "scan"), task_id="task-b").get() == "done"


def test_a_run_overtaken_by_a_rerun_records_nothing(version, django_capture_on_commit_callbacks):
    old = services.check_start(version_id=version.id, name="scan", run_id="task-a")
    with mock.patch("worker.dispatch.enqueue"), django_capture_on_commit_callbacks(execute=True):
        services.check_rerun(actor=Actor(version.skill.owner.user), version=version, name="scan")
    new = services.check_start(version_id=version.id, name="scan", run_id="task-b")
    assert services.check_finish(check=old, result={"verdict": "malicious"}) is False  # the old run ends late
    assert services.check_finish(check=new, result={"verdict": "pass"}) is True
    version.refresh_from_db()
    assert version.scan_verdict == "pass"
    assert VersionCheck.objects.get(version=version, name="scan").result == {"verdict": "pass"}
