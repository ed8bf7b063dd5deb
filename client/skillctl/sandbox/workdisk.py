"""The size limit of a run's /work (``HostCaps.work_size_mb``), the same on both backends.

Started as root (the worker, CI), the executor mounts a tmpfs of that size on the run's host
folder before the run, and both backends bind that folder at /work: a write past the limit
fails with ENOSPC, and the host folder can never hold more than the limit. The host still
writes input.json before the run and reads /work/output after it, as with a plain folder.

Without the right to mount (an unprivileged ``skillctl run``), nothing the host can read after
the run could be size-limited, so a watcher measures the folder every ``WATCH_INTERVAL`` and ends
the run once it is over the limit: best effort, a fast writer gets its write speed times the
interval past it before the run is killed.
"""

from __future__ import annotations

import ctypes
import os
import signal
import stat
import threading
from collections.abc import Callable
from pathlib import Path

from skillctl.sandbox.policy import MIB

MS_NOSUID = 2
MS_NODEV = 4
MNT_DETACH = 2
# Files in /work: an empty file costs kernel memory that size= does not count.
WORK_INODES = 65536
# How often the unprivileged watcher measures /work: 20 ms of writing at ~1 GB/s is ~20 MB.
WATCH_INTERVAL = 0.02
# What a write past a disk limit says on stderr: ENOSPC (/work or /tmp full), EFBIG (one file
# over RLIMIT_FSIZE). A run that ends non-zero with one of these ran out of disk.
DISK_ERRORS = ("No space left on device", "File too large")


class WorkDisk:
    """The limit on one run folder: a mounted tmpfs, or a watcher over a plain folder."""

    def __init__(self, folder: Path, *, size_mb: int) -> None:
        self.folder = folder
        self.size_mb = size_mb
        self.mounted = False  # a tmpfs of size_mb is mounted on folder
        self.over = False  # the watcher saw the folder over its limit

    def attach(self, *, uid: int | None) -> None:
        """Limit the (empty) folder: mount a tmpfs on it when we may, else it is watched."""
        self.mounted = os.geteuid() == 0 and _mount_tmpfs(self.folder, size_mb=self.size_mb, uid=uid)

    def full(self) -> bool:
        """Did the run fill /work? (The tmpfs has no block or inode left, or the watcher fired.)"""
        if not self.mounted:
            return self.over
        try:
            st = os.statvfs(self.folder)
        except OSError:
            return False
        return st.f_bavail == 0 or st.f_favail == 0

    def watch(self, stop: Callable[[], None]) -> _Watcher:
        """A context in which, for a watched folder, going over the limit calls ``stop``."""
        return _Watcher(self, stop)

    def release(self) -> None:
        if self.mounted:
            unmount(self.folder)
            self.mounted = False


class _Watcher:
    def __init__(self, disk: WorkDisk, stop: Callable[[], None]) -> None:
        self.disk, self.stop = disk, stop
        self.done = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> _Watcher:
        if not self.disk.mounted:
            self.thread = threading.Thread(target=self._loop, daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        if self.thread is not None:
            self.thread.join()

    def _loop(self) -> None:
        while not self.done.wait(WATCH_INTERVAL):
            if usage(self.disk.folder) > self.disk.size_mb * MIB:
                self.disk.over = True
                self.stop()
                return


def usage(folder: Path) -> int:
    """Bytes the files under ``folder`` occupy (allocated blocks: a sparse file counts as written)."""
    total = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        total += st.st_blocks * 512
        if stat.S_ISDIR(st.st_mode):
            total += usage(Path(entry.path))
    return total


def ran_out_of_disk(exit_code: int | None, stderr: str) -> bool:
    """A failed run whose last words were a disk error (caught even if it cleaned up after), or
    that SIGXFSZ killed (a program that does not ignore it, writing past RLIMIT_FSIZE)."""
    if exit_code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):
        return True
    return exit_code not in (0, None) and any(marker in stderr for marker in DISK_ERRORS)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _mount_tmpfs(folder: Path, *, size_mb: int, uid: int | None) -> bool:
    """Mount a tmpfs of ``size_mb`` on ``folder``; False when this host does not let us."""
    options = f"size={size_mb * MIB},nr_inodes={WORK_INODES},mode=0755"
    if uid is not None:
        options += f",uid={uid},gid={uid}"
    result = _libc().mount(b"tmpfs", os.fsencode(folder), b"tmpfs", MS_NOSUID | MS_NODEV, options.encode())
    return result == 0


def unmount(folder: Path) -> None:
    """Detach the tmpfs on ``folder`` if there is one (MNT_DETACH: a straggler cannot keep it busy)."""
    _libc().umount2(os.fsencode(folder), MNT_DETACH)
