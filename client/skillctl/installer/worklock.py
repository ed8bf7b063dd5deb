"""A scope's work folder (``.agents/.skillyard-tmp``) and the file lock in it that serialises runs.

A run that ends with nothing installed in the scope (a first install that failed) leaves nothing
behind: the folders it made for its work (the work folder, and ``.agents`` above it) are removed
before its lock is released. A run that was waiting then finds no lock file, or has locked the
one just deleted: it starts over, as a fresh run would (whoever wins a lock checks that its file
is still the one at the lock's path).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import BaseFileLock, FileLock, Timeout

from skillctl import fileio
from skillctl.installer.project import Scope
from skillctl.reporting import Reporter

LOCK_WAIT_NOTICE_SECONDS = 0.2  # after this, tell the user we are waiting for another run
BETWEEN_RUNS = {"lock", ".gitignore"}  # what the work folder holds when no run is under way


@contextmanager
def held(scope: Scope, reporter: Reporter) -> Iterator[None]:
    """Hold the scope's file lock for the block; afterwards, remove the work folders this run
    made if the scope still has no skills folder."""
    made = [folder for folder in (scope.skills_dir.parent, scope.work_dir) if not folder.exists()]
    lock = _acquire(scope, reporter)
    try:
        yield
    finally:
        try:
            if made and not scope.skills_dir.exists():
                _remove_unused(made, scope.work_dir)
        finally:
            lock.release()


def _acquire(scope: Scope, reporter: Reporter) -> BaseFileLock:
    while True:
        _make_work_dir(scope.work_dir)
        lock = FileLock(str(scope.work_dir / "lock"))
        try:
            _wait_for(lock, scope, reporter)
        except FileNotFoundError:
            continue  # the run before us removed the work folder while we waited: start over
        if _holds_the_file_in_place(lock):
            return lock
        lock.release()  # locked a file the run before us had just removed: start over


def _wait_for(lock: BaseFileLock, scope: Scope, reporter: Reporter) -> None:
    try:
        lock.acquire(timeout=LOCK_WAIT_NOTICE_SECONDS)
    except Timeout:
        reporter.info(f"waiting for another skillctl working in {scope.skills_dir} ...")
        lock.acquire()


def _make_work_dir(work: Path) -> None:
    work.mkdir(parents=True, exist_ok=True)
    ignore = work / ".gitignore"
    if not ignore.exists():  # the lock, journals and staging are this machine's: never committed
        fileio.atomic_write(ignore, "# skillctl's working files (lock, journals, staging)\n*\n")


def _holds_the_file_in_place(lock: BaseFileLock) -> bool:
    # filelock keeps the descriptor it locked in its per-thread context; without one to compare,
    # the file still being there is the best sign left.
    fd = getattr(getattr(lock, "_context", None), "lock_file_fd", None)
    try:
        in_place = os.stat(lock.lock_file)
        return fd is None or os.path.samestat(os.fstat(fd), in_place)
    except FileNotFoundError:
        return False


def _remove_unused(made: list[Path], work: Path) -> None:
    """Remove the folders made for this run, innermost first, while they hold nothing else."""
    for folder in reversed(made):
        if not folder.is_dir():
            continue
        leftovers = {p.name for p in folder.iterdir()}
        if folder == work and leftovers <= BETWEEN_RUNS:
            shutil.rmtree(folder, ignore_errors=True)
        elif not leftovers:
            folder.rmdir()
