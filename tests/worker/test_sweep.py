"""The sweep (``checks.sweep``, ``rerun_checks --stale``) brings back checks whose queue message
was lost, on a real Redis broker: a Redis restarted without persistence drops the queue, and a
broker down when a publish commits never gets the message. Checks left pending longer than
SKILLYARD_CHECK_PENDING_SECONDS are queued again and run; a fresh pending check and a check a
live run holds are left alone, and a late duplicate of a message does nothing."""

from __future__ import annotations

import base64
import io
import json
import logging
from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from registry import services
from registry.access import Actor
from registry.models import SkillVersion, VersionCheck
from tests.conftest import free_port
from tests.registry.conftest import _isolated, alice, make_user, make_zip, upload  # noqa: F401 - fixtures
from worker.celery import app
from worker.tasks import run_check, sweep_checks

QUEUE = "celery"  # Celery's default queue: a Redis list of that name


def _use_broker(url: str) -> None:
    """Point dispatch and the Celery app at ``url``, dropping connections made for the last one."""
    app.conf.broker_url = url
    app._after_fork()  # noqa: SLF001 - forgets the cached connection and producer pools


@pytest.fixture
def broker(redis_url, settings):  # noqa: ANN001 - pytest fixtures
    url = redis_url.rsplit("/", 1)[0] + "/12"  # a database of its own
    client = redis.Redis.from_url(url)
    client.flushdb()
    before = app.conf.broker_url
    settings.CELERY_BROKER_URL = url
    settings.SKILLYARD_CHECKS_ENABLED = True
    _use_broker(url)
    yield client
    _use_broker(before)
    client.flushdb()


def queued(client: redis.Redis) -> list[tuple[str, list, str]]:
    """The messages waiting in Redis: (task name, args, task id) each, oldest first."""
    found = []
    for raw in reversed(client.lrange(QUEUE, 0, -1)):  # LPUSHed: the oldest is last
        message = json.loads(raw)
        args = json.loads(base64.b64decode(message["body"]))[0]
        found.append((message["headers"]["task"], args, message["headers"]["id"]))
    return found


def publish(alice, name: str, django_capture_on_commit_callbacks) -> SkillVersion:  # noqa: ANN001, F811
    with django_capture_on_commit_callbacks(execute=True):
        result = services.skill_version_publish(actor=Actor(alice), name=name, archive=upload(make_zip(name)))
    return result.version


def age_pending(version: SkillVersion, seconds: float) -> None:
    VersionCheck.objects.filter(version=version).update(updated_at=timezone.now() - timedelta(seconds=seconds))


def test_a_pending_check_whose_message_was_lost_is_requeued_by_the_sweep_and_done(
    alice,  # noqa: F811
    broker,
    django_capture_on_commit_callbacks,
):
    version = publish(alice, "lost", django_capture_on_commit_callbacks)
    assert sorted(args[1] for _, args, _ in queued(broker)) == ["manifest", "scan", "tests"]
    broker.flushdb()  # Redis restarted without persistence: the messages are gone, the checks pending
    age_pending(version, settings.SKILLYARD_CHECK_PENDING_SECONDS + 1)

    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_checks() == 3
    messages = queued(broker)
    assert sorted(args for _, args, _ in messages) == [[version.id, n] for n in ("manifest", "scan", "tests")]
    for task, args, task_id in messages:  # what a worker does with each message
        assert task == run_check.name
        assert run_check.apply(args=args, task_id=task_id).get() == "done"
    statuses = set(VersionCheck.objects.filter(version=version).values_list("status", flat=True))
    assert statuses == {"done"}


def test_a_fresh_pending_check_is_not_touched(alice, broker, django_capture_on_commit_callbacks):  # noqa: F811
    version = publish(alice, "fresh", django_capture_on_commit_callbacks)
    broker.flushdb()
    age_pending(version, settings.SKILLYARD_CHECK_PENDING_SECONDS - 30)  # its message may still come
    stamps = dict(VersionCheck.objects.filter(version=version).values_list("name", "updated_at"))

    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_checks() == 0
    assert queued(broker) == []
    assert dict(VersionCheck.objects.filter(version=version).values_list("name", "updated_at")) == stamps


