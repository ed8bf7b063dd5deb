"""Thin Celery tasks: ids in, an engine call, results saved by a service (STYLE principle 5).

``checks.run`` is idempotent (``check_start`` refuses a check already done), acknowledged late
and rejected back to the queue when its worker dies (a kill -9 re-delivers it), retried with
backoff on transient database and storage errors, and hard time-limited. ``checks.sweep``
re-queues checks a dead worker left running and checks whose queue message was lost (pending
too long); ``checks.rescan`` queues a batch of versions the scanner judged with older rules.
The recovery timings are settings (``SKILLYARD_CHECK_*``, ``SKILLYARD_BROKER_VISIBILITY_TIMEOUT``).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import DatabaseError

from worker.celery import app

logger = logging.getLogger(__name__)
# The tests check runs up to 5 minutes in its sandbox; the rest is download and bookkeeping.
# settings.SKILLYARD_CHECK_STALE_SECONDS (when a running check's worker is presumed dead) is
# above it, and the broker's visibility timeout above that.
CHECK_TIME_LIMIT = 420


def stale_after() -> timedelta:
    """How long another run may hold a check before it is presumed dead (settings)."""
    from django.conf import settings

    return timedelta(seconds=settings.SKILLYARD_CHECK_STALE_SECONDS)


@app.task(name="worker.ping", time_limit=10)
def ping() -> str:
    """Health check: proves a worker (or the eager in-process runner) takes tasks."""
    return "pong"


@app.task(
    name="checks.run",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=5,
    autoretry_for=(DatabaseError, ConnectionError),
    retry_backoff=True,
    retry_backoff_max=300,
    time_limit=CHECK_TIME_LIMIT,
    soft_time_limit=CHECK_TIME_LIMIT - 20,
)
def run_check(self, version_id: int, name: str) -> str:
    # The task id stays the same through retries and redeliveries: the same run, taking its check back.
    return run_check_now(version_id, name, run_id=self.request.id or "")


def run_check_now(version_id: int, name: str, run_id: str = "") -> str:
    """Start, run, finish one check (also what the embedded pool calls)."""
    from registry import services
    from registry.storage import archive_open
    from worker.engines import engine
    from worker.engines.manifest import VECTOR_MODEL, routing_vector

    check = services.check_start(version_id=version_id, name=name, run_id=run_id, stale_after=stale_after())
    if check is None:
        return "already done or running"
    version = check.version
    try:
        with archive_open(version.archive_key) as handle:
            archive = handle.read()
        result = engine(name)(archive=archive, digest=version.sha256)
        # The manifest's semantic centroid, for catalog search (~0.2 s: never on a request).
        vector = routing_vector(archive=archive, result=result) if name == "manifest" else None
    except (DatabaseError, ConnectionError):
        raise  # transient: Celery retries with backoff (the check stays running for the sweep)
    except Exception as exc:  # noqa: BLE001 - any engine failure is the check's error, with its reason
        logger.warning("check %s of version %s failed: %s", name, version_id, exc)
        held = services.check_fail(check=check, error=f"{type(exc).__name__}: {exc}")
        return "error" if held else "superseded"
    held = services.check_finish(check=check, result=result, routing_vector=vector, vector_model=VECTOR_MODEL)
    return "done" if held else "superseded"  # a rerun or the sweep gave the check to another run


@app.task(name="checks.rescan", time_limit=60)
def rescan_checks() -> int:
    """The beat schedule's job: queue the next batch of versions scanned with older rules (the
    batch and the schedule's interval bound how fast; settings.SKILLYARD_RESCAN_*)."""
    from django.conf import settings

    from registry import services
    from worker.engines.scan import rules_version

    return services.checks_rescan(rules_version=rules_version(), limit=settings.SKILLYARD_RESCAN_BATCH)


@app.task(name="checks.sweep", time_limit=60)
def sweep_checks() -> int:
    """The beat schedule's job (settings.CELERY_BEAT_SCHEDULE, ``celery -A worker beat``):
    checks left running by a dead worker, and checks left pending by a lost message."""
    from django.conf import settings

    from registry import services

    pending = timedelta(seconds=settings.SKILLYARD_CHECK_PENDING_SECONDS)
    return services.checks_sweep(stale_after=stale_after(), pending_after=pending)
