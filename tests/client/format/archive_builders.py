"""Builders for hostile archives, written byte by byte so nothing sanitises them on the way.

``zip_bytes`` writes local headers, data, the central directory and the end record itself, so a
test can make them disagree, shift them, encrypt them or lie about sizes. ``tar_gz_bytes`` uses
``tarfile`` only to format headers (it writes whatever name or type it is given). Bombs are
built cheaply: a fully flushed deflate block of zeros is the same bytes every time, so a GiB of
zeros is one 1 KiB block repeated, and nothing here ever inflates it.
"""

from __future__ import annotations

import functools
import io
import stat
import struct
import tarfile
import zlib
from dataclasses import dataclass

MiB = 1024 * 1024
GiB = 1024 * MiB

SKILL_MD = b"---\nname: demo\ndescription: A demo skill for archive tests.\nlicense: MIT\n---\n# Demo\n\nDo things.\n"


# --- zip -----------------------------------------------------------------------------------


@dataclass
class ZipMember:
    name: str | bytes
    data: bytes = b""
    method: int = 8  # 0 stored, 8 deflate, 12 bzip2, 99 AES, ...
    flags: int = 0  # 0x1 encrypted, 0x8 data descriptor, 0x800 UTF-8 name
    mode: int | None = stat.S_IFREG | 0o644  # Unix mode in the external attributes; None: MS-DOS
    local_name: str | bytes | None = None  # a different name in the local header
    compressed: bytes | None = None  # raw member bytes instead of compressing ``data``
    file_size: int | None = None  # the declared uncompressed size (default: len(data))
    crc: int | None = None
    offset: int | None = None  # where the central directory says the local header is

    def raw_name(self, name: str | bytes) -> bytes:
        return name if isinstance(name, bytes) else name.encode("utf-8")


def deflate(data: bytes) -> bytes:
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    return co.compress(data) + co.flush()


def zip_bytes(
    members: list[ZipMember],
    *,
    prefix: bytes = b"",
    between: bytes = b"",
    suffix: bytes = b"",
    comment: bytes = b"",
    shift_offsets: bool = False,
) -> bytes:
    """A zip of ``members``; ``prefix`` goes before it (offsets shifted to match if asked),
    ``between`` after the first member's data, ``suffix`` after the end record."""
    out = bytearray(prefix)
    central = bytearray()
    base = len(prefix) if shift_offsets else 0
    for index, m in enumerate(members):
        payload = m.compressed if m.compressed is not None else (deflate(m.data) if m.method == 8 else m.data)
        crc = m.crc if m.crc is not None else zlib.crc32(m.data)
        size = m.file_size if m.file_size is not None else len(m.data)
        name = m.raw_name(m.name)
        flags = m.flags | (0x800 if isinstance(m.name, str) and not m.name.isascii() else 0)
        local = m.raw_name(m.local_name) if m.local_name is not None else name
        offset = len(out) - len(prefix) + base
        out += struct.pack(
            "<4sHHHHHIIIHH",
            b"PK\x03\x04",
            20,
            flags,
            m.method,
            0,
            33,
            crc,
            len(payload),
            size,
            len(local),
            0,
        )
        out += local + payload
        if index == 0:
            out += between
        system, attrs = (3, m.mode << 16) if m.mode is not None else (0, 0x10 if name.endswith(b"/") else 0)
        central += struct.pack(
            "<4sBBHHHHHIIIHHHHHII",
            b"PK\x01\x02", 20, system, 20, flags, m.method, 0, 33, crc, len(payload), size,
            len(name), 0, 0, 0, 0, attrs, offset if m.offset is None else m.offset,
        )  # fmt: skip
        central += name
    cd_offset = len(out) - len(prefix) + base
    out += central
    out += struct.pack(
        "<4sHHHHIIH",
        b"PK\x05\x06",
        0,
        0,
        len(members),
        len(members),
        len(central),
        cd_offset,
        len(comment),
    )
    return bytes(out + comment + suffix)


def skill_zip(*extra: ZipMember, root: str = "", **kwargs) -> bytes:
    """A valid skill (SKILL.md + a script) plus ``extra`` members."""
    members = [
        ZipMember(f"{root}SKILL.md", SKILL_MD),
        ZipMember(f"{root}scripts/run.sh", b"#!/bin/sh\necho hi\n", mode=stat.S_IFREG | 0o755),
        *extra,
    ]
    return zip_bytes(members, **kwargs)


# --- tar.gz --------------------------------------------------------------------------------


@dataclass
class TarMember:
    name: str
    data: bytes = b""
    type: bytes = tarfile.REGTYPE
    linkname: str = ""
    mode: int = 0o644
    size: int | None = None  # the declared size, if it must differ from len(data)


