"""Publish checks on real parts: Redis as the broker and a real `celery worker` process. A
worker process killed (kill -9) in the middle of a test run gets its job re-delivered, and no
check stays `running`. A whole worker killed outright leaves its check `running` with the
message unacknowledged in Redis until the visibility timeout; the sweep re-queues it and a
fresh worker finishes it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import redis

from tests.e2e.conftest import ROOT, _manage, start_registry
from tests.e2e.test_checks_live import wait_for_checks
from tests.e2e.test_install_registry import make

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
SLOW_TEST = "import time, unittest\nclass T(unittest.TestCase):\n    def test_slow(self):\n        time.sleep(6)\n"


@pytest.fixture
def broker(redis_url):
    url = redis_url.rsplit("/", 1)[0] + "/11"  # a database of its own
    redis.Redis.from_url(url).flushdb()
    yield url
    redis.Redis.from_url(url).flushdb()


def start_worker(env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            str(Path(sys.executable).with_name("celery")),
            "-A",
            "worker",
            "worker",
            "--concurrency",
            "1",
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def wait_for_log(log: Path, text: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while text not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, f"{text!r} never appeared in {log.name}"
        time.sleep(0.2)


def stop_group(process: subprocess.Popen) -> None:
    """Stop a worker and its pool (SIGTERM, then SIGKILL after 20 s)."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)


def wait_until_running(reg, name: str, check: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while status_of(reg, name, check) != "running":
        assert time.monotonic() < deadline, f"the {check} check of {name} never started"
        time.sleep(0.2)


def status_of(reg, name: str, check: str) -> str:
    detail = httpx.get(
        f"{reg.url}/api/v1/skills/{name}/versions/1.0.0", headers={"Authorization": f"Bearer {reg.token}"}, timeout=10
    ).json()
    return detail["checks"][check]["status"]


def test_checks_run_on_a_celery_worker_and_survive_a_killed_worker(broker, tmp_path, docker_daemon):
    env_extra = {"SKILLYARD_BROKER_URL": broker}
    reg = start_registry(tmp_path / "registry", env_extra=env_extra)
    env = {**os.environ, "SKILLYARD_DATA_DIR": str(tmp_path / "registry"), **env_extra}
    env.pop("DATABASE_URL", None)
    worker = start_worker(env, tmp_path / "worker.log")
    try:
        reg.publish(make(tmp_path, "plain", "1.0.0"))
        detail = wait_for_checks(reg.url, "plain", "1.0.0", reg.token, seconds=90)
        assert {c["status"] for c in detail["checks"].values()} == {"done"}

        reg.publish(make(tmp_path, "sleepy", "1.0.0", {"tests/test_slow.py": SLOW_TEST}))
        wait_until_running(reg, "sleepy", "tests")
        time.sleep(1)
        children = subprocess.run(["pgrep", "-P", str(worker.pid)], capture_output=True, text=True).stdout.split()
        assert children, "no pool process to kill"
        for pid in children:
            os.kill(int(pid), signal.SIGKILL)  # the process running the job dies mid-run
        detail = wait_for_checks(reg.url, "sleepy", "1.0.0", reg.token, seconds=120)
        assert detail["checks"]["tests"]["status"] == "done", (tmp_path / "worker.log").read_text()[-3000:]
        assert detail["checks"]["tests"]["result"] == "passed"
        assert all(c["status"] != "running" for c in detail["checks"].values())
    finally:
        stop_group(worker)
        reg.stop()


def test_a_worker_killed_outright_leaves_its_check_to_the_sweep_and_a_new_worker_finishes_it(
    broker, tmp_path, docker_daemon
):
    env_extra = {"SKILLYARD_BROKER_URL": broker}
    reg = start_registry(tmp_path / "registry", env_extra=env_extra)
    env = {**os.environ, "SKILLYARD_DATA_DIR": str(tmp_path / "registry"), **env_extra}
    env.pop("DATABASE_URL", None)
    first_log, second_log = tmp_path / "worker-1.log", tmp_path / "worker-2.log"
    workers = [start_worker(env, first_log)]
    try:
        reg.publish(make(tmp_path, "sleepy", "1.0.0", {"tests/test_slow.py": SLOW_TEST}))
        wait_until_running(reg, "sleepy", "tests")
        time.sleep(1)
        os.killpg(workers[0].pid, signal.SIGKILL)  # the main process and its pool: nobody left to notice
        workers[0].wait(10)

        workers.append(start_worker(env, second_log))
        wait_for_log(second_log, "ready.")
        time.sleep(3)  # the new worker gets nothing: Redis holds the message until the visibility timeout
        assert status_of(reg, "sleepy", "tests") == "running"

        swept = _manage(["rerun_checks", "--stale", "--stale-after", "0"], env)  # the beat job, made impatient
        assert "re-queued 1 stale check(s)" in swept

        detail = wait_for_checks(reg.url, "sleepy", "1.0.0", reg.token, seconds=120)
        tests = detail["checks"]["tests"]
        assert tests["status"] == "done" and tests["result"] == "passed", second_log.read_text()[-3000:]
        assert {c["status"] for c in detail["checks"].values()} == {"done"}
        assert "checks.run" in second_log.read_text()
    finally:
        for worker in workers:
            stop_group(worker)
        reg.stop()
