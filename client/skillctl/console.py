"""All terminal output goes through here: data to stdout, messages to stderr.

Colour is off when ``NO_COLOR`` is set (any value) or the stream is not a terminal; output must
read well without it. ``rich`` is imported only when something fancy (a table, a progress bar)
is actually drawn, to keep start-up fast.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

_STYLES = {"error": "31;1", "warning": "33", "success": "32", "hint": "36", "dim": "2"}


def color_enabled(stream: TextIO) -> bool:
    if "NO_COLOR" in os.environ:
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def _style(text: str, style: str, stream: TextIO) -> str:
    if not color_enabled(stream) or style not in _STYLES:
        return text
    return f"\x1b[{_STYLES[style]}m{text}\x1b[0m"


def out(text: str = "") -> None:
    """Data for the user or for a pipe: stdout."""
    sys.stdout.write(text + "\n")


def out_json(data: Any, *, compact: bool = False) -> None:
    """One JSON document on stdout (``compact`` = one line, for JSON-lines output)."""
    if compact:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")
    else:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def plural(count: int, noun: str, plural_form: str = "") -> str:
    """``1 error``, ``2 errors``."""
    return f"{count} {noun if count == 1 else (plural_form or noun + 's')}"


def info(text: str) -> None:
    sys.stderr.write(text + "\n")


def success(text: str) -> None:
    sys.stderr.write(_style(text, "success", sys.stderr) + "\n")


def warn(text: str) -> None:
    sys.stderr.write(_style("warning:", "warning", sys.stderr) + " " + text + "\n")


def error(text: str, hint: str | None = None) -> None:
    sys.stderr.write(_style("error:", "error", sys.stderr) + " " + text + "\n")
    if hint:
        sys.stderr.write(_style("hint:", "hint", sys.stderr) + " " + hint + "\n")


def rich_console(stderr: bool = False):
    """A rich Console honouring NO_COLOR, for tables and progress bars."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(file=stream, no_color="NO_COLOR" in os.environ, highlight=False, soft_wrap=True)


def table(columns: list[str], rows: list[list[Any]], *, title: str | None = None) -> None:
    """A plain, aligned table on stdout (readable without colour, stable for pipes)."""
    if not rows:
        return
    cells = [[str(c) for c in columns]] + [["" if v is None else str(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    if title:
        out(title)
    for i, row in enumerate(cells):
        line = "  ".join(v.ljust(widths[j]) for j, v in enumerate(row)).rstrip()
        out(_style(line, "dim", sys.stdout) if i == 0 and color_enabled(sys.stdout) else line)
