"""A warm helper process for the Claude Code hook: the model loaded once, not on every prompt.

Claude Code starts ``skillctl hook claude`` afresh for every prompt; with semantic routing most
of its ~0.4 s is loading MiniLM. The first hook answers in-process and starts this helper in
the background; later hooks hand their event to it over a Unix socket and print its answer.
The helper exits after ``idle_seconds`` without a request. Anything wrong with it (none
running, stale socket, crash, slow answer, another skillctl version) and the hook routes
in-process as before: the helper can only make the hook faster, never break it.

The socket lives in the state folder (mode 0700 parent, 0600 socket): only this user reaches it.
Its name carries the skillctl version, so an upgraded skillctl never talks to an old helper.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from skillctl import __version__, paths

if TYPE_CHECKING:
    import socket

IDLE_SECONDS = 600  # a helper nobody asked for 10 minutes exits: memory back, new config read
CONNECT_SECONDS = 0.2  # a live helper accepts at once; longer means it is busy or gone
ANSWER_SECONDS = 10.0  # a warm route takes milliseconds; past this the hook routes itself
MAX_MESSAGE_BYTES = 8 * 1024 * 1024  # an event, its environment, or an answer: never more


def enabled() -> bool:
    return os.environ.get("SKILLYARD_HOOK_HELPER", "1").strip().lower() not in {"0", "false", "no"}


def socket_path() -> Path:
    return paths.state_dir() / "hook" / f"route-{__version__}.sock"


def ask(event_text: str) -> dict | None:
    """The helper's answer ({"output": ...} or {"error": ...}); None when there is none to ask."""
    path = socket_path()
    if not path.exists():
        return None
    import socket  # here, not at the top: ~10 ms of a cold hook that has no helper to ask

    request = json.dumps({"event": event_text, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(CONNECT_SECONDS)
            conn.connect(str(path))
            conn.settimeout(ANSWER_SECONDS)
            conn.sendall(request)
            conn.shutdown(socket.SHUT_WR)
            answer = json.loads(_read_all(conn))
    except (OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) and ("output" in answer or "error" in answer) else None


def start_background() -> None:
    """Start a helper for the next prompts, detached from this process; never raises."""
    import subprocess

    try:
        subprocess.Popen(
            [sys.executable, "-m", "skillctl", "hook", "serve"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass


def serve(handle: Callable[[str], str], *, idle_seconds: float = IDLE_SECONDS) -> int:
    """Answer hook events until ``idle_seconds`` pass without one; 0 when another helper runs."""
    import socket

    from filelock import FileLock, Timeout

    path = socket_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.parent.chmod(0o700)
    try:
        lock = FileLock(str(path.with_suffix(".lock")), timeout=0)
        lock.acquire()
    except Timeout:
        return 0  # one helper per user and version is enough
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
            path.unlink(missing_ok=True)  # we hold the lock: a socket left here is a dead helper's
            old_umask = os.umask(0o177)
            try:
                server.bind(str(path))
            finally:
                os.umask(old_umask)
            server.listen(8)
            server.settimeout(idle_seconds)
            _loop(server, handle)
    finally:
        path.unlink(missing_ok=True)
        lock.release()
    return 0


def _loop(server: socket.socket, handle: Callable[[str], str]) -> None:
    while True:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            return
        with conn:
            conn.settimeout(ANSWER_SECONDS)
            try:
                request = json.loads(_read_all(conn))
                conn.sendall(json.dumps(_answer(request, handle)).encode())
            except (OSError, ValueError):
                continue  # a client that went away or sent junk: the next one is served


def _answer(request: dict, handle: Callable[[str], str]) -> dict:
    """Route one event in the caller's environment and folder, as the hook itself would."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    try:
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in dict(request.get("env") or {}).items()})
        os.chdir(str(request.get("cwd") or saved_cwd))
        return {"output": handle(str(request["event"]))}
    except Exception as exc:  # noqa: BLE001 - reported to the hook, which never blocks the prompt
        return {"error": str(exc) or type(exc).__name__}
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)


def _read_all(conn: socket.socket) -> bytes:
    chunks, size = [], 0
    while chunk := conn.recv(65536):
        size += len(chunk)
        if size > MAX_MESSAGE_BYTES:
            raise ValueError("message over the limit")
        chunks.append(chunk)
    return b"".join(chunks)
