"""Writing an inspected archive's skill into a fresh folder, re-checking everything on the way.

The caller has inspected the same bytes already; this pass trusts nothing from that but the
list of expected files. Paths are checked again, every file is created new (``O_EXCL``,
``O_NOFOLLOW``) inside folders this code made, modes are fixed (0644, or 0755 when any
executable bit was set; never setuid, setgid or sticky), and bytes are counted against the
limits and the digests the inspection recorded.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from skillctl.format._entries import (
    CHUNK,
    DIR,
    FILE,
    Member,
    Refused,
    check_path,
    fold,
    kind_problem,
    location,
    reading,
    refused,
)
from skillctl.format.limits import Limits
from skillctl.format.report import FileEntry

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def write_members(
    members: Iterable[Member],
    root: tuple[str, ...],
    expected: list[FileEntry],
    into: Path,
    limits: Limits,
) -> None:
    """Write the members under ``root`` into the empty folder ``into``; raises Refused."""
    wanted = {entry.path: entry for entry in expected}
    written: set[str] = set()  # folded paths: the target filesystem may ignore case
    budget = limits.max_unpacked_bytes
    for member in members:
        rel = _relative(member, root, limits)
        if not rel:
            continue
        if member.kind == DIR:
            _make_dirs(into, rel)
            continue
        entry = wanted.pop("/".join(rel), None)
        if entry is None:
            raise refused(
                "archive.duplicate_entry",
                "an entry the inspection did not list",
                location(member.name),
            )
        if fold(entry.path) in written:
            raise refused("archive.name_collision", "two files would share a path", location(member.name))
        written.add(fold(entry.path))
        budget -= _write_file(member, into, rel, entry, budget)
    if wanted:
        raise refused("archive.truncated", f"{len(wanted)} files missing on the second read")


def _relative(member: Member, root: tuple[str, ...], limits: Limits) -> tuple[str, ...]:
    parts, problems = check_path(member.name, limits)
    problem = kind_problem(member)
    if problems or problem:
        raise Refused(*problems, *([problem] if problem else []))
    if parts[: len(root)] == root:
        return parts[len(root) :]
    if member.kind == DIR and parts == root[: len(parts)]:  # the root folder's own entry
        return ()
    raise refused("archive.multiple_roots", "an entry outside the skill's folder", location(member.name))


def _make_dirs(into: Path, parts: tuple[str, ...]) -> Path:
    path = into
    for part in parts:
        path = path / part
        try:
            os.mkdir(path, 0o755)
            os.chmod(path, 0o755)  # the umask must not decide who can read an installed skill
        except FileExistsError:
            if path.is_symlink() or not path.is_dir():
                raise refused("archive.duplicate_entry", "a folder and a file share a path", str(path)) from None
    return path


def _write_file(member: Member, into: Path, rel: tuple[str, ...], entry: FileEntry, budget: int) -> int:
    assert member.kind == FILE
    target = _make_dirs(into, rel[:-1]) / rel[-1]
    digest, size = hashlib.sha256(), 0
    fd = os.open(target, _CREATE, 0o600)
    with os.fdopen(fd, "wb") as out, reading(member) as stream:
        while chunk := stream.read(CHUNK):
            size += len(chunk)
            if size > budget:
                raise refused("archive.unpacked_too_large", f"unpacks to more than {budget} bytes")
            if size > entry.size:
                raise refused(
                    "archive.truncated",
                    "an entry grew since it was inspected",
                    location(member.name),
                )
            digest.update(chunk)
            out.write(chunk)
    if size != entry.size or digest.hexdigest() != entry.sha256:
        raise refused("archive.truncated", "an entry changed since it was inspected", location(member.name))
    os.chmod(target, 0o755 if member.mode & 0o111 else 0o644)
    return size
