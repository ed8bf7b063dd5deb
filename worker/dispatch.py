"""Where a queued check runs: Celery workers when a broker is configured, else a small thread
pool in the web process (the embedded default: publish never waits, nothing else to start)."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from django.conf import settings
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pending: set[Future] = set()
# Two at a time: a scan and a test run side by side, without starving the web requests.
EMBEDDED_WORKERS = 2


def enqueue(version_id: int, name: str) -> None:
    from worker.tasks import run_check

    if not settings.SKILLYARD_CHECKS_ENABLED:
        return  # tests that are not about checks; the check stays pending

    if _broker():
        try:
            run_check.delay(version_id, name)
        except OperationalError as exc:  # the broker is down: the publish has committed all the same
            logger.warning(
                "check %s of version %s stays pending: the broker did not take its message (%s); the sweep "
                "queues it again after SKILLYARD_CHECK_PENDING_SECONDS",
                name,
                version_id,
                exc,
            )
        return
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(EMBEDDED_WORKERS, thread_name_prefix="skillyard-check")
        future = _pool.submit(_run_here, version_id, name)
        _pending.add(future)
        future.add_done_callback(_pending.discard)


def _run_here(version_id: int, name: str) -> None:
    from django.db import close_old_connections

    from worker.tasks import run_check_now

    try:
        run_check_now(version_id, name)
    finally:
        close_old_connections()


def wait_idle(timeout: float = 120) -> bool:
    """Block until the embedded pool has nothing left (tests; a graceful shutdown)."""
    import concurrent.futures

    with _lock:
        pending = list(_pending)
    done, not_done = concurrent.futures.wait(pending, timeout=timeout)
    return not not_done


def start_rescans() -> threading.Thread | None:
    """The embedded default of the beat's ``checks.rescan``: at start-up, a background thread
    queues versions the scanner judged with older rules, a batch at a time (each run by the pool
    above), waiting for the pool to drain and the interval between batches; it ends when none
    is left. Nothing to do with a broker (the workers' beat does it) or with checks off."""
    if not settings.SKILLYARD_CHECKS_ENABLED or _broker():
        return None
    thread = threading.Thread(target=_rescan_in_thread, name="skillyard-rescan", daemon=True)
    thread.start()
    return thread


def _rescan_in_thread() -> None:
    from django.db import close_old_connections

    try:
        _rescan_loop()
    finally:
        close_old_connections()


def _rescan_loop() -> None:
    import time

    from worker.tasks import rescan_checks

    while rescan_checks():
        wait_idle(timeout=settings.SKILLYARD_RESCAN_INTERVAL_SECONDS * 10)
        time.sleep(settings.SKILLYARD_RESCAN_INTERVAL_SECONDS)


def _broker() -> bool:
    return bool(settings.CELERY_BROKER_URL) and not settings.CELERY_BROKER_URL.startswith("memory://")