def test_a_running_check_held_by_a_live_run_is_not_taken(alice, broker, django_capture_on_commit_callbacks):  # noqa: F811
    version = publish(alice, "held", django_capture_on_commit_callbacks)
    broker.flushdb()
    services.check_start(version_id=version.id, name="scan", run_id="task-a")  # a live worker is on it
    age_pending(version, settings.SKILLYARD_CHECK_PENDING_SECONDS + 1)  # old rows, but scan started just now

    with django_capture_on_commit_callbacks(execute=True):
        assert sweep_checks() == 2  # the two pending ones
    assert sorted(args[1] for _, args, _ in queued(broker)) == ["manifest", "tests"]
    # A duplicate delivery of the scan (another message) must not run it a second time at once.
    assert run_check.apply(args=(version.id, "scan"), task_id="task-b").get() == "already done or running"
    scan = VersionCheck.objects.get(version=version, name="scan")
    assert (scan.status, scan.run_id, scan.attempts) == ("running", "task-a", 1)


def test_the_late_original_of_a_requeued_message_does_nothing(alice, broker, django_capture_on_commit_callbacks):  # noqa: F811
    version = publish(alice, "late", django_capture_on_commit_callbacks)
    original = {args[1]: task_id for _, args, task_id in queued(broker)}
    broker.flushdb()
    age_pending(version, settings.SKILLYARD_CHECK_PENDING_SECONDS + 1)  # only late, as it turns out
    with django_capture_on_commit_callbacks(execute=True):
        sweep_checks()
    copy = {args[1]: task_id for _, args, task_id in queued(broker)}
    assert run_check.apply(args=(version.id, "scan"), task_id=copy["scan"]).get() == "done"
    assert run_check.apply(args=(version.id, "scan"), task_id=original["scan"]).get() == "already done or running"
    assert VersionCheck.objects.get(version=version, name="scan").attempts == 1


def test_a_broker_down_when_the_publish_commits_leaves_the_checks_pending_for_the_sweep(
    alice,  # noqa: F811
    broker,
    django_capture_on_commit_callbacks,
    caplog,
):
    _use_broker(f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    with caplog.at_level(logging.WARNING, logger="worker.dispatch"):
        version = publish(alice, "unsent", django_capture_on_commit_callbacks)  # no exception: it is stored
    assert set(VersionCheck.objects.filter(version=version).values_list("status", flat=True)) == {"pending"}
    assert caplog.text.count("stays pending: the broker did not take its message") == 3

    _use_broker(settings.CELERY_BROKER_URL)  # the broker is back
    age_pending(version, settings.SKILLYARD_CHECK_PENDING_SECONDS + 1)
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("rerun_checks", "--stale", stdout=out)  # what the operator (or make run) does
    assert out.getvalue().strip() == "re-queued 3 stale check(s)"
    assert sorted(args[1] for _, args, _ in queued(broker)) == ["manifest", "scan", "tests"]


def test_rerun_checks_stale_takes_the_ages_it_is_given(alice, broker, django_capture_on_commit_callbacks):  # noqa: F811
    version = publish(alice, "impatient", django_capture_on_commit_callbacks)
    broker.flushdb()
    services.check_start(version_id=version.id, name="scan", run_id="task-a")
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("rerun_checks", "--stale", "--pending-after", "0", stdout=out)
    assert out.getvalue().strip() == "re-queued 2 stale check(s)"  # the running scan is still young
    with django_capture_on_commit_callbacks(execute=True):
        call_command("rerun_checks", "--stale", "--stale-after", "0", "--pending-after", "3600", stdout=out)
    assert out.getvalue().strip().splitlines()[-1] == "re-queued 1 stale check(s)"
    assert VersionCheck.objects.get(version=version, name="scan").run_id == ""
