"""Routing state outside skill folders: recent use, per-session approvals and loaded skills.

A *session* is ``SKILLYARD_SESSION`` when set (agents and tests set it); otherwise the process
that ran skillctl (the parent pid, plus its start time on Linux so a reused pid is a new
session). "a" at the ``--ask`` prompt remembers a skill for that session only.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from skillctl import paths

RECENT_WINDOW_S = 30 * 60  # a skill used in the last half hour is "recent" for routing
MAX_SESSIONS = 50  # old sessions are dropped so the file stays small


def _state_file(name: str) -> Path:
    return paths.state_dir() / "routing" / name


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data), "utf-8")
    tmp.replace(path)


def session_id() -> str:
    if explicit := os.environ.get("SKILLYARD_SESSION"):
        return explicit
    ppid = os.getppid()
    try:  # field 22 of /proc/PID/stat is the start time: pid + start time is unique
        started = Path(f"/proc/{ppid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        started = "0"
    return f"ppid-{ppid}-{started}"


def recent_skills(now: float | None = None) -> frozenset[str]:
    now = time.time() if now is None else now
    used = _read(_state_file("recent.json"))
    return frozenset(n for n, t in used.items() if isinstance(t, int | float) and now - t < RECENT_WINDOW_S)


def record_use(names: list[str], now: float | None = None) -> None:
    if not names:
        return
    now = time.time() if now is None else now
    path = _state_file("recent.json")
    used = {n: t for n, t in _read(path).items() if isinstance(t, int | float) and now - t < RECENT_WINDOW_S}
    used.update(dict.fromkeys(names, now))
    _write(path, used)


def approved_skills(session: str | None = None) -> frozenset[str]:
    return _session_names("skills", session)


def remember_approval(name: str, session: str | None = None) -> None:
    _add_session_names("skills", [name], session)


def loaded_skills(session: str | None = None) -> frozenset[str]:
    """Skills whose instructions an agent hook already gave in this session."""
    return _session_names("loaded", session)


def remember_loaded(names: list[str], session: str | None = None) -> None:
    _add_session_names("loaded", names, session)


def _session_names(key: str, session: str | None) -> frozenset[str]:
    sessions = _read(_state_file("approvals.json"))
    entry = sessions.get(session or session_id(), {})
    return frozenset(entry.get(key, []) if isinstance(entry, dict) else [])


def _add_session_names(key: str, names: list[str], session: str | None) -> None:
    if not names:
        return
    path = _state_file("approvals.json")
    sessions = _read(path)
    sid = session or session_id()
    entry = sessions.pop(sid, {})
    entry = entry if isinstance(entry, dict) else {}
    entry[key] = sorted({*entry.get(key, []), *names})
    entry["updated"] = time.time()
    sessions[sid] = entry  # re-inserted last: the most recent session survives pruning
    _write(path, dict(list(sessions.items())[-MAX_SESSIONS:]))
