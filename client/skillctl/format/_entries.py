"""What zip and tar members have in common, and the one path policy both must pass (DESIGN §4).

The format readers (``_zip``, ``_tar``) turn raw headers into :class:`Member` objects; everything
after that (path checks, collisions, reading, writing) is format-blind and lives here or in
``archive``. A reader stops a whole archive by raising :class:`Refused`.
"""

from __future__ import annotations

import re
import tarfile
import unicodedata
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO

from skillctl.format.findings import Finding, error
from skillctl.format.limits import Limits

FILE, DIR, SYMLINK, HARDLINK, SPECIAL = "file", "dir", "symlink", "hardlink", "special"
CHUNK = 64 * 1024  # read size while streaming; a bomb can never inflate more than this at once

_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass
class Member:
    """One archive entry as its headers declare it; ``open`` streams a file's bytes."""

    name: str  # the raw name from the header, before any normalisation
    kind: str  # FILE | DIR | SYMLINK | HARDLINK | SPECIAL
    size: int  # declared uncompressed size (0 for non-files)
    mode: int = 0o644  # permission bits as stored; only the executable bits are kept
    open: Callable[[], BinaryIO] | None = None


class Refused(Exception):
    """Stops reading an archive; carries the findings that say why."""

    def __init__(self, *findings: Finding) -> None:
        super().__init__(", ".join(f.code for f in findings))
        self.findings = list(findings)


def refused(code: str, message: str, location: str = "") -> Refused:
    return Refused(error(code, message, location))


# What reading a member's bytes raises when the archive lies or ends early.
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, tarfile.TarError, OSError, ValueError)


class _Guarded:
    """A member's stream whose read errors (a lying or cut archive) become refusals."""

    def __init__(self, stream: BinaryIO, name: str) -> None:
        self._stream, self._name = stream, name

    def read(self, size: int) -> bytes:
        try:
            return self._stream.read(size)
        except _READ_ERRORS as exc:
            raise refused("archive.truncated", f"cannot read the entry: {exc}", location(self._name)) from None


@contextmanager
def reading(member: Member) -> Iterator[_Guarded]:
    """Open a file member for streaming; only errors from the archive itself are refusals."""
    assert member.open is not None
    try:
        stream = member.open()
    except _READ_ERRORS as exc:
        raise refused("archive.truncated", f"cannot open the entry: {exc}", location(member.name)) from None
    with stream:
        yield _Guarded(stream, member.name)


def location(name: str) -> str:
    """``archive:<name>`` with control characters escaped, so messages stay on one line."""
    shown = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in name)
    return f"archive:{shown}"


def _is_control(c: str) -> bool:
    return ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0


def check_path(name: str, limits: Limits) -> tuple[tuple[str, ...], list[Finding]]:
    """The entry's path parts (``.`` and empty parts dropped) and what is wrong with it.

    Rejected, never repaired: a name that needs repairing is either an attack or a tool bug.
    """
    loc = location(name)
    if name == "":
        return (), [error("archive.path_empty", "an entry has an empty name", loc)]
    if any(_is_control(c) for c in name):
        return (), [error("archive.path_control_char", "the path contains a control character", loc)]
    if any(0xD800 <= ord(c) <= 0xDFFF for c in name):  # undecodable bytes, kept by surrogateescape
        return (), [error("archive.path_encoding", "the path is not valid UTF-8", loc)]
    problems = []
    if "\\" in name:
        problems.append(error("archive.path_backslash", "the path contains a backslash", loc))
    if name.startswith("/"):
        problems.append(error("archive.path_absolute", "the path is absolute", loc))
    if _DRIVE.match(name):
        problems.append(error("archive.path_drive", "the path starts with a drive letter", loc))
    raw_parts = name.split("/")
    if ".." in raw_parts:
        problems.append(error("archive.path_traversal", "the path contains '..'", loc))
    size = len(name.encode("utf-8"))
    if size > limits.max_path_bytes:
        problems.append(
            error(
                "archive.path_too_long",
                f"the path is {size} bytes (max {limits.max_path_bytes})",
                loc,
            )
        )
    parts = tuple(p for p in raw_parts if p not in ("", "."))
    if len(parts) > limits.max_depth:
        problems.append(
            error(
                "archive.path_too_deep",
                f"the path is {len(parts)} levels deep (max {limits.max_depth})",
                loc,
            )
        )
    return parts, problems


def kind_problem(member: Member) -> Finding | None:
    """Only regular files and folders may be in a skill archive."""
    loc = location(member.name)
    if member.kind == SYMLINK:
        return error("archive.symlink", "symbolic links are not allowed", loc)
    if member.kind == HARDLINK:
        return error("archive.hardlink", "hard links are not allowed", loc)
    if member.kind == SPECIAL:
        return error("archive.special_file", "devices, FIFOs and other special files are not allowed", loc)
    return None


def fold(path: str) -> str:
    """The key two paths collide on: case-insensitive, normalisation-insensitive filesystems."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", path).casefold())


def collisions(entries: list[tuple[tuple[str, ...], str]]) -> list[Finding]:
    """Duplicates and case/Unicode collisions among (parts, kind) entries, folders implied too."""
    findings: list[Finding] = []
    kinds: dict[str, str] = {}  # exact path -> FILE | DIR
    folded: dict[str, str] = {}  # folded path -> the first exact path seen
    for parts, kind in entries:
        implied = [("/".join(parts[:i]), DIR) for i in range(1, len(parts))]
        for path, k in [*implied, ("/".join(parts), kind)]:
            findings += _collision(path, k, kinds, folded)
    return findings


def _collision(path: str, kind: str, kinds: dict[str, str], folded: dict[str, str]) -> list[Finding]:
    seen = kinds.get(path)
    if seen is not None:
        if seen == DIR and kind == DIR:  # folders may be listed again and implied by their files
            return []
        return [error("archive.duplicate_entry", f"{path} appears more than once", location(path))]
    kinds[path] = kind
    first = folded.setdefault(fold(path), path)
    if first != path:
        return [error("archive.name_collision", f"{path} collides with {first}", location(path))]
    return []
