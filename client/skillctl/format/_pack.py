"""Which files of a skill folder count, and writing them as a reproducible zip or tar.gz.

One selection serves ``pack`` and ``verify`` (through ``folder_files``), so the files a lock
records are exactly the files an archive holds. Reproducible means: the bytes depend only on
the files' paths, contents and executable bits, never on mtimes, owners, umask or walk order.
"""

from __future__ import annotations

import fnmatch
import gzip
import hashlib
import io
import os
import stat
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from skillctl.format._entries import CHUNK, refused
from skillctl.format.report import FileEntry

# Never part of a skill: VCS data, caches, OS litter, installed dependencies.
DEFAULT_IGNORES = (".git", "__pycache__", "*.pyc", ".DS_Store", "node_modules")
IGNORE_FILE = ".skillignore"
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest date a zip can store
TAR_MTIME = 315532800  # 1980-01-01T00:00:00Z, the same instant as the zip entries
GZIP_MTIME = 0  # gzip's "no time stamp"
COMPRESS_LEVEL = 9


@dataclass(frozen=True)
class Selected:
    path: str  # POSIX path relative to the skill folder
    source: Path
    executable: bool

    @property
    def mode(self) -> int:
        return 0o755 if self.executable else 0o644


def select_files(src_dir: Path) -> list[Selected]:
    """The folder's files minus ignored ones, sorted; raises Refused on links and special files."""
    patterns = [*DEFAULT_IGNORES, *_read_ignore_file(src_dir / IGNORE_FILE)]
    selected: list[Selected] = []
    _walk(src_dir, "", patterns, selected)
    return sorted(selected, key=lambda s: s.path)


def _read_ignore_file(path: Path) -> list[str]:
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def _walk(folder: Path, prefix: str, patterns: list[str], out: list[Selected]) -> None:
    with os.scandir(folder) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        rel = f"{prefix}{entry.name}"
        is_dir = entry.is_dir(follow_symlinks=False)
        if _ignored(rel, entry.name, is_dir, patterns):
            continue
        if entry.is_symlink():
            raise refused("archive.symlink", "symbolic links cannot be packed", rel)
        if is_dir:
            _walk(Path(entry.path), f"{rel}/", patterns, out)
        elif entry.is_file(follow_symlinks=False):
            executable = bool(entry.stat(follow_symlinks=False).st_mode & 0o111)
            out.append(Selected(rel, Path(entry.path), executable))
        else:
            raise refused("archive.special_file", "devices, FIFOs and sockets cannot be packed", rel)


def _ignored(rel: str, name: str, is_dir: bool, patterns: list[str]) -> bool:
    for pattern in patterns:
        if pattern.endswith("/"):
            if not is_dir:
                continue
            pattern = pattern.rstrip("/")
        if "/" in pattern:
            if fnmatch.fnmatchcase(rel, pattern.lstrip("/")):
                return True
        elif fnmatch.fnmatchcase(name, pattern):
            return True
    return False


def file_entry(item: Selected) -> FileEntry:
    """Path, size and sha256 of one selected file, read in chunks."""
    digest, size = hashlib.sha256(), 0
    with item.source.open("rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return FileEntry(item.path, size, digest.hexdigest())


def _read(item: Selected) -> tuple[bytes, FileEntry]:
    data = item.source.read_bytes()  # whole: a skill is at most 50 MiB, and size must be known first
    return data, FileEntry(item.path, len(data), hashlib.sha256(data).hexdigest())


def write_zip(selected: list[Selected], out: BinaryIO) -> list[FileEntry]:
    entries = []
    with zipfile.ZipFile(out, "w") as zf:
        for item in selected:
            data, entry = _read(item)
            info = zipfile.ZipInfo(item.path, date_time=ZIP_DATE)
            info.create_system = 3  # Unix, so the mode bits below mean what they say
            info.external_attr = (stat.S_IFREG | item.mode) << 16
            zf.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL)
            entries.append(entry)
    return entries


def write_tar_gz(selected: list[Selected], out: BinaryIO) -> list[FileEntry]:
    entries = []
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=GZIP_MTIME, compresslevel=COMPRESS_LEVEL) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for item in selected:
                data, entry = _read(item)
                info = tarfile.TarInfo(item.path)
                info.size, info.mode, info.mtime = entry.size, item.mode, TAR_MTIME
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                tar.addfile(info, io.BytesIO(data))
                entries.append(entry)
    return entries
