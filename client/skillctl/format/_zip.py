"""Reading a zip safely: the directory is cross-checked before one byte is inflated.

``zipfile`` parses the central directory (it knows zip64 and the odd corners), but it forgives
things a registry must not: data prepended to the archive (it shifts every offset to fit), gaps
and overlapping members (the non-recursive zip bomb), trailing bytes, and local headers that
name another file than the directory does (what one tool checks and another extracts). So every
member's local header is read here and the members must tile the file exactly, from offset 0 to
the central directory, to the end record, to the last byte.
"""

from __future__ import annotations

import io
import stat
import struct
import zipfile

from skillctl.format._entries import DIR, FILE, SPECIAL, SYMLINK, Member, Refused, location, refused
from skillctl.format.findings import Finding, error
from skillctl.format.limits import Limits

LOCAL_SIG = b"PK\x03\x04"
END_SIG = b"PK\x05\x06"
_DESCRIPTOR_SIG = b"PK\x07\x08"
_LOCAL = struct.Struct("<4sHHHHHIIIHH")  # the 30-byte local file header
_END_SIZE = 22  # the end-of-central-directory record without its comment
_ZIP64_END_SIZE = zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator
_ENCRYPTED = 0x0001 | 0x0040  # traditional and strong encryption flag bits
_DATA_DESCRIPTOR = 0x0008  # sizes and CRC follow the data instead of preceding it
_UTF8_NAME = 0x0800
_AES = 99  # WinZip AES: encrypted, whatever the flag bits say
_MSDOS_DIR = 0x10
_UNIX = 3
_FULL32 = 0xFFFFFFFF  # "see the zip64 extra field"
_ALLOWED_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
# What zipfile raises on hostile directories; all of them mean "corrupt".
_CORRUPT = (
    zipfile.BadZipFile,
    NotImplementedError,
    ValueError,
    struct.error,
    EOFError,
    OSError,
    OverflowError,
)


def looks_like_zip(data: bytes) -> bool:
    """A zip starts with a member or an empty end record, or ends with an end record."""
    return data.startswith((LOCAL_SIG, END_SIG)) or END_SIG in data[-(0xFFFF + _END_SIZE) :]


def read_zip(data: bytes, limits: Limits) -> list[Member]:
    """The members of a zip, after every structural check passed; raises :class:`Refused`."""
    zf, endrec = _open(data)
    infos = zf.infolist()
    _check_tail(data, zf, endrec)
    if not infos:
        raise refused("archive.empty", "the zip has no entries")
    if len(infos) > limits.max_entries:
        raise refused("archive.too_many_entries", f"{len(infos)} entries (max {limits.max_entries})")
    problems = [p for info in infos for p in _entry_problems(info)]
    problems += _layout_problems(data, zf.start_dir, infos)
    problems += _size_problems(infos, limits)
    if problems:
        raise Refused(*problems)
    return [_member(zf, info) for info in infos]


def _open(data: bytes) -> tuple[zipfile.ZipFile, list]:
    buffer = io.BytesIO(data)
    try:
        zf = zipfile.ZipFile(buffer)
        endrec = zipfile._EndRecData(buffer)
    except _CORRUPT as exc:
        raise refused("archive.truncated", f"the zip directory cannot be read: {exc}") from None
    if not endrec or len(zf.infolist()) != endrec[zipfile._ECD_ENTRIES_TOTAL]:
        raise refused("archive.truncated", "the zip directory does not hold the entries it declares")
    return zf, endrec


