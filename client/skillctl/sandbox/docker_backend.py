"""The Docker backend (docker SDK): one short-lived container per run.

``--network none`` always (a run allowed the network reaches it through the egress proxy's
socket: sandbox/egress.py), memory = memory+swap, one CPU, a pids
limit, read-only root, a size-limited tmpfs /tmp, every capability dropped, no-new-privileges,
a non-root user, the skill read-only at /skill and the run's folder at /work (a size-limited
tmpfs the executor mounts when it may: sandbox/workdisk.py). stdout/stderr are
read from an attach stream (capped, no log driver storing a flood). The container is removed in
every path: explicitly in ``finally``, by its own in-container deadline (``timeout -s KILL``) if
the executor dies, and by the janitor, which the labels below let find it.
"""

from __future__ import annotations

import math
import os
import socket
import threading
import time
from functools import lru_cache

from skillctl.sandbox.backend import (
    LABEL,
    SKILL_MOUNT,
    WORK_MOUNT,
    Job,
    RawRun,
    Streams,
    killed_by_sigkill,
)
from skillctl.sandbox.policy import MIB

LOCAL_IMAGE = "skillyard/sandbox-python:3.11"  # built by scripts/sandbox-image.sh
SEED_IMAGE = "python:3.11-slim"  # where pulls work
# Non-root user of the image (scripts/sandbox-image.sh); any uid works with python:3.11-slim.
CONTAINER_UID = 1000
# Seconds the in-container deadline trails the executor's own timeout (the executor kills first).
DEADLINE_GRACE = 5
# Labels: the janitor's key (LABEL), the executor that owns the run, and when it must be over.
OWNER_LABEL = f"{LABEL}.owner"
HOST_LABEL = f"{LABEL}.host"
DEADLINE_LABEL = f"{LABEL}.deadline"
# Seconds to wait for docker to report an OOM kill it has not reported by the exit. The kernel's
# OOM notice and the exit reach the daemon on separate paths; on a loaded machine the exit can come
# first, so a memory bomb would read as a plain SIGKILL ("killed") without this wait.
OOM_REPORT_GRACE = 2.0


@lru_cache(maxsize=1)
def docker_client():
    import docker  # imported here: 0.2 s, and only this backend needs it

    # Pinning the API version skips a round trip to ask the daemon for it (docker 20.10+).
    return docker.from_env(version=os.environ.get("DOCKER_API_VERSION", "1.41"), timeout=30)


def default_image() -> str:
    if env := os.environ.get("SKILLYARD_SANDBOX_IMAGE"):
        return env
    return LOCAL_IMAGE if _image_exists(LOCAL_IMAGE) else SEED_IMAGE


def _image_exists(name: str) -> bool:
    import docker.errors

    try:
        docker_client().images.get(name)
        return True
    except docker.errors.ImageNotFound:
        return False


