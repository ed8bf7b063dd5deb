"""The janitor: when an executor is SIGKILLed mid-run, what it left is found and removed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from skillctl.sandbox import janitor
from skillctl.sandbox.workspace import PREFIX, process_start_time, temp_root

# serial: the janitor sweeps the whole host. Run beside other tests, it would also remove (and
# count) the containers their killed registries and Celery workers left, and their executors'
# own first sweep could remove this test's leftover before it looks.
pytestmark = [pytest.mark.sandbox, pytest.mark.serial]

EXECUTOR = textwrap.dedent("""
    import sys
    from skillctl.format import RuntimeSpec
    from skillctl.sandbox import RunRequest, run_skill
    run_skill(RunRequest(skill_dir=sys.argv[1], runtime=RuntimeSpec(entrypoint="scripts/main.py"),
                         backend=sys.argv[2], timeout_seconds=60, env={"SKILLYARD_SUITE": sys.argv[3]}))
""")


def _wait_for(check, seconds: float = 15.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def _containers(owner: str, *, running: bool = False) -> list[str]:
    args = ["docker", "ps", "-q", "--filter", f"label=skillyard.owner={owner}"]
    out = subprocess.run(args if running else [*args, "-a"], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_janitor_cleans_up_after_a_killed_executor(
    backend, tmp_path, suite_token, sandbox_processes, make_payload_skill
):
    skill = make_payload_skill(tmp_path / "sleeper", "import time; time.sleep(600)\n")
    executor = subprocess.Popen([sys.executable, "-c", EXECUTOR, str(skill), backend, suite_token])
    owner = _wait_for(lambda: process_start_time(executor.pid) and f"{executor.pid}-{process_start_time(executor.pid)}")
    folder = _wait_for(lambda: list(temp_root().glob(f"{PREFIX}{owner}-*")))[0]
    if backend == "docker":
        _wait_for(lambda: _containers(owner, running=True))
    else:
        _wait_for(sandbox_processes)

    os.kill(executor.pid, signal.SIGKILL)
    executor.wait()
    report = janitor.sweep(docker=backend == "docker")

    assert str(folder) in report.temp_dirs and not folder.exists()
    if backend == "docker":
        assert len(report.containers) == 1
        assert _containers(owner) == []
    # bwrap runs die with their executor (--die-with-parent, pid namespace)
    _wait_for(lambda: not sandbox_processes(), seconds=5)
