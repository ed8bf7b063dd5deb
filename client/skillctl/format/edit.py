"""Small, careful edits of SKILL.md text (the author's file: only the one value changes).

``set_version`` rewrites the version where SKILL.md keeps it: a top-level ``version:`` line, or
``version:`` inside the ``metadata:`` block; with neither, it is added under ``metadata:`` (the
place the specification allows). Quoting and line endings are kept.
"""

from __future__ import annotations

import re

_TOP = re.compile(r"^(version:[ \t]*)(['\"]?)([^'\"\r\n#]*?)\2([ \t]*(?:#.*)?)$", re.M)
_METADATA = re.compile(r"^metadata:[ \t]*(?:#.*)?$", re.M)


class EditError(ValueError):
    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def set_version(text: str, version: str) -> str:
    """SKILL.md text with its version set to ``version``."""
    match = re.match(r"\A(---[ \t]*\r?\n)(.*?)(^---[ \t]*\r?$)", text, re.S | re.M)
    if match is None:
        raise EditError("SKILL.md has no frontmatter to hold a version", "edit.no_frontmatter")
    head, front, tail = match.group(1), match.group(2), text[match.start(3) :]
    eol = "\r\n" if "\r\n" in head else "\n"
    if re.search(r"^metadata:[ \t]*[{\[]", front, re.M):
        raise EditError("the metadata is on one line; run `skillctl migrate` first", "edit.flow_metadata")
    top = _TOP.search(front) is not None
    if top:
        front = _TOP.sub(lambda m: f"{m[1]}{m[2]}{version}{m[2]}{m[4]}", front, count=1)
    if (meta := _METADATA.search(front)) is not None:
        block_end = _block_end(front, meta.end())
        first_child = re.compile(r"^([ \t]+)\S", re.M).search(front, meta.end(), block_end)
        indent = re.escape(first_child.group(1)) if first_child else "  "
        child = re.compile(rf"^({indent}version:[ \t]*)(['\"]?)([^'\"\r\n#]*?)\2([ \t]*(?:#.*)?)$", re.M)
        nested = child.search(front, meta.end(), block_end)
        if nested is not None:
            front = (
                front[: nested.start()]
                + child.sub(
                    lambda m: f"{m[1]}{m[2]}{version}{m[2]}{m[4]}", front[nested.start() : nested.end()], count=1
                )
                + front[nested.end() :]
            )
        elif not top:
            front = front[: meta.end()] + f'{eol}  version: "{version}"' + front[meta.end() :]
    elif not top:
        front = (
            front
            + ("" if front.endswith(("\n", "\r\n")) or not front else eol)
            + f'metadata:{eol}  version: "{version}"{eol}'
        )
    return head + front + tail


def _block_end(front: str, start: int) -> int:
    """Where the indented block after ``start`` ends (the next top-level line)."""
    following = re.compile(r"^\S", re.M).search(front, start + 1)
    return following.start() if following else len(front)