class DockerBackend:
    name = "docker"

    def __init__(self, image: str | None = None) -> None:
        self._image = image

    def available(self) -> bool:
        return _daemon_answers()

    def host_uid(self) -> int | None:
        # /work is a bind mount: as root we chown it to the container's uid.
        return CONTAINER_UID if os.geteuid() == 0 else None

    def run(self, job: Job) -> RawRun:
        client = docker_client()
        container = client.api.create_container(**self._container_spec(client, job))["Id"]
        created = int(time.time()) - 1  # docker's event log is read with whole seconds
        wake = job.wake
        streams = Streams(job.policy.stream_bytes, wake)
        try:
            sock = client.api.attach_socket(container, params={"stdout": 1, "stderr": 1, "stream": 1})
            streams.start(_demux, sock, streams)
            client.api.start(container)
            exit_box: list[int] = []
            exited = threading.Event()
            threading.Thread(target=_wait, args=(client, container, exit_box, (wake, exited)), daemon=True).start()
            finished = wake.wait(job.policy.timeout_seconds) and exited.is_set()
            if not exited.is_set():
                _kill(client, container)
                exited.wait(10)
            streams.join(5)
            exit_code = exit_box[0] if exit_box else None
            # Only a run that ended itself with SIGKILL can have been OOM-killed unreported.
            oom = _oom_killed(client, container, created, patient=finished and killed_by_sigkill(exit_code))
        finally:
            _remove(client, container)
        return RawRun(
            exit_code=exit_code,
            stdout=streams.stdout,
            stderr=streams.stderr,
            timed_out=not finished and not streams.overflow,
            oom=bool(oom),
            killed=finished and not oom and killed_by_sigkill(exit_code),
        )

    def _container_spec(self, client, job: Job) -> dict:
        policy = job.policy
        deadline = math.ceil(policy.timeout_seconds) + DEADLINE_GRACE
        user = CONTAINER_UID if os.geteuid() == 0 else os.getuid()
        host_config = client.api.create_host_config(
            binds={
                str(job.skill_dir): {"bind": SKILL_MOUNT, "mode": "ro"},
                str(job.work_dir): {"bind": WORK_MOUNT, "mode": "rw"},
            },
            network_mode="none",  # always: network is the egress proxy's socket (sandbox/egress.py)
            mem_limit=_memory_limit(job),
            memswap_limit=_memory_limit(job),
            nano_cpus=int(policy.cpus * 1e9),
            pids_limit=policy.max_processes,
            read_only=True,
            tmpfs={"/tmp": f"rw,nosuid,nodev,size={policy.tmp_size_mb * MIB}"},
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            ulimits=[
                {
                    "Name": "fsize",
                    "Soft": policy.file_size_mb * MIB,
                    "Hard": policy.file_size_mb * MIB,
                },
                {"Name": "nofile", "Soft": 256, "Hard": 256},
                {"Name": "core", "Soft": 0, "Hard": 0},
            ],
            log_config={"Type": "none", "Config": {}},
        )
        return {
            "image": self._image or default_image(),
            "command": ["timeout", "-s", "KILL", str(deadline), *job.command],
            "user": f"{user}:{user}",
            "working_dir": WORK_MOUNT,
            "environment": job.env(),
            "labels": {
                LABEL: job.run_id,
                OWNER_LABEL: job.owner,
                HOST_LABEL: socket.gethostname(),
                DEADLINE_LABEL: str(int(time.time()) + deadline),
            },
            "network_disabled": True,
            "stdin_open": False,
            "hostname": "skillyard",
            "host_config": host_config,
        }


def _memory_limit(job: Job) -> int:
    """The container's memory: the run's own, plus a tmpfs /work's size when there is one. The
    kernel charges tmpfs pages to the cgroup of whoever writes them, so without this a skill
    filling /work would be OOM-killed before /work is full, and never read as ``limits.disk``."""
    return job.policy.memory_bytes + (job.policy.work_size_mb * MIB if job.work_in_memory else 0)


def _demux(sock, streams: Streams) -> None:
    """Read docker's multiplexed attach stream: 8-byte headers (stream id, length), then data."""
    from docker.utils.socket import frames_iter

    try:
        for stream_id, data in frames_iter(sock, tty=False):
            (streams.stderr if stream_id == 2 else streams.stdout).feed(data)
    except OSError:
        pass
    finally:
        sock.close()


def _wait(client, container: str, exit_box: list[int], events: tuple[threading.Event, ...]) -> None:
    try:
        exit_box.append(client.api.wait(container, timeout=None)["StatusCode"])
    except Exception:  # the container vanished (janitor, daemon restart): no exit code
        pass
    for event in events:
        event.set()


def _oom_killed(client, container: str, since: int, *, patient: bool) -> bool:
    """Whether the kernel's OOM killer ended the container: docker's ``OOMKilled`` flag, or the
    container's ``oom`` event. With ``patient``, wait up to OOM_REPORT_GRACE for a late report."""
    deadline = time.monotonic() + (OOM_REPORT_GRACE if patient else 0.0)
    while True:
        if client.api.inspect_container(container)["State"].get("OOMKilled", False):
            return True
        if not patient:
            return False
        # A past ``until`` reads the daemon's event log and returns at once (a future one would block).
        events = client.api.events(
            since=since, until=f"{time.time():.9f}", filters={"container": container, "event": "oom"}, decode=True
        )
        try:
            if any(True for _ in events):
                return True
        finally:
            events.close()  # the HTTP response, when the first event ended the read early
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def _kill(client, container: str) -> None:
    import docker.errors

    try:
        client.api.kill(container, signal="SIGKILL")
    except docker.errors.APIError:
        pass


def _remove(client, container: str) -> None:
    import docker.errors

    try:
        client.api.remove_container(container, force=True)
    except docker.errors.NotFound:
        pass


def _daemon_answers() -> bool:
    try:
        import docker  # noqa: F401
    except ImportError:
        return False
    try:
        return bool(docker_client().ping())
    except Exception:
        return False
