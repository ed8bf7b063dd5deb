"""Archive storage: one named Django storage (``storages["archives"]``), content-addressed.

An archive's key is derived from its sha256 (``archives/sha256/ab/cd/<sha>.zip``), so the same
bytes always land in the same place and a published archive is never rewritten: both backends
refuse to save over an existing key (:class:`ArchiveExists`). The filesystem backend is the
embedded default; S3 (or MinIO) goes through django-storages + boto3.

No version may point at bytes that are not its archive. Files are written under a temporary
name and linked into place whole (a worker killed mid-write leaves a ``.part`` file, never a
partial archive at its key; the writer holds it locked, so the sweep knows a leftover); S3 objects appear whole or not at all. :func:`archive_put` checks
the size and sha256 of what is stored, before reusing an existing object and after writing one,
and replaces an object that does not match (a partial file from before this rule, a bad disk).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, storages
from storages.backends.s3 import S3Storage

from registry.errors import RegistryError
from registry.leftovers import locked_temp_file, remove_if_abandoned

EXTENSIONS = {"zip": "zip", "tar.gz": "tar.gz"}
CHUNK = 1024 * 1024
PART_SUFFIX = ".part"
logger = logging.getLogger(__name__)


class StoredArchiveMismatch(RegistryError):
    """What storage holds under a key is not the archive just checked: nothing is committed."""

    status = 503


class ArchiveExists(Exception):
    """Refused: the key is taken and archives are never overwritten."""


class ArchiveStorage(Storage):
    """What both archive backends are: a storage that refuses to save over a key, and replaces
    what a key holds only when asked to (:func:`archive_put`, on a mismatch)."""

    def get_available_name(self, name: str, max_length: int | None = None) -> str:
        if self.exists(name):
            raise ArchiveExists(name)
        return name

    def replace(self, name: str, content: File) -> None:
        """Put ``content`` at ``name`` whatever is there, visible whole or not at all."""
        raise NotImplementedError


class FileSystemArchiveStorage(ArchiveStorage, FileSystemStorage):
    """Local files, written to a ``.part`` file beside the key, fsynced, then linked into place
    (``link`` fails when the key exists, so a race also ends in ArchiveExists)."""

    def _save(self, name: str, content) -> str:  # noqa: ANN001 (Django's signature)
        with self._written_part(name, content) as tmp:
            try:
                os.link(tmp, self.path(name))
            except FileExistsError:
                raise ArchiveExists(name) from None
            finally:
                os.unlink(tmp)
        return name

    def replace(self, name: str, content) -> None:  # noqa: ANN001
        """Put ``content`` at ``name`` whatever is there, in one rename."""
        with self._written_part(name, content) as tmp:
            os.replace(tmp, self.path(name))

    @contextmanager
    def _written_part(self, name: str, content) -> Iterator[str]:  # noqa: ANN001
        """The path of a ``.part`` file holding ``content`` whole, locked against the sweep
        (registry/leftovers.py) until the caller has linked or moved it."""
        folder = os.path.dirname(self.path(name))
        os.makedirs(folder, exist_ok=True)
        fd, tmp = locked_temp_file(folder=folder, prefix=f".{os.path.basename(name)}.", suffix=PART_SUFFIX)
        with os.fdopen(fd, "wb") as out:  # closing it releases the lock
            try:
                self._write_chunks(out, content)
                os.chmod(tmp, 0o644)
            except BaseException:
                os.unlink(tmp)
                raise
            yield tmp

    @staticmethod
    def _write_chunks(out: IO[bytes], content) -> None:  # noqa: ANN001
        delay = settings.SKILLYARD_TEST_STORAGE_WRITE_DELAY
        for chunk in content.chunks(CHUNK):
            out.write(chunk)
            if delay:
                out.flush()
                time.sleep(delay)
        out.flush()
        os.fsync(out.fileno())


class S3ArchiveStorage(ArchiveStorage, S3Storage):
    """S3 or any S3-compatible server (MinIO, moto); a PUT is visible whole or not at all."""

    def replace(self, name: str, content) -> None:  # noqa: ANN001
        self._save(name, content)


def archive_storage() -> ArchiveStorage:
    storage = storages["archives"]
    assert isinstance(storage, ArchiveStorage), "STORAGES['archives'] must be an ArchiveStorage"
    return storage


def archive_key(sha256: str, kind: str) -> str:
    return f"archives/sha256/{sha256[:2]}/{sha256[2:4]}/{sha256}.{EXTENSIONS[kind]}"


def archive_put(key: str, content: IO[bytes], *, sha256: str, size: int) -> bool:
    """Store ``content`` under ``key`` unless the right bytes are there already; True when this
    call wrote them. Raises :class:`StoredArchiveMismatch` when storage still holds other bytes."""
    storage = archive_storage()
    wrote = False
    if storage.exists(key):
        if archive_matches(key, sha256=sha256, size=size):
            return False
        logger.warning("archive %s does not match its sha256 or size: replacing it", key)
        content.seek(0)
        storage.replace(key, File(content, name=key.rsplit("/", 1)[-1]))
        wrote = True
    else:
        content.seek(0)
        try:
            storage.save(key, File(content, name=key.rsplit("/", 1)[-1]))
            wrote = True
        except ArchiveExists:
            pass  # an identical publish stored it a moment ago: checked below like any other
    if not archive_matches(key, sha256=sha256, size=size):
        raise StoredArchiveMismatch(
            "storage.mismatch", "The stored archive does not match the upload; nothing was published. Try again."
        )
    return wrote


def archive_matches(key: str, *, sha256: str, size: int) -> bool:
    """Do the stored bytes have this size and sha256? (Read back whole: the only real proof.)"""
    storage = archive_storage()
    try:
        if storage.size(key) != size:
            return False
        digest = hashlib.sha256()
        with storage.open(key, "rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
    except (OSError, ValueError):
        return False
    return digest.hexdigest() == sha256


def sweep_partial_files(*, older_than_seconds: float = 0) -> list[Path]:
    """Remove what killed processes left: ``.part`` files in the filesystem archive storage and
    Django's upload temp files (``FILE_UPLOAD_TEMP_DIR``), whatever their age unless
    ``older_than_seconds`` says, but never one a live process is writing (it holds it locked,
    registry/leftovers.py). Returns the removed paths."""
    cutoff = time.time() - older_than_seconds
    candidates: list[Path] = []
    if settings.FILE_UPLOAD_TEMP_DIR and Path(settings.FILE_UPLOAD_TEMP_DIR).is_dir():
        candidates += [p for p in Path(settings.FILE_UPLOAD_TEMP_DIR).iterdir() if p.is_file()]
    storage = archive_storage()
    if isinstance(storage, FileSystemStorage) and Path(storage.location).is_dir():
        candidates += list(Path(storage.location).rglob(f"*{PART_SUFFIX}"))
    old_enough = (lambda path: _modified_before(path, cutoff)) if older_than_seconds else (lambda path: True)
    return [path for path in candidates if old_enough(path) and remove_if_abandoned(path)]


def _modified_before(path: Path, cutoff: float) -> bool:
    try:
        return path.stat().st_mtime < cutoff
    except FileNotFoundError:
        return False  # finished or removed meanwhile


def archive_open(key: str) -> IO[bytes]:
    return archive_storage().open(key, "rb")


class _KeptArchives:
    """The bytes of recently downloaded archives in this process's memory, by sha256, least
    recently used out first. Nothing needs invalidating: bytes kept under a digest are checked
    to have it, and a deleted version is refused before its bytes are asked for."""

    def __init__(self) -> None:
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, sha256: str) -> bytes | None:
        with self._lock:
            data = self._items.get(sha256)
            if data is not None:
                self._items.move_to_end(sha256)
            return data

    def put(self, sha256: str, data: bytes, *, budget: int) -> None:
        with self._lock:
            if sha256 in self._items:
                return
            self._items[sha256] = data
            self._size += len(data)
            while self._size > budget and self._items:
                _, dropped = self._items.popitem(last=False)
                self._size -= len(dropped)


_kept = _KeptArchives()


def archive_bytes_kept(key: str, *, sha256: str, size: int) -> bytes | None:
    """An archive's bytes from memory, read from storage (and checked against its sha256) the
    first time; None when it is too large to keep (the caller streams it) or storage holds other
    bytes than the version says (the caller streams those, and the client's sha256 check fails
    loudly rather than this process keeping them)."""
    # Per web process: S3 (or a disk) is read once per archive instead of once per download.
    budget = int(getattr(settings, "SKILLYARD_ARCHIVE_MEMORY_BYTES", 64 * 1024 * 1024))
    # Larger archives stream (a 50 MiB one must not push out hundreds of small ones).
    largest = int(getattr(settings, "SKILLYARD_ARCHIVE_MEMORY_ITEM_BYTES", 1024 * 1024))
    if size > largest or size > budget:
        return None
    if (data := _kept.get(sha256)) is not None:
        return data
    with archive_open(key) as handle:
        data = handle.read(size + 1)
    if len(data) != size or hashlib.sha256(data).hexdigest() != sha256:
        logger.warning("archive %s does not match its version's sha256 or size: not kept", key)
        return None
    _kept.put(sha256, data, budget=budget)
    return data


def archive_exists(key: str) -> bool:
    return archive_storage().exists(key)


def archive_delete(key: str) -> None:
    """Only for an archive no version refers to (a publish that failed after writing)."""
    archive_storage().delete(key)