def _check_tail(data: bytes, zf: zipfile.ZipFile, endrec: list) -> None:
    """The central directory, the end record and its comment must end exactly at the last byte."""
    end_at = endrec[zipfile._ECD_LOCATION]
    declared_end = end_at + _END_SIZE + endrec[zipfile._ECD_COMMENT_SIZE]
    if declared_end > len(data):
        raise refused("archive.truncated", "the zip ends inside its end record's comment")
    if declared_end < len(data):
        raise refused("archive.leading_data", f"{len(data) - declared_end} bytes after the end of the zip")
    zip64 = endrec[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64
    gap = end_at - (zf.start_dir + endrec[zipfile._ECD_SIZE])
    if gap != (_ZIP64_END_SIZE if zip64 else 0):
        raise refused("archive.leading_data", "data between the central directory and the end record")


def _entry_problems(info: zipfile.ZipInfo) -> list[Finding]:
    loc = location(info.orig_filename)
    if info.flag_bits & _ENCRYPTED or info.compress_type == _AES:
        return [error("archive.encrypted", "the entry is encrypted", loc)]
    if info.compress_type not in _ALLOWED_METHODS:
        return [error("archive.compression_method", f"compression method {info.compress_type}", loc)]
    if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
        return [error("archive.header_mismatch", "a stored entry's sizes differ", loc)]
    if info.orig_filename.endswith("/") and info.file_size:
        return [error("archive.leading_data", "a folder entry carries data", loc)]
    return []


def _layout_problems(data: bytes, start_dir: int, infos: list[zipfile.ZipInfo]) -> list[Finding]:
    """Members must follow each other from offset 0 to the central directory, no gap, no overlap."""
    expected = 0
    for info in sorted(infos, key=lambda i: i.header_offset):
        loc = location(info.orig_filename)
        if info.header_offset != expected:
            what = "data before the zip" if expected == 0 else "a gap or an overlap between entries"
            return [error("archive.leading_data", f"{what} (at offset {info.header_offset})", loc)]
        end, problem = _local_entry_end(data, info)
        if problem is not None:
            return [problem]
        expected = end
    if expected != start_dir:
        return [error("archive.leading_data", "data between the last entry and the central directory")]
    return []


def _local_entry_end(data: bytes, info: zipfile.ZipInfo) -> tuple[int, Finding | None]:
    """Where this member's bytes end, or what its local header gets wrong."""
    loc, at = location(info.orig_filename), info.header_offset
    if at + _LOCAL.size > len(data):
        return 0, error("archive.truncated", "the zip ends inside a local header", loc)
    sig, _, flags, method, _, _, _, csize, usize, name_len, extra_len = _LOCAL.unpack_from(data, at)
    name = data[at + _LOCAL.size : at + _LOCAL.size + name_len]
    extra = data[at + _LOCAL.size + name_len : at + _LOCAL.size + name_len + extra_len]
    if sig != LOCAL_SIG or name != _raw_name(info):
        return 0, error("archive.header_mismatch", f"the local header names {name!r}", loc)
    sizes_inline = not flags & _DATA_DESCRIPTOR and _FULL32 not in (csize, usize)
    if (
        method != info.compress_type
        or (flags ^ info.flag_bits) & _ENCRYPTED
        or (sizes_inline and (csize, usize) != (info.compress_size, info.file_size))
    ):
        return 0, error("archive.header_mismatch", "the local header's method, flags or sizes differ", loc)
    end = at + _LOCAL.size + name_len + extra_len + info.compress_size
    if flags & _DATA_DESCRIPTOR:
        end += _descriptor_size(data, end, _has_zip64_extra(extra))
    if end > len(data):
        return 0, error("archive.truncated", "the zip ends inside an entry's data", loc)
    return end, None


def _raw_name(info: zipfile.ZipInfo) -> bytes:
    return info.orig_filename.encode("utf-8" if info.flag_bits & _UTF8_NAME else "cp437")


def _descriptor_size(data: bytes, at: int, zip64: bool) -> int:
    size = 4 + (16 if zip64 else 8)  # CRC + compressed and uncompressed sizes
    return size + 4 if data[at : at + 4] == _DESCRIPTOR_SIG else size


def _has_zip64_extra(extra: bytes) -> bool:
    at = 0
    while at + 4 <= len(extra):
        header_id, size = struct.unpack_from("<HH", extra, at)
        if header_id == 0x0001:
            return True
        at += 4 + size
    return False


def _size_problems(infos: list[zipfile.ZipInfo], limits: Limits) -> list[Finding]:
    """Declared sizes refuse a bomb before inflating it; reading re-counts in case they lie."""
    problems = []
    total = sum(info.file_size for info in infos)
    if total > limits.max_unpacked_bytes:
        problems.append(
            error(
                "archive.unpacked_too_large",
                f"declares {total} bytes unpacked (max {limits.max_unpacked_bytes})",
            )
        )
    for info in infos:
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size >= limits.ratio_min_member_bytes and ratio > limits.max_compression_ratio:
            problems.append(
                error(
                    "archive.compression_ratio",
                    f"compression ratio {ratio:.0f} (max {limits.max_compression_ratio:.0f})",
                    location(info.orig_filename),
                )
            )
    return problems


def _member(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> Member:
    mode = info.external_attr >> 16 if info.create_system == _UNIX else 0
    kind = _kind(info, mode)
    if kind != FILE:
        return Member(info.orig_filename, kind, 0, mode & 0o777)
    return Member(info.orig_filename, FILE, info.file_size, mode & 0o777, lambda: zf.open(info))


def _kind(info: zipfile.ZipInfo, mode: int) -> str:
    file_type = stat.S_IFMT(mode)
    if file_type == stat.S_IFLNK:
        return SYMLINK
    if file_type not in (0, stat.S_IFREG, stat.S_IFDIR):
        return SPECIAL
    if info.orig_filename.endswith("/") or file_type == stat.S_IFDIR or info.external_attr & _MSDOS_DIR:
        return DIR
    return FILE
