"""The host side of a run's `/work`: a fresh temp folder per run (size-limited:
sandbox/workdisk.py), its outputs, its removal.

The folder's name carries the executor's pid and start time (``skillyard-run-<pid>-<start>-<id>``)
so the janitor can tell a folder whose executor died from one still in use.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillctl.sandbox.errors import SandboxRequestError
from skillctl.sandbox.result import OutputFile
from skillctl.sandbox.workdisk import WorkDisk

PREFIX = "skillyard-run-"
INPUT_FILE = "input.json"
OUTPUT_DIR = "output"


def process_start_time(pid: int) -> str:
    """The kernel's start time of a process (clock ticks since boot), or "" if it is gone.

    With the pid it names one process for good: a recycled pid has another start time.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat_line = f.read().decode()
    except OSError:
        return ""
    return stat_line.rsplit(")", 1)[1].split()[19]


def owner_token() -> str:
    """``<pid>-<start time>`` of this executor process."""
    return f"{os.getpid()}-{process_start_time(os.getpid())}"


def owner_alive(token: str) -> bool:
    pid, _, start = token.partition("-")
    return pid.isdigit() and process_start_time(int(pid)) == start


def temp_root() -> Path:
    return Path(os.environ.get("SKILLYARD_SANDBOX_TMP") or tempfile.gettempdir())


@dataclass
class Workspace:
    root: Path  # the temp folder; removed after the run
    run_id: str
    disk: WorkDisk  # the size limit of work/ (sandbox/workdisk.py)

    @property
    def work(self) -> Path:
        return self.root / "work"  # mounted at /work

    @classmethod
    def create(cls, run_id: str, input_value: Any, *, uid: int | None, size_mb: int) -> Workspace:
        root = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{owner_token()}-", dir=temp_root()))
        ws = cls(root=root, run_id=run_id, disk=WorkDisk(root / "work", size_mb=size_mb))
        try:
            ws.work.mkdir()
            ws.disk.attach(uid=uid)
            ws._fill(input_value, uid=uid)
        except BaseException:
            ws.remove()
            raise
        # Search-only for others: a per-run bwrap uid must reach work/ to bind it, not list.
        os.chmod(root, 0o711)
        return ws

    def _fill(self, input_value: Any, *, uid: int | None) -> None:
        (self.work / OUTPUT_DIR).mkdir()
        try:
            (self.work / INPUT_FILE).write_text(json.dumps(input_value), encoding="utf-8")
        except OSError as err:
            if err.errno != errno.ENOSPC:
                raise
            raise SandboxRequestError(
                "the input does not fit in /work", hint="Give a smaller input, or a bigger --work-size."
            ) from None
        if uid is not None and os.geteuid() == 0:
            for path in (self.work, self.work / OUTPUT_DIR, self.work / INPUT_FILE):
                os.chown(path, uid, uid)

    def copy_skill(self, skill_dir: Path, *, uid: int | None) -> Path:
        """A private copy of the skill for a sandbox uid that may not read the original."""
        target = self.root / "skill"
        shutil.copytree(skill_dir, target, symlinks=True)
        if uid is not None and os.geteuid() == 0:
            for path in (target, *target.rglob("*")):
                os.lchown(path, uid, uid)
        return target

    def remove(self) -> None:
        self.disk.release()
        shutil.rmtree(self.root, ignore_errors=True)

    def collect_outputs(self, *, max_files: int, max_bytes: int, dest: Path | None) -> tuple[list[OutputFile], bool]:
        """Regular files under /work/output, never following a symlink; (files, over a limit)."""
        budget = _Budget(max_files, max_bytes)
        found: list[OutputFile] = []
        _walk(self.work / OUTPUT_DIR, "", found, budget, dest)
        return found, budget.exceeded


@dataclass
class _Budget:
    files: int
    bytes: int
    exceeded: bool = False

    def take(self, size: int) -> bool:
        if self.files <= 0 or size > self.bytes:
            self.exceeded = True
            return False
        self.files -= 1
        self.bytes -= size
        return True


def _walk(folder: Path, rel: str, found: list[OutputFile], budget: _Budget, dest: Path | None) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        path = f"{rel}{entry.name}"
        st = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            _walk(Path(entry.path), path + "/", found, budget, dest)
        elif stat.S_ISLNK(st.st_mode):
            found.append(OutputFile(path=path, size=0, kind="symlink", skipped="symlink"))
        elif not stat.S_ISREG(st.st_mode):
            found.append(OutputFile(path=path, size=0, kind="other", skipped="not a regular file"))
        elif not budget.take(st.st_size):
            found.append(OutputFile(path=path, size=st.st_size, skipped="limit"))
        else:
            found.append(_copy_file(Path(entry.path), path, dest))


def _copy_file(src: Path, rel: str, dest: Path | None) -> OutputFile:
    # O_NOFOLLOW: the final component is checked again at open time, not only at scandir time.
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    digest, size = hashlib.sha256(), 0
    out = None
    if dest is not None:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        out = open(target, "wb")  # noqa: SIM115 - closed below
    try:
        with os.fdopen(fd, "rb") as f:
            while chunk := f.read(1 << 16):
                digest.update(chunk)
                size += len(chunk)
                if out:
                    out.write(chunk)
    finally:
        if out:
            out.close()
    saved = str(dest / rel) if dest is not None else ""
    return OutputFile(path=rel, size=size, sha256=digest.hexdigest(), saved_to=saved)
