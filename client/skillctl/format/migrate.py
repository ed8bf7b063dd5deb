"""Rewrite OpenClaw/Clawdbot single-line JSON ``metadata`` as block YAML.

Only the lines holding inline JSON mappings (``metadata: {...}``, or ``openclaw: {...}`` inside
a block ``metadata``) change; every other frontmatter line and the whole body are kept byte for
byte (line endings included). The result must parse to the same data, or nothing is written.

``flatten`` (seed 002's form, ``migrate --flatten``) moves the fields of the gating blocks
(``metadata.openclaw`` / ``clawdbot`` / ...) directly under ``metadata``, as block YAML; only the
``metadata`` lines change, and the result must give the same normalised manifest.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from skillctl.format.frontmatter import Frontmatter, load

_INLINE = re.compile(rb"^(?P<indent>[ ]*)(?P<key>[A-Za-z0-9_.\-]+):[ \t]*(?P<value>\{.*?)[ \t]*(?P<eol>\r?\n|)\Z", re.S)
_BOM = b"\xef\xbb\xbf"


class MigrateError(ValueError):
    """Nothing to migrate, or the rewrite would not parse to the same data."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Migration:
    path: Path
    original: bytes
    migrated: bytes

    def diff(self) -> str:
        before, after = _display_lines(self.original), _display_lines(self.migrated)
        name = str(self.path)
        return "".join(difflib.unified_diff(before, after, f"a/{name}", f"b/{name}"))


def plan_migration(path: str | os.PathLike, *, flatten: bool = False) -> Migration:
    """Read the SKILL.md at ``path`` (or in that folder) and compute its migration."""
    target = Path(path)
    if target.is_dir():
        target = target / "SKILL.md"
    try:
        original = target.read_bytes()
    except OSError as exc:
        raise MigrateError(f"cannot read {target}: {exc.strerror or exc}", "skill.unreadable") from exc
    return Migration(target, original, flatten_skill_md(original) if flatten else migrate_skill_md(original))


def _split(data: bytes) -> tuple[list[bytes], int]:
    """(the lines with their endings, the index of the closing ``---``) or MigrateError."""
    lines = data.split(b"\n")
    lines = [line + b"\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    if not lines or lines[0].removeprefix(_BOM).rstrip() != b"---":
        raise MigrateError("SKILL.md has no frontmatter", "frontmatter.missing")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == b"---"), None)
    if end is None:
        raise MigrateError("the frontmatter has no closing '---' line", "frontmatter.unclosed")
    return lines, end


def flatten_skill_md(data: bytes) -> bytes:
    """The SKILL.md with its gating blocks' fields directly under ``metadata`` (seed 002)."""
    from skillctl.format.extensions import GATING_BLOCKS
    from skillctl.format.parse import parse_skill_md

    lines, end = _split(data)
    fm = _load(lines[1:end])
    metadata = fm.get("metadata") if isinstance(fm, dict) else None
    blocks = [b for b in GATING_BLOCKS if isinstance(metadata, dict) and isinstance(metadata.get(b), dict)]
    if not blocks or not isinstance(metadata, dict):
        raise MigrateError("no metadata.openclaw (or clawdbot, moltbot) block to flatten", "migrate.nothing_to_do")
    flat = {k: v for k, v in metadata.items() if k not in blocks}
    for block in reversed(blocks):  # the first block read wins, as the parser reads them
        flat.update(metadata[block])
    start = next(i for i in range(1, end) if lines[i].startswith(b"metadata:"))
    stop = next((i for i in range(start + 1, end) if lines[i][:1] not in (b" ", b"\t", b"#") and lines[i].strip()), end)
    eol = b"\r\n" if lines[start].endswith(b"\r\n") else b"\n"
    dumped = yaml.safe_dump(
        {"metadata": flat}, default_flow_style=False, sort_keys=False, allow_unicode=True, width=10_000
    )
    rows = [row.encode("utf-8") + eol for row in dumped.splitlines()]
    result = b"".join([*lines[:start], *rows, *lines[stop:]])
    before, after = parse_skill_md(data).manifest, parse_skill_md(result).manifest
    if before is None or after is None or _gating(before) != _gating(after):
        raise MigrateError("the flattened frontmatter would not give the same manifest", "migrate.unsafe")
    return result


def _gating(manifest) -> dict:
    return {k: v for k, v in manifest.to_dict().items() if k != "metadata"}


def migrate_skill_md(data: bytes) -> bytes:
    """The SKILL.md with inline JSON metadata rewritten as block YAML (raises MigrateError)."""
    lines, end = _split(data)
    old_fm, new_fm, in_metadata = lines[1:end], [], False
    for line in old_fm:
        if line[:1] not in (b" ", b"\t", b"#") and line.strip():
            in_metadata = line.startswith(b"metadata:")
        new_fm += (_rewrite(line) if in_metadata else None) or [line]
    if new_fm == old_fm:
        raise MigrateError("no single-line JSON metadata to migrate", "migrate.nothing_to_do")
    before = _load(old_fm)
    if before is None or _load(new_fm) != before:
        raise MigrateError("the migrated frontmatter would not parse to the same data", "migrate.unsafe")
    new_lines = [lines[0], *new_fm, *lines[end:]]
    return b"".join(new_lines)


def _rewrite(line: bytes) -> list[bytes] | None:
    match = _INLINE.match(line)
    if not match:
        return None
    try:
        value = _flow_value(match["value"].decode("utf-8"))
    except (ValueError, yaml.YAMLError, UnicodeDecodeError):
        return None
    if not isinstance(value, dict) or not value:
        return None
    eol = match["eol"] or b"\n"
    indent = match["indent"].decode() + "  "
    dumped = yaml.safe_dump(value, default_flow_style=False, sort_keys=False, allow_unicode=True, width=10_000)
    block = [(indent + row).encode("utf-8") + eol for row in dumped.splitlines()]
    head = match["indent"] + match["key"] + b":" + eol
    if not match["eol"]:  # the last line of the file had no newline; keep it that way
        block[-1] = block[-1][: -len(eol)]
    return [head, *block]


def _display_lines(data: bytes) -> list[str]:
    """Lines for a diff a terminal can show (the bytes on disk are never decoded this way)."""
    text = data.decode("utf-8", "replace")
    return [line + "\n" for line in text.split("\n")[:-1]] + (
        [text.rsplit("\n", 1)[-1]] if not text.endswith("\n") else []
    )


def _flow_value(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return yaml.safe_load(text)


def _load(lines: list[bytes]):
    text = b"".join(lines).decode("utf-8", "replace").replace("\r\n", "\n")
    block = Frontmatter(raw=text)
    load(block, "SKILL.md")
    return block.data


__all__ = ["MigrateError", "Migration", "flatten_skill_md", "migrate_skill_md", "plan_migration"]
