"""The tests check's engine: the skill's own tests in the Docker sandbox (DESIGN §8, §9).

``runtime.test``, else ``python3 -m unittest discover -s tests`` when ``tests/`` exists, else
nothing to run (result ``none``). No network, the sandbox's limits, a hard timeout; the result
keeps the exit code, the duration and the last 64 KiB of output. No Docker daemon is an error
the check records with its reason, never a hang.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from skillctl.format import extract_archive, load_archive
from skillctl.sandbox import HostCaps, RunRequest, Status, run_skill
from skillctl.sandbox.runner import test_command

LOG_TAIL_BYTES = 64 * 1024  # what the version page shows: the end of the log says what failed
# A test suite may take longer than a tool run, but a check must end: 5 minutes, hard. /work
# keeps the sandbox's 256 MiB (HostCaps.work_size_mb): a test that writes more ends limits.disk.
CAPS = HostCaps(default_timeout_seconds=300, max_timeout_seconds=300, default_memory_mb=512)


def run_tests(*, archive: bytes, digest: str, backend: str = "docker", caps: HostCaps = CAPS) -> dict:
    report = load_archive(archive)
    runtime = report.manifest.runtime if report.manifest else None
    with tempfile.TemporaryDirectory(prefix="skillyard-tests-") as tmp:
        Path(tmp).chmod(0o755)
        folder = extract_archive(archive, Path(tmp) / "skill")
        command = test_command(runtime, folder)
        if command is None:
            return {"result": "none", "exit_code": None, "duration_ms": 0, "log": ""}
        run = run_skill(RunRequest(skill_dir=folder, runtime=runtime, command=command, backend=backend, caps=caps))
    log = (run.stdout + run.stderr).encode()[-LOG_TAIL_BYTES:].decode("utf-8", "replace")
    extra = {}
    if run.status is Status.OK:
        result = "passed"
    elif run.status is Status.ERROR:
        result = "failed"
    else:
        # timeout, oom, output_limit, killed, limits.disk: the sandbox's limit ended the run, which
        # is not a verdict on the tests; ``reason`` names it (limits.disk: /work, 256 MiB, filled).
        result, extra = "error", {"reason": run.status.value}
        log += f"\n[skillyard: the test run ended with {run.status.value}]"
    return {"result": result, "exit_code": run.exit_code, "duration_ms": run.duration_ms, "log": log, **extra}
