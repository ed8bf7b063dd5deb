"""Where a queued check runs: Celery workers when a broker is configured, else a small thread
pool in the web process (the embedded default: publish never waits, nothing else to start)."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

from django.conf import settings

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pending: set[Future] = set()
# Two at a time: a scan and a test run side by side, without starving the web requests.
EMBEDDED_WORKERS = 2


def enqueue(version_id: int, name: str) -> None:
    from worker.tasks import run_check

    if not settings.SKILLYARD_CHECKS_ENABLED:
        return  # tests that are not about checks; the check stays pending

    if settings.CELERY_BROKER_URL and not settings.CELERY_BROKER_URL.startswith("memory://"):
        run_check.delay(version_id, name)
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
