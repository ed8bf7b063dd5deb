"""A skill's ``mcp`` block: the MCP server an agent starts when the skill is loaded.

Forms read (docs/skill-fields.md):

- ``mcp: python3 server.py`` and ``command: "npx -y @pkg/server"`` (seed 003): one string is a
  command line, split shell-style; ``args`` given beside it come after its words;
- ``command: [npx, -y, "@pkg/server"]``, or ``command`` plus ``args`` (ours, Claude Code's);
- ``url``/``server`` for a remote server (never started by skillctl).

``startup_timeout`` and ``idle_timeout`` take a duration with its unit (``500ms``, ``30s``,
``5m``, ``1h``); a bare number is seconds. Seed 003 counted ``idle_timeout`` in minutes, so a
bare idle timeout below :data:`AMBIGUOUS_IDLE_BELOW_S` warns (``mcp.timeout_unit``): the skill
works either way, but ``10`` would stop its server after 10 s where the author meant 10 min.

Whether this machine has the command is not the format's question (the registry validating an
archive is rarely the machine that runs it, and a verdict must not depend on the host's PATH):
``skillctl validate`` asks it (:func:`missing_command`, ``mcp.command_not_found``).
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Callable
from typing import Any

from skillctl.format.coerce import Reader, first
from skillctl.format.findings import Finding, warning
from skillctl.format.manifest import McpSpec

# Seed 003 wrote idle_timeout in minutes (default 5, examples 10 and 15): a bare number under a
# minute is as plausible in either unit, so the author is asked to say which.
AMBIGUOUS_IDLE_BELOW_S = 60
UNITS_S = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)


def read_mcp(value: Any, path: str, soft: bool, r: Reader) -> McpSpec | None:
    """The typed block, or None when the skill declares no server."""
    if value is None:
        return None
    if isinstance(value, str):  # shorthand: the whole block is a command line
        words = command_words(value)
        return McpSpec(command=words[0] if words else "", args=words[1:])
    block = r.mapping(value, path, soft=soft)
    if not block:
        return None
    command, args = _command(block, path, soft, r)
    env = r.mapping(block.get("env"), f"{path}.env", soft=soft)
    url, _ = first([block], "url", "server")
    spec = McpSpec(
        command=command,
        args=args,
        url=r.text(url, f"{path}.url", soft=soft),
        transport=r.text(block.get("transport"), f"{path}.transport", soft=soft),
        env={str(k): "" if v is None else str(v) for k, v in env.items()},
        startup_timeout=_duration(block, ("startup_timeout", "startupTimeout", "startup_timeout_sec"), path, soft, r),
        idle_timeout=_duration(block, ("idle_timeout", "idleTimeout", "idle_timeout_sec"), path, soft, r),
    )
    return spec


def command_words(line: str) -> list[str]:
    """A command line split as a POSIX shell would (quotes kept together); on unbalanced quotes,
    split on whitespace."""
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def _command(block: dict, path: str, soft: bool, r: Reader) -> tuple[str, list[str]]:
    command = block.get("command")
    args = r.strings(block.get("args"), f"{path}.args", soft=soft, split="")
    if isinstance(command, list):
        words = r.strings(command, f"{path}.command", soft=soft, split="")
    else:
        words = command_words(r.text(command, f"{path}.command", soft=soft))
    return (words[0] if words else ""), words[1:] + args


def _duration(block: dict, keys: tuple[str, ...], path: str, soft: bool, r: Reader) -> float | None:
    """Seconds, from a number (seconds) or a string with a unit; None when absent or unreadable."""
    value, key = first([block], *keys)
    if value is None:
        return None
    where = f"{path}.{key}"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        r.type_error(where, "a duration such as 30s or 5m", value, soft=soft)
        return None
    match = _DURATION.match(str(value))
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in UNITS_S | {"": 1.0}:
        r.type_error(where, "a duration: a number of seconds, or 500ms, 30s, 5m, 1h", value, soft=soft)
        return None
    seconds = float(match.group(1)) * UNITS_S.get(unit, 1.0)
    if not unit and key.startswith("idle") and seconds < AMBIGUOUS_IDLE_BELOW_S:
        r.findings.append(
            warning(
                "mcp.timeout_unit",
                f"{where}: {value} is read as {seconds:g} seconds; seed 003 skills meant minutes. "
                f"Write {value}s or {value}m",
                r.where(where),
            )
        )
    return seconds


def missing_command(spec: McpSpec | None, *, which: Callable[[str], str | None] = shutil.which) -> Finding | None:
    """A warning when the block's bare command name is not on this machine's PATH (a path,
    ``./server.sh`` or ``bin/x``, is the skill's own file: the trust digest covers it). For
    ``skillctl validate`` on the machine that will run the skill, never the registry's verdict."""
    command = spec.command if spec is not None else ""
    if not command or "/" in command or "\\" in command or "$" in command or which(command) is not None:
        return None
    return warning(
        "mcp.command_not_found",
        f"mcp.command {command!r} is not on this machine's PATH: its server cannot start here",
        "mcp.command",
    )
