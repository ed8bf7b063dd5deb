"""The bubblewrap backend: namespaces + rlimits, for machines without a Docker daemon.

Isolation: every namespace unshared, the network always (a run allowed the network reaches it
through the egress proxy's socket: sandbox/egress.py), a user
namespace with further user namespaces disabled, a pid namespace whose init takes every process
of the run with it, ``--die-with-parent`` and ``--new-session``. The host's /usr (and the
/bin, /lib... links to it) is bound read-only, the skill read-only at /skill, the run's folder
at /work, a size-limited tmpfs at /tmp, a synthetic /etc, and the root is then remounted read-only.

Limits are rlimits: RLIMIT_DATA (memory: every private writable mapping, which is what malloc,
Python and V8's heap allocate), RLIMIT_AS (address space: the memory limit plus room for what
runtimes reserve but never touch, and a bound on shared mappings, which DATA does not count),
RLIMIT_NPROC (processes and threads), RLIMIT_FSIZE, RLIMIT_CPU (a backstop behind the
wall-clock timeout), RLIMIT_NOFILE, no core files.

Never root inside: started as root, the executor first switches to a fresh unprivileged uid
(one per run, from a reserved range, so RLIMIT_NPROC counts exactly this run's processes) and
runs bwrap unprivileged from there.
"""

from __future__ import annotations

import ctypes
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import threading
import time
from functools import lru_cache
from pathlib import Path

from skillctl.sandbox.backend import (
    SKILL_MOUNT,
    WORK_MOUNT,
    Job,
    RawRun,
    Streams,
    killed_by_sigkill,
)
from skillctl.sandbox.policy import MIB, Policy

# Host uids for runs started as root: far above any distribution's user range.
UID_BASE = 2_100_000_000
UID_SPAN = 1_000_000
# The uid/gid the skill sees inside the user namespace (same as the docker image's user).
INSIDE_UID = 1000
# bwrap's own processes (monitor, pid-1 reaper) also count against RLIMIT_NPROC.
BWRAP_PROCESSES = 3
PR_SET_NO_NEW_PRIVS = 38
# Host paths that make up a minimal root: bound read-only, or recreated as the same symlink.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# TLS trust for a run with network (names are resolved by the egress proxy: no resolv.conf).
NETWORK_ETC = ("ssl", "ca-certificates")
# Address space beyond the memory limit: node (V8) reserves ~1 GiB of address space at start-up
# that it never backs with memory, and dies of SIGTRAP under RLIMIT_AS alone below that.
ADDRESS_SPACE_HEADROOM = 2048 * MIB
# A Python MemoryError or a failed allocation (C, C++, V8) means the run hit its memory limit.
OOM_MARKERS = (
    "MemoryError",
    "Cannot allocate memory",
    "std::bad_alloc",
    "Fatal process out of memory",
    "JavaScript heap out of memory",
    "Array buffer allocation failed",
)


class BwrapBackend:
    name = "bwrap"

    def available(self) -> bool:
        return _probe()

    def host_uid(self) -> int | None:
        """A fresh uid for this run when started as root; None (stay ourselves) otherwise."""
        return _free_uid() if os.geteuid() == 0 else None

    def run(self, job: Job) -> RawRun:
        etc = _write_etc(job.work_dir.parent / "etc")
        wake = job.wake
        streams = Streams(job.policy.stream_bytes, wake)
        with _InfoPipe() as info:
            proc = subprocess.Popen(
                bwrap_args(job, etc, info.write_fd),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=(info.write_fd,),
                preexec_fn=_drop_privileges(job.policy, job.host_uid),
            )
            info.close_write_end()
            streams.pump(proc.stdout, streams.stdout)
            streams.pump(proc.stderr, streams.stderr)

            def reap() -> None:
                proc.wait()
                wake.set()

            threading.Thread(target=reap, daemon=True).start()
            finished = wake.wait(job.policy.timeout_seconds) and proc.poll() is not None
            if proc.poll() is None:
                _kill(proc)
            exit_code = proc.wait()
            _reap_namespace(info.sandbox_init_pid())
        streams.join()
        oom = exit_code != 0 and any(m in streams.stderr.text() for m in OOM_MARKERS)
        return RawRun(
            exit_code=exit_code,
            stdout=streams.stdout,
            stderr=streams.stderr,
            timed_out=not finished and not streams.overflow,
            oom=oom,
            killed=finished and (exit_code < 0 or killed_by_sigkill(exit_code)),
        )


