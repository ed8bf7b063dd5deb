"""Removes what runs left behind when their executor died (SIGKILL, OOM killer, power loss).

A run normally cleans up after itself. When its executor is gone, this finds the leftovers:
containers labelled ``skillyard`` whose deadline has passed or whose executor (pid + start
time, on this host) no longer exists, and ``skillyard-run-*`` temp folders of dead executors.
bubblewrap runs need nothing here: ``--die-with-parent`` and the pid namespace end them with
their executor. Each executor sweeps once when it first runs a skill; the worker can sweep
periodically.
"""

from __future__ import annotations

import shutil
import socket
import time
from dataclasses import dataclass, field
from functools import cache

from skillctl.sandbox.backend import LABEL
from skillctl.sandbox.workdisk import unmount
from skillctl.sandbox.workspace import PREFIX, owner_alive, temp_root


@dataclass
class SweepReport:
    containers: list[str] = field(default_factory=list)
    temp_dirs: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"containers": self.containers, "temp_dirs": self.temp_dirs}


def sweep(*, docker: bool = True) -> SweepReport:
    report = SweepReport(temp_dirs=sweep_temp_dirs())
    if docker:
        report.containers = sweep_containers()
    return report


@cache
def sweep_once(backend_name: str) -> None:
    """The per-process sweep a run does before its first skill (cheap: one list call)."""
    sweep(docker=backend_name == "docker")


def sweep_temp_dirs() -> list[str]:
    removed = []
    for folder in temp_root().glob(f"{PREFIX}*"):
        owner = "-".join(folder.name[len(PREFIX) :].split("-")[:2])
        if folder.is_dir() and not owner_alive(owner):
            unmount(folder / "work")  # a dead root executor's /work tmpfs (sandbox/workdisk.py)
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(str(folder))
    return removed


def sweep_containers() -> list[str]:
    from skillctl.sandbox.docker_backend import (
        DEADLINE_LABEL,
        HOST_LABEL,
        OWNER_LABEL,
        _daemon_answers,
        _remove,
        docker_client,
    )

    if not _daemon_answers():
        return []
    client = docker_client()
    removed = []
    for info in client.api.containers(all=True, filters={"label": LABEL}):
        labels = info.get("Labels") or {}
        expired = int(labels.get(DEADLINE_LABEL, "0") or 0) < time.time()
        orphaned = labels.get(HOST_LABEL) == socket.gethostname() and not owner_alive(labels.get(OWNER_LABEL, ""))
        if expired or orphaned:
            _remove(client, info["Id"])
            removed.append(info["Id"][:12])
    return removed
