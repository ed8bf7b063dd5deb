"""Fixtures of the sandbox suite: a runner per backend, payload skills, and the after-check.

Every test here runs with small limits (a 3 s timeout, 64 MiB) so the whole suite stays fast.
At the end of the session nothing may be left: no container labelled ``skillyard``, no run
folder, no process of a run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from skillctl.format import RuntimeSpec
from skillctl.sandbox import HostCaps, RunRequest, run_skill
from skillctl.sandbox.bwrap_backend import UID_BASE, UID_SPAN, BwrapBackend
from skillctl.sandbox.workspace import owner_token
from tests.conftest import docker_daemon_ok, require_service

# Small on purpose: every limit in the suite is hit within a second or two.
SUITE_CAPS = HostCaps(
    default_timeout_seconds=3,
    default_memory_mb=64,
    max_processes=32,
    max_file_size_mb=4,
    tmp_size_mb=8,
    work_size_mb=16,
    max_stream_bytes=64 * 1024,
    max_output_files=10,
    max_output_bytes=1024 * 1024,
)

# Printed first by every payload, so a test knows the payload really ran before its attack.
PRELUDE = """\
import json, os, sys
print("started", flush=True)
def report(**values):
    print(json.dumps(values), flush=True)
def attempt(action):
    try:
        return "ok:" + str(action())[:200]
    except BaseException as err:
        return "denied:" + type(err).__name__
"""


@pytest.fixture(scope="session", autouse=True)
def sandbox_tmp() -> Path:
    """Run folders go to a folder of this session, so the after-check sees only ours.

    Not under pytest's tmp_path: that is 0700, and a per-run bwrap uid must traverse the path.
    """
    folder = Path(tempfile.mkdtemp(prefix="skillyard-suite-"))
    os.chmod(folder, 0o711)
    old = os.environ.get("SKILLYARD_SANDBOX_TMP")
    os.environ["SKILLYARD_SANDBOX_TMP"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("SKILLYARD_SANDBOX_TMP", None)
    else:
        os.environ["SKILLYARD_SANDBOX_TMP"] = old
    try:
        assert_nothing_left(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def assert_nothing_left(folder: Path) -> None:
    leftovers = sorted(p.name for p in folder.iterdir())
    assert leftovers == [], f"run folders left behind: {leftovers}"
    deadline = time.monotonic() + 2  # zombies of exited runs are reaped by the host's init
    while sandbox_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    left = {pid: _describe(pid) for pid in sandbox_processes()}
    assert left == {}, "processes of sandbox runs are still alive"
    if docker_daemon_ok():
        assert labelled_containers() == [], "containers labelled skillyard are left"


def _ours(pid: str) -> bool:
    try:
        return SUITE_TOKEN.encode() in Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False


def _zombie(pid: str) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except OSError:
        return True


def _describe(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat[: stat.index(")") + 3] + " " + Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return "gone"


# Other test sessions may run sandboxes at the same time: only runs of this session count.
SUITE_TOKEN = f"suite-{uuid.uuid4().hex}"


def labelled_containers() -> list[str]:
    """Containers with the skillyard label that this session's executor owns."""
    owner = f"label=skillyard.owner={owner_token()}"
    out = subprocess.run(
        ["docker", "ps", "-aq", "--filter", "label=skillyard", "--filter", owner],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def sandbox_processes() -> list[int]:
    """Live host processes owned by a per-run bwrap uid (zombies wait for the host's init)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                uid = entry.stat().st_uid
            except OSError:
                continue
            if UID_BASE <= uid < UID_BASE + UID_SPAN and not _zombie(entry.name) and _ours(entry.name):
                found.append(int(entry.name))
    return found


def host_processes_with(token: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if token.encode() in Path(entry.path, "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.fixture(scope="session")
def bwrap_available() -> None:
    require_service("bubblewrap", BwrapBackend().available(), "apt-get install bubblewrap; user namespaces enabled")


@pytest.fixture(params=["docker", "bwrap"])
def backend(request) -> str:
    request.getfixturevalue("docker_daemon" if request.param == "docker" else "bwrap_available")
    return request.param


def make_skill(folder: Path, code: str, *, prelude: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text("---\nname: payload\ndescription: a payload\n---\n")
    (folder / "scripts").mkdir(exist_ok=True)
    body = (PRELUDE if prelude else "") + textwrap.dedent(code)
    (folder / "scripts" / "main.py").write_text(body)
    return folder


@pytest.fixture
def run_payload(backend, tmp_path):
    """run_payload(code, **request fields) -> RunResult, on the test's backend."""
    counter = iter(range(1000))

    def run(code: str, **fields):
        skill = make_skill(tmp_path / f"skill{next(counter)}", code)
        fields.setdefault("caps", SUITE_CAPS)
        fields["env"] = {"SKILLYARD_SUITE": SUITE_TOKEN, **fields.get("env", {})}
        runtime = fields.pop("runtime", RuntimeSpec(entrypoint="scripts/main.py"))
        return run_skill(RunRequest(skill_dir=skill, runtime=runtime, backend=backend, **fields))

    return run


@pytest.fixture(name="last_report")
def last_report_fixture():
    """last_report(result): the payload's final JSON line, after checking it started."""
    return last_report


@pytest.fixture
def suite_token() -> str:
    """Put in every run's environment, so the after-check finds this session's processes."""
    return SUITE_TOKEN


@pytest.fixture
def make_payload_skill():
    return make_skill


@pytest.fixture(name="sandbox_processes")
def sandbox_processes_fixture():
    return sandbox_processes


@pytest.fixture(name="host_processes_with")
def host_processes_with_fixture():
    return host_processes_with


def last_report(result) -> dict:
    assert result.stdout.startswith("started"), (result.stdout[:500], result.stderr[-2000:])
    return json.loads(result.stdout.strip().splitlines()[-1])
