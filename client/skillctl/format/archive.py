"""Skill archives: inspect, extract and pack ``.zip`` and ``.tar.gz`` safely (DESIGN §4).

- :func:`inspect_archive` gives any input a verdict and never raises for bad input: every
  problem is a finding with a stable ``archive.*`` code. The kind is told by content, not name.
- :func:`extract_archive` inspects first, then writes the skill into a temporary folder beside
  the destination and renames it into place once; on any failure nothing is left behind.
- :func:`pack_skill` writes a reproducible archive of a valid skill folder;
  :func:`folder_files` lists the same files with digests, for lock files and ``verify``.

The source is read once into memory (it is at most ``max_archive_bytes``), so inspection and
extraction judge the very same bytes, whatever happens to the file in between. Format details
live in ``_zip``/``_tar``, the shared path policy in ``_entries``, writing in ``_extract``/``_pack``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, BinaryIO

from skillctl.format import _extract, _pack
from skillctl.format._entries import (
    Member,
    Refused,
    refused,
)
from skillctl.format._scan import Scan
from skillctl.format._tar import GZIP_MAGIC, iter_tar
from skillctl.format._zip import looks_like_zip, read_zip
from skillctl.format.errors import SkillctlError
from skillctl.format.findings import Finding, error
from skillctl.format.limits import DEFAULT_LIMITS, Limits
from skillctl.format.report import FileEntry

if TYPE_CHECKING:
    from skillctl.format.report import SkillReport

Source = str | os.PathLike | bytes | bytearray | memoryview | BinaryIO | IO[bytes]


@dataclass
class ArchiveInspection:
    source: str  # the path as given, or "<bytes>" / the file object's name
    kind: str = ""  # "zip" | "tar.gz" | "" (not an archive)
    sha256: str = ""  # of the archive bytes
    size: int = 0
    root: str = ""  # "" when SKILL.md is at the root, else the single top-level folder
    files: list[FileEntry] = field(default_factory=list)  # relative to the root, sorted
    skill_md: bytes | None = None
    skill_json: bytes | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.is_error for f in self.findings)


@dataclass(frozen=True)
class PackResult:
    path: Path
    sha256: str
    size: int
    files: list[FileEntry]


class ArchiveError(SkillctlError):
    """An archive was refused; ``findings`` says why, one stable code each."""

    code = "archive.refused"

    def __init__(self, findings: Iterable[Finding], message: str | None = None) -> None:
        self.findings = list(findings)
        codes = ", ".join(dict.fromkeys(f.code for f in self.findings if f.is_error)) or "unknown"
        super().__init__(
            message or f"archive refused: {codes}",
            hint="`skillctl validate FILE` lists every finding; archives are refused, never repaired",
        )


class InvalidSkillError(SkillctlError):
    """A skill folder failed validation; ``report`` holds every finding."""

    code = "pack.invalid_skill"

    def __init__(self, report: SkillReport) -> None:
        self.report = report
        codes = ", ".join(dict.fromkeys(f.code for f in report.errors)) or "unknown"
        super().__init__(
            f"{report.path} is not a valid skill: {codes}",
            hint=f"run `skillctl validate {report.path}` for details",
        )


# --- inspection ----------------------------------------------------------------------------


def inspect_archive(source: Source, *, limits: Limits = DEFAULT_LIMITS) -> ArchiveInspection:
    """The verdict on an archive given as a path, bytes or a binary file object."""
    inspection = ArchiveInspection(source=_label(source))
    data = _read_source(source, limits, inspection.findings)
    if data is not None:
        _inspect_bytes(data, limits, inspection)
    return inspection


def _label(source: Source) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return "<bytes>"
    return str(getattr(source, "name", "<stream>"))


def _read_source(source: Source, limits: Limits, findings: list[Finding]) -> bytes | None:
    """At most ``max_archive_bytes`` of the source, or None with a finding."""
    cap = limits.max_archive_bytes
    too_large = error("archive.too_large", f"the archive is over {cap} bytes")
    try:
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
        elif isinstance(source, (str, os.PathLike)):
            with open(source, "rb") as f:
                if os.fstat(f.fileno()).st_size > cap:  # refused before reading a byte
                    findings.append(too_large)
                    return None
                data = f.read(cap + 1)
        else:
            data = source.read(cap + 1)
    except FileNotFoundError:
        findings.append(error("skill.not_found", f"{_label(source)} does not exist"))
        return None
    except OSError as exc:
        findings.append(error("skill.unreadable", f"{_label(source)}: {exc.strerror or exc}"))
        return None
    if not isinstance(data, bytes):
        raise TypeError("inspect_archive needs a path, bytes or a binary file object")
    if len(data) > cap:
        findings.append(too_large)
        return None
    return data


def _inspect_bytes(data: bytes, limits: Limits, inspection: ArchiveInspection, *, skill: bool = True) -> None:
    inspection.size = len(data)
    inspection.sha256 = hashlib.sha256(data).hexdigest()
    inspection.kind = _detect(data)
    scan = Scan(limits)
    try:
        if not data:
            raise refused("archive.empty", "the file is empty")
        if not inspection.kind:
            raise refused("archive.not_archive", "the file is neither a zip nor a tar.gz")
        for member in _members(inspection.kind, data, limits):
            scan.add(member)
    except Refused as stop:
        inspection.findings += scan.findings + stop.findings
        return
    scan.finish(inspection, skill=skill)


def _detect(data: bytes) -> str:
    if data.startswith(GZIP_MAGIC):
        return "tar.gz"
    return "zip" if looks_like_zip(data) else ""


def _members(kind: str, data: bytes, limits: Limits) -> Iterable[Member]:
    return read_zip(data, limits) if kind == "zip" else iter_tar(data, limits)


# --- extraction ----------------------------------------------------------------------------


def extract_archive(
    source: Source, dest: str | os.PathLike, *, limits: Limits = DEFAULT_LIMITS, skill: bool = True
) -> Path:
    """Extract the skill in ``source`` to ``dest`` (which must not exist) atomically.

    Raises :class:`ArchiveError` when the archive is refused (nothing is written then), and
    :class:`SkillctlError` when ``dest`` exists. Only a temporary folder beside ``dest`` is
    ever written to; it becomes ``dest`` with one rename, or is removed. ``skill=False``: any
    archive that passes the same checks (a tool ``check --fix`` downloads), whole, SKILL.md or not.
    """
    dest = Path(dest)
    findings: list[Finding] = []
    data = _read_source(source, limits, findings)
    if data is None:
        raise ArchiveError(findings)
    inspection = ArchiveInspection(source=_label(source))
    _inspect_bytes(data, limits, inspection, skill=skill)
    if not inspection.ok:
        raise ArchiveError(inspection.findings)
    if os.path.lexists(dest):
        raise SkillctlError(
            f"{dest} already exists", hint="remove it first, or extract elsewhere", code="archive.dest_exists"
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".partial", dir=dest.parent))
    try:
        _write(data, inspection, staging, limits)
        os.chmod(staging, 0o755)
        os.rename(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return dest


def _write(data: bytes, inspection: ArchiveInspection, staging: Path, limits: Limits) -> None:
    root = tuple(p for p in inspection.root.split("/") if p not in ("", "."))
    try:
        _extract.write_members(_members(inspection.kind, data, limits), root, inspection.files, staging, limits)
    except Refused as stop:
        raise ArchiveError(stop.findings) from None


# --- packing -------------------------------------------------------------------------------


def folder_files(src_dir: str | os.PathLike) -> list[FileEntry]:
    """The files ``pack_skill`` would put in the archive, with sizes and sha256, sorted.

    Raises :class:`ArchiveError` (``archive.symlink`` / ``archive.special_file``) when the
    folder holds a link or a special file, exactly as packing would.
    """
    try:
        selected = _pack.select_files(Path(src_dir))
    except Refused as stop:
        raise ArchiveError(stop.findings) from None
    return [_pack.file_entry(item) for item in selected]


def pack_skill(src_dir: str | os.PathLike, out_path: str | os.PathLike, *, allow: Iterable[str] = ()) -> PackResult:
    """Pack a valid skill folder into a reproducible ``.zip`` or ``.tar.gz`` (by suffix).

    Left out: ``.git``, ``__pycache__``, ``*.pyc``, ``.DS_Store``, ``node_modules``, and the
    patterns of a ``.skillignore`` file at the folder's root: one shell pattern per line, ``#``
    comments; a pattern without ``/`` matches a file or folder name anywhere, one with ``/``
    matches the path from the root, a trailing ``/`` matches folders only (no ``!`` negation).
    Symlinks and special files are refused. Entries are at the archive root, sorted, with fixed
    times (1980-01-01), modes (0644, or 0755 when executable), owner 0 and no owner names; the
    gzip header has no time and no file name. So the same files always give the same sha256
    (with the same zlib). The archive is inspected before it replaces ``out_path``. ``allow``
    names error findings that do not stop packing (an installer's own decision).
    """
    from skillctl.format.load import load_skill  # lazy: load imports this module

    src, out = Path(src_dir), Path(out_path)
    writer = _writer_for(out)
    report = load_skill(src)
    allowed = set(allow)
    if report.manifest is None or any(f.code not in allowed for f in report.errors):
        raise InvalidSkillError(report)
    try:
        selected = _pack.select_files(src)
    except Refused as stop:
        raise ArchiveError(stop.findings) from None
    return _write_archive(out, writer, selected)


def _writer_for(out: Path):
    name = out.name.lower()
    if name.endswith(".zip"):
        return _pack.write_zip
    if name.endswith((".tar.gz", ".tgz")):
        return _pack.write_tar_gz
    raise SkillctlError(
        f"cannot tell the archive kind of {out.name}", hint="name it .zip or .tar.gz", code="pack.unknown_kind"
    )


def _write_archive(out: Path, writer, selected: list[_pack.Selected]) -> PackResult:
    fd, temp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as f:
            files = writer(selected, f)
        check = inspect_archive(temp)
        if not check.ok:  # what we write must pass what the registry checks
            raise ArchiveError(check.findings)
        os.chmod(temp, 0o644)
        os.replace(temp, out)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return PackResult(out, check.sha256, check.size, files)
