"""Files a killed process leaves behind, told apart from files a live process is writing.

Every writer of a temporary file the start-up sweep looks at (``.part`` archive writes in
registry/storage.py, upload temp files through :class:`LockedTemporaryFileUploadHandler`) holds
an exclusive ``flock`` on it for as long as the file is in use. The kernel drops the lock when
the process ends, SIGKILL included, so a file nobody holds locked is a leftover whatever its age
(an age rule kept a killed upload's 100 MB for an hour, and could take a slow upload's file).

Limits of flock: it holds between processes and containers on one host (one kernel). On NFS,
Linux turns flock into POSIX byte-range locks, which NFSv4 honours across hosts; elsewhere a
lock may not be seen from another host, so run the sweep on the host that writes there.
Django's ASGI request body spool (``SpooledTemporaryFile``) never needs sweeping: past its
memory size it rolls over to an anonymous temp file that has no name to leave behind.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path

from django.core.files.uploadedfile import TemporaryUploadedFile
from django.core.files.uploadhandler import FileUploadHandler, TemporaryFileUploadHandler


def _lock_for_writing(fd: int) -> bool:
    """Lock a just-created file as being written; False when a sweep removed it before the lock
    was taken (the sweep unlinks only while holding the lock, so after it the name is gone)."""
    fcntl.flock(fd, fcntl.LOCK_EX)
    return os.fstat(fd).st_nlink > 0


def locked_temp_file(*, folder: str, prefix: str, suffix: str) -> tuple[int, str]:
    """``tempfile.mkstemp`` whose file this process holds locked until the descriptor is closed."""
    while True:
        fd, path = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=suffix)
        if _lock_for_writing(fd):
            return fd, path
        os.close(fd)  # swept between creation and lock: take a new name


def remove_if_abandoned(path: Path) -> bool:
    """Remove ``path`` when no live process holds it locked; True when this call removed it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False  # finished or removed meanwhile, or not a plain file we may read
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a live process is writing it
        opened, named = os.fstat(fd), path.lstat()
        if (opened.st_dev, opened.st_ino) != (named.st_dev, named.st_ino):
            return False  # renamed over since we opened it: not the file we locked
        path.unlink()
        return True
    except FileNotFoundError:
        return False
    finally:
        os.close(fd)


class LockedTemporaryUploadedFile(TemporaryUploadedFile):
    """Django's upload temp file, locked while the request holds it open (closed at its end)."""

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003 (Django's signature)
        super().__init__(*args, **kwargs)
        while not _lock_for_writing(self.fileno()):
            self.close()
            super().__init__(*args, **kwargs)


class LockedTemporaryFileUploadHandler(TemporaryFileUploadHandler):
    """``FILE_UPLOAD_HANDLERS``' handler for uploads too big for memory: as Django's, with the lock."""

    def new_file(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        FileUploadHandler.new_file(self, *args, **kwargs)  # not the parent's: it would make a file
        self.file = LockedTemporaryUploadedFile(
            self.file_name, self.content_type, 0, self.charset, self.content_type_extra
        )
