"""The shared cache fails open (settings.CACHES, django-redis): with its Redis stopped, a live
registry still lists, searches, shows, downloads and publishes (2xx, quickly), a throttle that
cannot read its counter lets the request through, each failed cache call is counted in
``skillyard_cache_errors_total`` and logged at most once a window, and ``/readyz`` says the cache
is down until Redis is back."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port, require_service
from tests.e2e.conftest import start_registry
from tests.e2e.test_install_registry import make

pytestmark = [pytest.mark.e2e]
ANON_LIMIT = 5  # anonymous requests a minute: low, so the throttle is seen working while Redis is up


class OwnRedis:
    """A redis-server of the test's own on a free port, without persistence (as in the soak)."""

    def __init__(self, folder: Path):
        self.port, self.folder = free_port(), folder
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(command, cwd=self.folder, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True).stdout != b"PONG\n":
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


@pytest.fixture
def own_redis(tmp_path):
    require_service("redis-server", bool(shutil.which("redis-server")))
    server = OwnRedis(tmp_path)
    server.start()
    yield server
    server.stop()


def cache_errors(url: str) -> float:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    return sum(float(line.split()[1]) for line in text.splitlines() if line.startswith("skillyard_cache_errors_total"))


def test_with_the_cache_down_reads_downloads_and_publishes_answer_and_readyz_says_so(tmp_path, own_redis):
    env = {
        "SKILLYARD_CACHE_URL": f"redis://127.0.0.1:{own_redis.port}/1",
        "SKILLYARD_THROTTLE_ANON": f"{ANON_LIMIT}/min",
        "SKILLYARD_CHECKS_ENABLED": "0",
    }
    reg = start_registry(tmp_path / "registry", server="uvicorn", env_extra=env)
    auth = {"Authorization": f"Bearer {reg.token}"}
    try:
        reg.publish(make(tmp_path, "kept", "1.0.0"))
        refused = [httpx.get(f"{reg.url}/api/v1/skills", timeout=10).status_code for _ in range(ANON_LIMIT + 1)]
        assert refused[-1] == 429, refused  # the throttle's counter lives in Redis
        assert httpx.get(f"{reg.url}/readyz", timeout=10).status_code == 200
        assert cache_errors(reg.url) == 0

        own_redis.stop()
        paths = [
            "/api/v1/skills",
            "/api/v1/skills?q=kept",
            "/api/v1/skills/kept",
            "/api/v1/skills/kept/versions/1.0.0",
            "/api/v1/skills/kept/versions/1.0.0/download",
        ]
        for path in paths:
            for headers in ({}, auth):  # anonymous (its throttle cannot count: let through) and signed in
                started = time.monotonic()
                response = httpx.get(f"{reg.url}{path}", headers=headers, timeout=10)
                assert response.status_code == 200, (path, response.status_code, response.text[:300])
                assert time.monotonic() - started < 3, f"{path} waited on the dead cache"
        assert reg.publish(make(tmp_path, "kept", "1.1.0"))["version"] == "1.1.0"
        assert reg.publish(make(tmp_path, "new-one", "1.0.0"))["name"] == "new-one"

        ready = httpx.get(f"{reg.url}/readyz", timeout=10)
        assert ready.status_code == 503 and ready.json()["failed"] == ["cache"]
        failed_calls = cache_errors(reg.url)
        assert failed_calls >= len(paths) * 2
        lines = reg.log.read_text().count("cache call failed, let through (the cache fails open)")
        assert lines == 1, f"{lines} log lines for {failed_calls:.0f} failed calls: one per window expected"

        own_redis.start()  # back on the same port: the next calls reach it again
        deadline = time.monotonic() + 20
        while httpx.get(f"{reg.url}/readyz", timeout=10).status_code != 200:
            assert time.monotonic() < deadline, "readyz never saw the cache back"
            time.sleep(0.5)
        assert cache_errors(reg.url) == failed_calls  # no new failures once Redis answers
    finally:
        reg.stop()
