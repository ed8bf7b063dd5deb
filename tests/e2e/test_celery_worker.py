"""Publish checks on real parts: Redis as the broker and a real `celery worker` process. A
worker process killed (kill -9) in the middle of a test run gets its job re-delivered, and no
check stays `running`."""

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

from tests.e2e.conftest import ROOT, start_registry
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
        deadline = time.monotonic() + 60
        while status_of(reg, "sleepy", "tests") != "running":
            assert time.monotonic() < deadline, "the tests check never started"
            time.sleep(0.2)
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
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
        reg.stop()
