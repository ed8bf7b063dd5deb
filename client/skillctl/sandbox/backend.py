"""What every backend receives and returns, and the pieces they share."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from skillctl.sandbox.policy import Policy
from skillctl.sandbox.result import StreamCapture

# Where things are inside every sandbox.
SKILL_MOUNT = "/skill"
WORK_MOUNT = "/work"
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
# Environment strings over ~128 KiB fail exec (MAX_ARG_STRLEN); bigger input is only in the file.
MAX_ENV_INPUT = 64 * 1024
# The label every container carries; the janitor finds leftovers by it.
LABEL = "skillyard"


@dataclass
class Job:
    command: list[str]
    policy: Policy
    skill_dir: Path  # host folder mounted read-only at /skill
    work_dir: Path  # host folder mounted at /work (fresh per run)
    input_value: Any
    run_id: str
    owner: str  # "<pid>-<start time>" of the executor, for the janitor
    host_uid: int | None = None  # the host uid the sandbox runs as (owns work_dir), if chosen
    extra_env: dict[str, str] = field(default_factory=dict)
    work_in_memory: bool = False  # work_dir is a tmpfs (sandbox/workdisk.py): its pages are memory
    # Ends the run early when set: the backend's own wake-up (exit, output over its cap), and
    # the executor's when /work goes over its size (sandbox/workdisk.py).
    wake: threading.Event = field(default_factory=threading.Event)

    def env(self) -> dict[str, str]:
        env = {
            "PATH": SANDBOX_PATH,
            "HOME": "/tmp",
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
            "SKILL_DIR": SKILL_MOUNT,
            "SKILL_INPUT_FILE": f"{WORK_MOUNT}/input.json",
            "SKILL_OUTPUT_DIR": f"{WORK_MOUNT}/output",
            **self.extra_env,
        }
        encoded = json.dumps(self.input_value)
        if len(encoded) <= MAX_ENV_INPUT:
            env["SKILL_INPUT"] = encoded
        return env


@dataclass
class RawRun:
    """What a backend observed; the executor turns it into a RunResult."""

    exit_code: int | None
    stdout: StreamCapture
    stderr: StreamCapture
    timed_out: bool = False
    oom: bool = False
    killed: bool = False  # ended by a signal nobody in the executor sent
    disk_full: bool = False  # /work filled up, or a write failed for want of disk (set by the executor)

    @property
    def output_limited(self) -> bool:
        return self.stdout.truncated or self.stderr.truncated


def killed_by_sigkill(exit_code: int | None) -> bool:
    """Shells, bwrap and docker report a child killed by SIGKILL as 128 + 9."""
    return exit_code == 128 + 9


class Backend(Protocol):
    name: str

    def available(self) -> bool: ...

    def run(self, job: Job) -> RawRun: ...

    def host_uid(self) -> int | None: ...


class Streams:
    """stdout + stderr captures; going over either cap sets ``wake`` (the run is then killed)."""

    def __init__(self, limit: int, wake: threading.Event) -> None:
        self.stdout = StreamCapture(limit, wake.set)
        self.stderr = StreamCapture(limit, wake.set)
        self._threads: list[threading.Thread] = []

    @property
    def overflow(self) -> bool:
        return self.stdout.truncated or self.stderr.truncated

    def pump(self, stream: IO[bytes] | None, capture: StreamCapture) -> None:
        """Read ``stream`` to its end in a thread (the caller joins)."""

        if stream is None:
            return
        read = getattr(stream, "read1", stream.read)  # pipes are buffered readers: read1 returns early

        def loop() -> None:
            while chunk := read(1 << 16):
                capture.feed(chunk)
            stream.close()

        self.start(loop)

    def start(self, target, *args) -> None:
        """Run a reader in a daemon thread that ``join`` waits for."""
        t = threading.Thread(target=target, args=args, daemon=True)
        t.start()
        self._threads.append(t)

    def join(self, timeout: float | None = None) -> None:
        for t in self._threads:
            t.join(timeout)
