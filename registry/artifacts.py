"""The archives other installers expect: the skill's files with SKILL.md at the root.

The agent-skills discovery format (0.2.0) installs an ``archive`` whose root holds SKILL.md; a
published archive may keep its files under one top folder. The re-rooted archive is built
reproducibly (sorted entries, fixed times and modes), so its sha256, cached by the published
archive's sha256, is what the index announces and what every download serves.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile

from django.core.cache import cache

from registry.models import SkillVersion
from registry.storage import archive_open

FIXED_TIME = (1980, 1, 1, 0, 0, 0)
DIGEST_CACHE_SECONDS = 30 * 24 * 3600  # content-addressed: the same bytes never change digest


def version_files(sv: SkillVersion) -> dict[str, bytes]:
    """path (relative to the skill root) -> bytes, from the stored (validated) archive."""
    from skillctl.format import inspect_archive

    with archive_open(sv.archive_key) as handle:
        data = handle.read()
    root = inspect_archive(data).root
    prefix = f"{root}/" if root else ""
    files: dict[str, bytes] = {}
    if sv.archive_kind == "zip":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                if not info.is_dir() and info.filename.startswith(prefix):
                    files[info.filename[len(prefix) :]] = archive.read(info)
    else:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for member in archive.getmembers():
                name = member.name.removeprefix("./")
                if member.isfile() and name.startswith(prefix):
                    handle = archive.extractfile(member)
                    files[name[len(prefix) :]] = handle.read() if handle else b""
    return files


def rooted_archive(sv: SkillVersion) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in sorted(version_files(sv).items()):
            info = zipfile.ZipInfo(path, date_time=FIXED_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)
    return buffer.getvalue()


def rooted_archive_sha256(sv: SkillVersion) -> str:
    key = f"rooted-sha256:{sv.sha256}"
    if digest := cache.get(key):
        return digest
    digest = hashlib.sha256(rooted_archive(sv)).hexdigest()
    cache.set(key, digest, DIGEST_CACHE_SECONDS)
    return digest
