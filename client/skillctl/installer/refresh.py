"""Git sources that refresh on a schedule (seed 002's ``refresh: 24h``).

A git source in skills.toml may say how often it wants new commits::

    [skills.team-notes]
    git = "https://git.example.com/team/skills.git"
    refresh = "24h"          # s, m, h or d

``skillctl update --due`` updates exactly the git sources whose interval has passed since their
last refresh (recorded in the state dir, per skills.lock) and records the time; a cron entry or
a systemd timer running it is the schedule. Nothing refreshes by itself inside an agent: new
commits change the instructions a model reads, so they arrive when the user's own schedule says,
through the same update (local edits refused, MCP commands and skill toolsets untrusted again
when their files changed).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Mapping
from pathlib import Path

from skillctl import fileio, paths
from skillctl.errors import UsageError

_INTERVAL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MIN_INTERVAL_S = 60  # a git host is not polled more often than once a minute


def interval_seconds(text: str) -> float:
    """``"24h"`` -> 86400.0 (UsageError update.bad_refresh for anything else)."""
    match = _INTERVAL.match(str(text))
    if not match or float(match.group(1)) * _UNIT_SECONDS[match.group(2)] < MIN_INTERVAL_S:
        raise UsageError(
            f"refresh = {text!r} is not an interval of at least a minute",
            hint='Write a number and a unit: refresh = "24h" (s, m, h or d).',
            code="update.bad_refresh",
        )
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2)]


def _record_path(lock_path: Path) -> Path:
    key = hashlib.sha256(str(lock_path.resolve()).encode()).hexdigest()[:24]
    return paths.state_dir() / "refresh" / f"{key}.json"


def last_refreshed(lock_path: Path) -> dict[str, float]:
    try:
        data = json.loads(_record_path(lock_path).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


def due(sources: Mapping[str, dict], lock_path: Path, *, now: float | None = None) -> list[str]:
    """The skills whose git source has a ``refresh`` interval that has passed, sorted."""
    now = time.time() if now is None else now
    last = last_refreshed(lock_path)
    return sorted(
        name
        for name, source in sources.items()
        if source.get("git")
        and source.get("refresh")
        and now - last.get(name, 0) >= interval_seconds(source["refresh"])
    )


def record(names: list[str], lock_path: Path, *, now: float | None = None) -> None:
    """Remember that ``names`` were refreshed now."""
    stamps = {**last_refreshed(lock_path), **dict.fromkeys(names, time.time() if now is None else now)}
    fileio.atomic_write(_record_path(lock_path), json.dumps(stamps, sort_keys=True))