def tar_bytes(members: list[TarMember], *, end: bool = True) -> bytes:
    """Uncompressed tar (GNU headers; undecodable names kept as raw bytes)."""
    out = io.BytesIO()
    for m in members:
        info = tarfile.TarInfo(m.name)
        info.type, info.linkname, info.mode = m.type, m.linkname, m.mode
        info.size = len(m.data) if m.type == tarfile.REGTYPE else 0
        header = info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape")
        if m.size is not None:
            header = _with_size(header, m.size)
        out.write(header)
        if m.type == tarfile.REGTYPE:
            out.write(m.data + b"\0" * (-len(m.data) % 512))
    if end:
        out.write(b"\0" * 1024)
    return out.getvalue()


def _with_size(header: bytes, size: int) -> bytes:
    block = bytearray(header[-512:])
    block[124:136] = b"%011o\0" % size
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    return header[:-512] + bytes(block)


def gzip_bytes(data: bytes) -> bytes:
    return gzip_stream([deflate_pieces(data, final=True)], zlib.crc32(data), len(data))


def gzip_stream(pieces: list[bytes], crc: int, size: int) -> bytes:
    """gzip: a header without time or name, raw deflate pieces, then CRC and size."""
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + b"".join(pieces) + struct.pack("<II", crc, size & 0xFFFFFFFF)


def deflate_pieces(data: bytes, *, final: bool) -> bytes:
    """Raw deflate of ``data``, fully flushed so pieces from different calls concatenate."""
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    return co.compress(data) + (co.flush() if final else co.flush(zlib.Z_FULL_FLUSH))


def tar_gz_bytes(members: list[TarMember], **kwargs) -> bytes:
    return gzip_bytes(tar_bytes(members, **kwargs))


def skill_tar_gz(*extra: TarMember, root: str = "") -> bytes:
    members = [
        TarMember(f"{root}SKILL.md", SKILL_MD),
        TarMember(f"{root}scripts/run.sh", b"#!/bin/sh\necho hi\n", mode=0o755),
        *extra,
    ]
    return tar_gz_bytes(members)


# --- bombs ---------------------------------------------------------------------------------


@functools.cache
def _zero_block() -> bytes:
    return deflate_pieces(bytes(MiB), final=False)  # the same ~1 KiB for every MiB of zeros


@functools.cache
def zeros_crc(n_mib: int, start: int = 0) -> int:
    crc, chunk = start, bytes(MiB)
    for _ in range(n_mib):
        crc = zlib.crc32(chunk, crc)
    return crc


def deflated_zeros(n_mib: int) -> bytes:
    """A complete raw deflate stream of ``n_mib`` MiB of zeros, built without compressing them."""
    return _zero_block() * n_mib + deflate_pieces(b"", final=True)


def zip_bomb(n_mib: int = 1024, *, declared: int | None = None) -> bytes:
    """A skill zip with a member of ``n_mib`` MiB of zeros (ratio ~1000); ``declared`` lies."""
    size = n_mib * MiB
    bomb = ZipMember(
        "zeros.bin",
        compressed=deflated_zeros(n_mib),
        file_size=declared if declared is not None else size,
        crc=zeros_crc(n_mib),
    )
    return skill_zip(bomb)


def tar_gz_bomb(n_mib: int = 1024) -> bytes:
    """A skill tar.gz whose second member's header honestly declares ``n_mib`` MiB of zeros."""
    head = tar_bytes([TarMember("SKILL.md", SKILL_MD)], end=False)
    header = tarfile.TarInfo("zeros.bin")
    header.size = n_mib * MiB
    head += header.tobuf(tarfile.GNU_FORMAT)
    return _gzip_with_zeros(head, n_mib, b"\0" * 1024)


def gzip_zero_bomb(n_mib: int = 1024) -> bytes:
    """A valid small skill tar followed, inside the same gzip stream, by ``n_mib`` MiB of zeros.

    No header declares them: only counting decompressed bytes while streaming catches it."""
    return _gzip_with_zeros(tar_bytes([TarMember("SKILL.md", SKILL_MD)]), n_mib, b"")


def _gzip_with_zeros(head: bytes, n_mib: int, tail: bytes) -> bytes:
    crc = zlib.crc32(tail, zeros_crc(n_mib, zlib.crc32(head)))
    pieces = [
        deflate_pieces(head, final=False),
        _zero_block() * n_mib,
        deflate_pieces(tail, final=True),
    ]
    return gzip_stream(pieces, crc, len(head) + n_mib * MiB + len(tail))
