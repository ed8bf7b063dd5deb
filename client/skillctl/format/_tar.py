"""Reading a tar.gz safely: one streaming pass with every decompressed byte counted.

The gzip layer is our own bounded reader, so a bomb stops at the budget, never at the end of
its zeros; ``tarfile`` then reads headers from it in stream mode (``r|``), which never seeks
and never needs the whole archive. Whatever follows the end of the tar (bytes ``tarfile``
silently stops at, or anything after the zero blocks) must be zeros: hidden data is refused.
"""

from __future__ import annotations

import tarfile
import zlib
from collections.abc import Iterator

from skillctl.format._entries import (
    CHUNK,
    DIR,
    FILE,
    HARDLINK,
    SPECIAL,
    SYMLINK,
    Member,
    refused,
)
from skillctl.format.limits import Limits

GZIP_MAGIC = b"\x1f\x8b"
_GZIP_WBITS = 16 + zlib.MAX_WBITS
_TAIL_KEPT = 64 * 1024  # tarfile reads ahead at most a 10 KiB record past what it parsed
# Tar headers and padding on top of the files' own bytes: generous, since pax headers can
# carry long names, yet bounded so a stream of zeros cannot run on.
_HEADER_BUDGET_PER_ENTRY = 8 * 1024
_HEADER_BUDGET_FIXED = 1024 * 1024


class BoundedGunzip:
    """A file-like ``read`` over gzip bytes that refuses to produce more than ``budget`` bytes."""

    def __init__(self, data: bytes, budget: int) -> None:
        self._data, self._pos, self._budget = data, 0, budget
        self._inflater = zlib.decompressobj(_GZIP_WBITS)
        self._pending = b""  # compressed input zlib has not consumed yet
        self._done = False
        self.produced = 0  # decompressed bytes handed out so far
        self._tail = bytearray()  # the last decompressed bytes, to check what tarfile skipped

    def read(self, size: int = -1) -> bytes:
        size = CHUNK if size is None or size < 0 else max(size, 1)
        while not self._done:
            out = self._inflate(size)
            if out:
                return self._count(out)
        return b""

    def _inflate(self, size: int) -> bytes:
        if not self._pending:
            if self._pos >= len(self._data):
                raise refused("archive.truncated", "the gzip stream ends early")
            self._pending = self._data[self._pos : self._pos + CHUNK]
            self._pos += len(self._pending)
        try:
            out = self._inflater.decompress(self._pending, size)
        except zlib.error as exc:
            raise refused("archive.truncated", f"the gzip stream is corrupt: {exc}") from None
        self._pending = self._inflater.unconsumed_tail
        if self._inflater.eof:
            self._next_member(self._inflater.unused_data + self._data[self._pos :])
        return out

    def _next_member(self, rest: bytes) -> None:
        """gzip allows concatenated members; anything else after the end is unaccounted for."""
        self._pending = b""
        if not rest:
            self._done = True
        elif rest.startswith(GZIP_MAGIC):
            self._data, self._pos = rest, 0
            self._inflater = zlib.decompressobj(_GZIP_WBITS)
        else:
            raise refused("archive.leading_data", f"{len(rest)} bytes after the end of the gzip stream")

    def _count(self, out: bytes) -> bytes:
        self.produced += len(out)
        if self.produced > self._budget:
            raise refused("archive.unpacked_too_large", f"unpacks to more than {self._budget} bytes")
        self._tail += out
        del self._tail[:-_TAIL_KEPT]
        return out

    def since(self, offset: int) -> bytes | None:
        """The bytes produced from ``offset`` on, if still kept."""
        back = self.produced - offset
        return bytes(self._tail[len(self._tail) - back :]) if 0 <= back <= len(self._tail) else None


def iter_tar(data: bytes, limits: Limits) -> Iterator[Member]:
    """Members as they stream by; a file's ``open`` is valid until the next member is read."""
    budget = limits.max_unpacked_bytes + limits.max_entries * _HEADER_BUDGET_PER_ENTRY + _HEADER_BUDGET_FIXED
    stream = BoundedGunzip(data, budget)
    archive = _open(stream)
    declared = entries = 0
    try:
        for info in archive:
            entries += 1
            if entries > limits.max_entries:
                raise refused("archive.too_many_entries", f"more than {limits.max_entries} entries")
            member = _member(archive, info)
            declared += member.size
            if declared > limits.max_unpacked_bytes:  # refused on the header, before the data
                raise refused(
                    "archive.unpacked_too_large",
                    f"declares more than {limits.max_unpacked_bytes} bytes",
                )
            yield member
    except (tarfile.TarError, EOFError) as exc:
        raise refused("archive.truncated", f"the tar is corrupt: {exc}") from None
    if entries == 0:
        raise refused("archive.empty", "the tar has no entries")
    _check_end(stream, archive.offset)


def _open(stream: BoundedGunzip) -> tarfile.TarFile:
    try:
        return tarfile.open(fileobj=stream, mode="r|")
    except tarfile.ReadError as exc:
        if str(exc) == "empty file" or stream.produced == 0:
            raise refused("archive.empty", "the tar has no entries") from None
        raise refused("archive.not_archive", f"gzip, but not a tar inside: {exc}") from None
    except (tarfile.TarError, EOFError) as exc:
        raise refused("archive.truncated", f"the tar is corrupt: {exc}") from None


def _check_end(stream: BoundedGunzip, end_of_members: int) -> None:
    """After the last member only zero blocks may follow, up to the end of the gzip stream."""
    skipped = stream.since(end_of_members)
    if skipped is None or skipped.strip(b"\0"):
        raise refused("archive.leading_data", "data after the last tar member")
    while chunk := stream.read(CHUNK):
        if chunk.strip(b"\0"):
            raise refused("archive.leading_data", "data after the end of the tar")


def _member(archive: tarfile.TarFile, info: tarfile.TarInfo) -> Member:
    kind = _kind(info)
    if kind != FILE:
        return Member(info.name, kind, 0, info.mode & 0o777)
    return Member(info.name, FILE, info.size, info.mode & 0o777, lambda: archive.extractfile(info))


def _kind(info: tarfile.TarInfo) -> str:
    if info.issym():
        return SYMLINK
    if info.islnk():
        return HARDLINK
    if info.isdir():
        return DIR
    if info.type in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE):
        return FILE
    return SPECIAL  # devices, FIFOs, sparse files, and types no tool should need
