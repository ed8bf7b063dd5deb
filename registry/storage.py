"""Archive storage: one named Django storage (``storages["archives"]``), content-addressed.

An archive's key is derived from its sha256 (``archives/sha256/ab/cd/<sha>.zip``), so the same
bytes always land in the same place and a published archive is never rewritten: both backends
refuse to save over an existing key (:class:`ArchiveExists`). The filesystem backend is the
embedded default; S3 (or MinIO) goes through django-storages + boto3.
"""

from __future__ import annotations

from typing import IO

from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, storages
from storages.backends.s3 import S3Storage

EXTENSIONS = {"zip": "zip", "tar.gz": "tar.gz"}


class ArchiveExists(Exception):
    """Refused: the key is taken and archives are never overwritten."""


class _RefuseOverwrite:
    def get_available_name(self, name: str, max_length: int | None = None) -> str:
        if self.exists(name):
            raise ArchiveExists(name)
        return name


class FileSystemArchiveStorage(_RefuseOverwrite, FileSystemStorage):
    """Local files; FileSystemStorage creates with O_EXCL, so a race also ends in ArchiveExists."""


class S3ArchiveStorage(_RefuseOverwrite, S3Storage):
    """S3 or any S3-compatible server (MinIO, moto)."""


def archive_storage() -> Storage:
    return storages["archives"]


def archive_key(sha256: str, kind: str) -> str:
    return f"archives/sha256/{sha256[:2]}/{sha256[2:4]}/{sha256}.{EXTENSIONS[kind]}"


def archive_put(key: str, content: IO[bytes]) -> bool:
    """Store ``content`` under ``key`` unless already there; True when this call wrote it."""
    storage = archive_storage()
    if storage.exists(key):
        return False
    content.seek(0)
    try:
        storage.save(key, File(content, name=key.rsplit("/", 1)[-1]))
    except ArchiveExists:
        return False
    return True


def archive_open(key: str) -> IO[bytes]:
    return archive_storage().open(key, "rb")


def archive_exists(key: str) -> bool:
    return archive_storage().exists(key)


def archive_delete(key: str) -> None:
    """Only for an archive no version refers to (a publish that failed after writing)."""
    archive_storage().delete(key)
