"""Downloaded archives, content-addressed by sha256 under ``paths.cache_dir()/archives``.

An entry is only ever created by renaming a fully written, already verified file into place,
and it is hashed again before each use, so a corrupted cache costs a download, never a wrong
install. Deleting the cache folder at any time is safe.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

from skillctl import paths

_CHUNK = 1 << 16
_SUFFIXES = (".zip", ".tar.gz")


def archives_dir() -> Path:
    return paths.cache_dir() / "archives"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def archive_suffix(path: Path) -> str:
    """``.zip`` or ``.tar.gz`` from the first bytes (URLs and caches have no trustworthy name)."""
    with path.open("rb") as fh:
        head = fh.read(4)
    return ".tar.gz" if head[:2] == b"\x1f\x8b" else ".zip"


def _entry(sha256: str, suffix: str) -> Path:
    return archives_dir() / sha256[:2] / f"{sha256}{suffix}"


def lookup(sha256: str) -> Path | None:
    """The cached archive with this digest, re-verified; None when absent or corrupt."""
    if not sha256:
        return None
    for suffix in _SUFFIXES:
        entry = _entry(sha256, suffix)
        if entry.is_file():
            if sha256_file(entry) == sha256:
                return entry
            entry.unlink(missing_ok=True)  # corrupt: forget it, the caller downloads again
    return None


# Digests of each registry skill's archives in this cache, per registry, newest last: what a
# download by spec offers that registry (If-None-Match), so a skill another project installed
# comes from here. Per registry: one registry never learns what another one sent.
_NAMES_DIR = "names"
_HEX64 = re.compile(r"[0-9a-f]{64}")
MAX_OFFERED = 20  # digests offered per request: the header stays ~1.4 KB


def _names_file(registry_url: str, name: str) -> Path:
    from urllib.parse import quote

    registry = hashlib.sha256(registry_url.rstrip("/").encode()).hexdigest()[:16]
    return archives_dir() / _NAMES_DIR / registry / quote(name, safe="")


def remember(registry_url: str, name: str, sha256: str) -> None:
    """Note that the cached archive ``sha256`` is a version of ``name`` from that registry."""
    if sha256 in known(registry_url, name):
        return
    path = _names_file(registry_url, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="ascii") as fh:  # one short append: atomic next to others
        fh.write(sha256 + "\n")


def known(registry_url: str, name: str) -> list[str]:
    """The digests of ``name``'s archives from that registry still in the cache (the newest
    ``MAX_OFFERED``). Only their presence is checked here; :func:`lookup` verifies one before
    it is used."""
    try:
        lines = _names_file(registry_url, name).read_text("ascii").split()
    except (OSError, UnicodeDecodeError):
        return []
    digests = [d for d in dict.fromkeys(lines) if _HEX64.fullmatch(d)]  # a damaged line is skipped
    present = [d for d in digests if any(_entry(d, s).is_file() for s in _SUFFIXES)]
    return present[-MAX_OFFERED:]


def temp_path() -> Path:
    """A fresh file path inside the cache folder, for a download in progress."""
    folder = archives_dir() / "tmp"
    folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="dl-", suffix=".part", dir=folder)
    os.close(fd)
    return Path(name)


def store(path: Path, sha256: str) -> Path:
    """Move a verified file into the cache under its digest and return the entry."""
    entry = _entry(sha256, archive_suffix(path))
    entry.parent.mkdir(parents=True, exist_ok=True)
    os.replace(path, entry)
    return entry


def add_copy(path: Path) -> tuple[Path, str]:
    """Copy a local archive into the cache (so extraction reads a file nobody else edits)."""
    tmp = temp_path()
    digest = hashlib.sha256()
    with path.open("rb") as src, tmp.open("wb") as dst:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
            dst.write(chunk)
    sha = digest.hexdigest()
    return store(tmp, sha), sha


def unpacked(archive: Path, sha256: str, name: str) -> Path:
    """The archive's skill folder, extracted once under ``cache_dir()/unpacked/<sha256>/``
    (``skillctl use``: readable files without an install). Extraction goes to a staging folder
    renamed into place, so a crash never leaves half a skill there."""
    import shutil

    from skillctl.format import extract_archive

    home = paths.cache_dir() / "unpacked" / sha256
    target = home / name
    if (target / "SKILL.md").is_file():
        return target
    home.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=home))
    try:
        root = Path(extract_archive(archive, staging / "x"))
        if not (root / "SKILL.md").is_file():
            inner = [p for p in root.iterdir() if (p / "SKILL.md").is_file()]
            root = inner[0] if len(inner) == 1 else root
        shutil.rmtree(target, ignore_errors=True)
        os.replace(root, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
