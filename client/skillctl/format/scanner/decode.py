"""Decoders: the text a code file hides in its literals, so the rules can read it too.

Only literals that look like an encoding are decoded (long base64 or hex runs, ``\\x`` escape
runs, ``chr()``/``String.fromCharCode`` sequences, concatenated string literals); base64 that
turns out to be zlib or gzip is inflated. What comes out is kept only when it reads as text, and
is decoded again (base64 of gzip of hex...) up to ``MAX_DEPTH``. Everything is bounded so a
hostile file cannot make the scan slow or big.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

MAX_DEPTH = 3  # base64(gzip(hex(...))) is as deep as real obfuscation goes; deeper is a bomb
MAX_DECODED = 64 * 1024  # one payload: more than any dropper needs, and rules read the start anyway
MAX_TOTAL = 512 * 1024  # all payloads of one file: a file of nothing but blobs stays cheap
MAX_PAYLOADS = 200  # per file: enough for a split payload, not a flood of tiny literals
MIN_TEXT = 2  # "os" built from pieces is worth a look; decoded runs are longer anyway

BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/]{20,}={0,2}")
HEX_RUN = re.compile(r"(?<![0-9A-Za-z])[0-9A-Fa-f]{16,}(?![0-9A-Za-z])")
SPACED_HEX = re.compile(r"fromhex\(\s*['\"]([0-9A-Fa-f ]{8,})['\"]")
ESCAPE_RUN = re.compile(r"(?:\\x[0-9A-Fa-f][0-9A-Fa-f]|\\u00[0-9A-Fa-f][0-9A-Fa-f]|\\[0-7][0-7][0-7]){4,}")
CHR_CALL = re.compile(r"\bchr\(\s*(0x[0-9A-Fa-f]{1,6}|\d{1,7})\s*\)")
CHR_GAP = re.compile(r"[\s+,\[\]()]*")  # what may sit between two chr() calls of one string
FROM_CHAR_CODE = re.compile(r"String\.fromCharCode\(([\d\s,xXa-fA-F]{1,4000})\)")
STRING_LITERAL = re.compile(r"\"([^\"\\\n]{0,200})\"|'([^'\\\n]{0,200})'")
PLUS_GAP = re.compile(r"\s*\+\s*")
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Decoded:
    offset: int  # where the encoded literal starts in the file's text
    how: str  # base64 | hex | zlib | gzip | escapes | chr | concatenation
    text: str

    @property
    def built(self) -> bool:
        """Made from pieces rather than decoded: worth checking against dangerous names."""
        return self.how in ("chr", "concatenation", "escapes")


def payloads(text: str, runs_only: bool = False) -> list[Decoded]:
    """Every decodable literal of ``text`` and what it decodes to, nested decodings included
    (each reported at the offset of the outermost literal). ``runs_only``: base64 and hex runs
    alone, for prose, where quotes and ``+`` are punctuation rather than code."""
    budget = _Budget()
    found: list[Decoded] = []
    first = _decode_once(text, budget, (_base64, _hex) if runs_only else _FINDERS)
    for item in first:
        found += _nested(item, 1, budget)
    return found


class _Budget:
    def __init__(self) -> None:
        self.left, self.count = MAX_TOTAL, MAX_PAYLOADS

    def take(self, size: int) -> bool:
        if self.count <= 0 or size > self.left:
            return False
        self.left, self.count = self.left - size, self.count - 1
        return True


def _nested(item: Decoded, depth: int, budget: _Budget) -> list[Decoded]:
    found = [item]
    if depth < MAX_DEPTH and item.how not in ("concatenation",):
        for inner in _decode_once(item.text, budget, _FINDERS):
            found += _nested(Decoded(item.offset, f"{inner.how} in {item.how}", inner.text), depth + 1, budget)
    return found


def _decode_once(text: str, budget: _Budget, finders: tuple) -> Iterator[Decoded]:
    for finder in finders:
        for offset, how, decoded in finder(text):
            if len(decoded) >= MIN_TEXT and budget.take(len(decoded)):
                yield Decoded(offset, how, decoded[:MAX_DECODED])


def _base64(text: str) -> Iterator[tuple[int, str, str]]:
    if len(text) < 20:
        return
    for match in BASE64_RUN.finditer(text):
        run = match.group(0)
        try:
            raw = base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
        except (binascii.Error, ValueError):
            continue
        yield from _as_text(match.start(), "base64", raw)


def _hex(text: str) -> Iterator[tuple[int, str, str]]:
    for match in HEX_RUN.finditer(text):
        run = match.group(0)
        if len(run) % 2 == 0 and not run.isdigit():
            yield from _as_text(match.start(), "hex", bytes.fromhex(run))
    for match in SPACED_HEX.finditer(text):
        digits = match.group(1).replace(" ", "")
        if " " in match.group(1) and len(digits) % 2 == 0:
            yield from _as_text(match.start(), "hex", bytes.fromhex(digits))


def _as_text(offset: int, how: str, raw: bytes) -> Iterator[tuple[int, str, str]]:
    """The decoded bytes as text, inflated first when they are zlib or gzip."""
    inflated = _inflate(raw)
    if inflated is not None:
        how, raw = how + ("+gzip" if raw[:2] == GZIP_MAGIC else "+zlib"), inflated
    decoded = _readable(raw)
    if decoded is not None:
        yield offset, how, decoded


def _inflate(raw: bytes) -> bytes | None:
    if raw[:2] == GZIP_MAGIC:
        wbits = 16 + zlib.MAX_WBITS
    elif len(raw) > 2 and raw[0] == 0x78 and (raw[0] << 8 | raw[1]) % 31 == 0:
        wbits = zlib.MAX_WBITS
    else:
        return None
    try:  # max_length: a decompression bomb stops at the cap instead of filling memory
        return zlib.decompressobj(wbits).decompress(raw, MAX_DECODED)
    except zlib.error:
        return None


def _readable(raw: bytes) -> str | None:
    """Text when at least 90% of it is printable: random bytes (hashes, images, keys) are not."""
    try:
        decoded = raw[:MAX_DECODED].decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(ch.isprintable() or ch in "\n\r\t" for ch in decoded)
    return decoded if decoded and printable >= 0.9 * len(decoded) else None


def _escapes(text: str) -> Iterator[tuple[int, str, str]]:
    if "\\" not in text:
        return
    for match in ESCAPE_RUN.finditer(text):
        try:
            decoded = match.group(0).encode("ascii").decode("unicode_escape")
        except (UnicodeDecodeError, UnicodeEncodeError):
            continue
        if decoded.isprintable():
            yield match.start(), "escapes", decoded


def _chr(text: str) -> Iterator[tuple[int, str, str]]:
    if "chr(" not in text:
        return
    start, end = -1, -1
    chars: list[int] = []
    for match in CHR_CALL.finditer(text):
        if chars and CHR_GAP.fullmatch(text, end, match.start()) is None:
            yield from _chars(start, chars)
            chars = []
        if not chars:
            start = match.start()
        chars.append(int(match.group(1), 0))
        end = match.end()
    yield from _chars(start, chars)


def _from_char_code(text: str) -> Iterator[tuple[int, str, str]]:
    if "fromCharCode" not in text:
        return
    for match in FROM_CHAR_CODE.finditer(text):
        try:
            codes = [int(part, 0) for part in match.group(1).split(",") if part.strip()]
        except ValueError:
            continue
        yield from _chars(match.start(), codes)


def _chars(offset: int, codes: list[int]) -> Iterator[tuple[int, str, str]]:
    if len(codes) >= 2 and all(0 < code < 0x110000 for code in codes):
        yield offset, "chr", "".join(map(chr, codes))


def _concatenation(text: str) -> Iterator[tuple[int, str, str]]:
    """Adjacent string literals joined by ``+`` (``"o" + "s"``, ``'child_' + 'process'``)."""
    if "+" not in text:
        return
    pieces: list[str] = []
    start = end = -1
    for match in STRING_LITERAL.finditer(text):
        if pieces and PLUS_GAP.fullmatch(text, end, match.start()) is None:
            yield from _joined(start, pieces)
            pieces = []
        if not pieces:
            start = match.start()
        pieces.append(match.group(1) if match.group(1) is not None else match.group(2))
        end = match.end()
    yield from _joined(start, pieces)


def _joined(offset: int, pieces: list[str]) -> Iterator[tuple[int, str, str]]:
    if len(pieces) >= 2:
        yield offset, "concatenation", "".join(pieces)[:MAX_DECODED]


_FINDERS = (_base64, _hex, _escapes, _chr, _from_char_code, _concatenation)
