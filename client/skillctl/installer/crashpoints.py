"""Test-only crash and pause points, for the atomicity and lock tests (not agent hooks).

``SKILLYARD_TEST_CRASH_AT=<point>`` SIGKILLs the process at that point (``after_extract``,
``after_journal``, ``after_rename_old``, ``after_swap``, ``after_delete_old``, ``after_lock``,
``uninstall_after_rename``), for the atomicity tests; ``SKILLYARD_TEST_PAUSE_AT=<point>`` sleeps
a second there instead (lock contention tests) and ``SKILLYARD_TEST_NO_EXCHANGE=1`` forces the
two-rename fallback.
"""

from __future__ import annotations

import os
import signal

CRASH_ENV = "SKILLYARD_TEST_CRASH_AT"
PAUSE_ENV = "SKILLYARD_TEST_PAUSE_AT"  # test-only: sleep a second there (holding the lock)
NO_EXCHANGE_ENV = "SKILLYARD_TEST_NO_EXCHANGE"  # test-only: use the two-rename fallback


def crash_point(name: str) -> None:
    """Test-only: die here, hard, when SKILLYARD_TEST_CRASH_AT names this point."""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
    if os.environ.get(PAUSE_ENV) == name:
        import time

        time.sleep(1.0)
