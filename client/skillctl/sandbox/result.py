"""What a run gives back (the `skillctl run --json` object), and the capped stream buffer."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from enum import StrEnum


class Status(StrEnum):
    OK = "ok"  # exit code 0
    ERROR = "error"  # the skill exited non-zero
    TIMEOUT = "timeout"  # the wall-clock limit passed; everything the skill started was killed
    OOM = "oom"  # the memory limit was hit
    OUTPUT_LIMIT = "output_limit"  # stdout, stderr or /work/output went over its cap
    # /work went over its size (HostCaps.work_size_mb), or a write failed for want of disk
    # (ENOSPC in /work or /tmp, EFBIG past the file size limit); named as the limit it hit.
    DISK_LIMIT = "limits.disk"
    KILLED = "killed"  # ended by a signal we did not send (or the sandbox vanished)


@dataclass
class OutputFile:
    path: str  # relative to /work/output
    size: int
    sha256: str = ""
    kind: str = "file"  # file | symlink | other (only files are collected)
    skipped: str = ""  # why it was not collected: "symlink", "not a regular file", "limit"
    saved_to: str = ""  # host path when the request had an output_dir

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v != "" or k in ("path", "kind")}


@dataclass
class RunResult:
    status: Status
    exit_code: int | None
    stdout: str
    stderr: str
    duration_ms: int
    backend: str
    outputs: list[OutputFile] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    def to_dict(self) -> dict:
        return {
            "status": self.status.value,
            "exit_code": self.exit_code,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "duration_ms": self.duration_ms,
            "backend": self.backend,
            "outputs": [o.to_dict() for o in self.outputs],
        }


def truncation_marker(limit: int) -> str:
    return f"\n[skillyard: output truncated after {limit} bytes]\n"


class StreamCapture:
    """Keeps the first ``limit`` bytes of a stream; ``on_overflow`` fires once past it."""

    def __init__(self, limit: int, on_overflow=None) -> None:
        self.limit = limit
        self.on_overflow = on_overflow
        self.truncated = False
        self._chunks: list[bytes] = []
        self._size = 0
        self._lock = threading.Lock()

    def feed(self, data: bytes) -> None:
        with self._lock:
            room = self.limit - self._size
            if room > 0:
                self._chunks.append(data[:room])
                self._size += min(room, len(data))
            if len(data) > room and not self.truncated:
                self.truncated = True
                if self.on_overflow:
                    self.on_overflow()

    def text(self) -> str:
        with self._lock:
            body = b"".join(self._chunks).decode("utf-8", errors="replace")
        return body + truncation_marker(self.limit) if self.truncated else body