class _InfoPipe:
    """bwrap's --info-fd: it writes {"child-pid": N}, the host pid of the sandbox's pid 1."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self._info = b""

    def close_write_end(self) -> None:
        os.close(self.write_fd)
        self.write_fd = -1

    def sandbox_init_pid(self) -> int | None:
        while chunk := os.read(self.read_fd, 4096):
            self._info += chunk
        try:
            return int(json.loads(self._info or b"{}").get("child-pid") or 0) or None
        except ValueError:
            return None

    def __enter__(self) -> _InfoPipe:
        return self

    def __exit__(self, *exc) -> None:
        for fd in (self.read_fd, self.write_fd):
            if fd >= 0:
                os.close(fd)


def bwrap_args(job: Job, etc: Path, info_fd: int) -> list[str]:
    args = [
        "bwrap",
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--info-fd",
        str(info_fd),
    ]
    args += ["--die-with-parent", "--new-session", "--hostname", "skillyard"]
    args += ["--uid", str(INSIDE_UID), "--gid", str(INSIDE_UID)]
    args += _system_mounts()
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--size", str(job.policy.tmp_size_mb * MIB), "--tmpfs", "/tmp"]
    args += ["--ro-bind", str(etc), "/etc"]
    if job.policy.network:
        # Mount points exist in the synthetic /etc (_write_etc): bwrap cannot create them once
        # /etc is read-only, which is how binding /etc/resolv.conf once failed.
        for name in NETWORK_ETC:
            if os.path.isdir(f"/etc/{name}"):
                args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    args += ["--ro-bind", str(job.skill_dir), SKILL_MOUNT]
    args += ["--bind", str(job.work_dir), WORK_MOUNT]
    args += ["--remount-ro", "/", "--chdir", WORK_MOUNT, "--clearenv"]
    for key, value in job.env().items():
        args += ["--setenv", key, value]
    return [*args, "--", *job.command]


@lru_cache(maxsize=1)
def _system_mounts() -> tuple[str, ...]:
    args: list[str] = []
    for path in SYSTEM_PATHS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return tuple(args)


def _write_etc(etc: Path) -> Path:
    """A synthetic /etc: the sandbox user and nothing of the host's (no shadow, no hostnames)."""
    etc.mkdir(exist_ok=True)
    for name in NETWORK_ETC:
        (etc / name).mkdir(exist_ok=True)
    (etc / "passwd").write_text(
        f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
        f"sandbox:x:{INSIDE_UID}:{INSIDE_UID}:sandbox:/tmp:/usr/sbin/nologin\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )
    (etc / "group").write_text(f"root:x:0:\nsandbox:x:{INSIDE_UID}:\nnogroup:x:65534:\n")
    (etc / "hostname").write_text("skillyard\n")
    etc.chmod(0o755)
    return etc


def _drop_privileges(policy: Policy, uid: int | None):
    """The preexec function: rlimits, then (as root) the switch to the run's own uid."""
    nproc = policy.max_processes + BWRAP_PROCESSES
    if uid is None:
        # Unprivileged: RLIMIT_NPROC counts all our processes, so allow what we already have.
        nproc += _process_count(os.getuid())
    limits = {
        resource.RLIMIT_AS: policy.memory_bytes + ADDRESS_SPACE_HEADROOM,
        resource.RLIMIT_DATA: policy.memory_bytes,
        resource.RLIMIT_NPROC: nproc,
        resource.RLIMIT_FSIZE: policy.file_size_mb * MIB,
        resource.RLIMIT_CPU: policy.cpu_seconds,
        resource.RLIMIT_NOFILE: 256,
        resource.RLIMIT_CORE: 0,
    }
    libc = ctypes.CDLL(None, use_errno=True)

    def preexec() -> None:
        for key, value in limits.items():
            resource.setrlimit(key, (value, value))
        if uid is not None:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)

    return preexec


def _kill(proc: subprocess.Popen) -> None:
    # bwrap leads its own session; its pid-1 dies with it (--die-with-parent), and with that
    # pid namespace's init goes every process the skill started, daemonised or not.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _reap_namespace(init_pid: int | None) -> None:
    """Make sure the sandbox's pid 1 (and so its whole pid namespace) is gone before we return.

    bwrap's outer process can exit a moment before the namespace's init has died with it.
    """
    if init_pid is None:
        return
    try:
        os.kill(init_pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + 5
    while _alive(init_pid) and time.monotonic() < deadline:
        time.sleep(0.005)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def _process_count(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                pass
    return count


def _free_uid() -> int:
    for _ in range(16):
        uid = UID_BASE + random.randrange(UID_SPAN)
        if _process_count(uid) == 0:
            return uid
    raise RuntimeError("no free sandbox uid found")


@lru_cache(maxsize=1)
def _probe() -> bool:
    """Can bwrap build this sandbox here (installed, user namespaces allowed)?"""
    if not shutil.which("bwrap"):
        return False
    args = ["bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent"]
    args += [*_system_mounts(), "--", "true"]
    uid = _free_uid() if os.geteuid() == 0 else None

    def preexec() -> None:
        if uid is not None:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)

    try:
        return subprocess.run(args, preexec_fn=preexec, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
