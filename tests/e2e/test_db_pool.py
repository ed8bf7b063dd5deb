"""PostgreSQL connections are pooled per process (settings.SKILLYARD_DB_POOL_MAX_SIZE): the
production web server (scripts/web.sh) with two workers, hammered by 40 threads, never holds
more than workers × pool size connections in ``pg_stat_activity``, and answers every request.
Without the pool each request thread held a connection of its own and the soak ran PostgreSQL
out of slots ("too many clients")."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.conftest import drop_database, free_port
from tests.e2e.conftest import ROOT, _manage_all
from tests.e2e.test_install_registry import make

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
WORKERS = 2  # web processes behind scripts/web.sh
POOL = 3  # connections each may hold: far fewer than the threads below
THREADS = 40
SECONDS = 8


@pytest.fixture
def database(postgres_url):
    name = f"skillyard_pool_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield postgres_url.rsplit("/", 1)[0] + f"/{name}", name
    drop_database(postgres_url, name)


def serve(env: dict[str, str], log: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        ["sh", "scripts/web.sh"],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{env['SKILLYARD_WEB_PORT']}"
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, log.read_text()
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)


def connections(admin: psycopg.Connection, name: str) -> int:
    """Client connections to the database now (autovacuum's own workers are not clients)."""
    query = "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND backend_type = 'client backend'"
    return admin.execute(query, (name,)).fetchone()[0]


def test_many_request_threads_never_hold_more_connections_than_the_pools(tmp_path, database, postgres_url):
    url_db, name = database
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "DJANGO_SETTINGS_MODULE": "skillyard.settings",
        "DATABASE_URL": url_db,
        "SKILLYARD_DB_POOL_MAX_SIZE": str(POOL),
        "SKILLYARD_SECRET_KEY": "pool-test-" + "k" * 40,
        "SKILLYARD_ALLOWED_HOSTS": "127.0.0.1",
        "SKILLYARD_HTTPS": "0",
        "SKILLYARD_DATA_DIR": str(tmp_path / "data"),
        "SKILLYARD_CHECKS_ENABLED": "0",
        "SKILLYARD_THROTTLE_ANON": "1000000/min",
        "SKILLYARD_THROTTLE_USER": "1000000/min",  # it counts anonymous clients by address too
        "SKILLYARD_WEB_HOST": "127.0.0.1",
        "SKILLYARD_WEB_PORT": str(free_port()),
        "SKILLYARD_WEB_WORKERS": str(WORKERS),
    }
    for key in ("SKILLYARD_BROKER_URL", "SKILLYARD_CACHE_URL", "PROMETHEUS_MULTIPROC_DIR", "SKILLYARD_METRICS_DIR"):
        env.pop(key, None)
    _, issued = _manage_all(
        [["migrate", "--noinput"], ["issue_token", "alice", "--scope", "publish", "--create-user"]], env
    )
    token = issued.strip().splitlines()[-1]
    server = serve(env, tmp_path / "web.log")
    base = f"http://127.0.0.1:{env['SKILLYARD_WEB_PORT']}"
    try:
        from skillctl.format import pack_skill

        archive = tmp_path / "pooled.zip"
        pack_skill(make(tmp_path, "pooled", "1.0.0"), archive)
        published = httpx.post(
            f"{base}/api/v1/skills/pooled/versions",
            headers={"Authorization": f"Bearer {token}"},
            files={"archive": ("pooled.zip", archive.read_bytes(), "application/zip")},
            timeout=30,
        )
        assert published.status_code == 201, published.text
        paths = ["/api/v1/skills", "/api/v1/skills/pooled", "/api/v1/skills/pooled/versions/1.0.0/download"]
        statuses: list[int] = []
        refusals: list[str] = []  # the first bodies of answers other than 200, for the message
        stop = time.monotonic() + SECONDS

        def client(index: int) -> None:
            with httpx.Client(timeout=30) as http:
                while time.monotonic() < stop:
                    response = http.get(base + paths[index % len(paths)])
                    statuses.append(response.status_code)
                    if response.status_code != 200 and len(refusals) < 3:
                        refusals.append(response.text[:300])

        peak, done = 0, threading.Event()
        with psycopg.connect(postgres_url, autocommit=True) as admin:

            def sample() -> None:
                nonlocal peak
                while not done.is_set():
                    peak = max(peak, connections(admin, name))
                    time.sleep(0.02)

            sampler = threading.Thread(target=sample)
            sampler.start()
            with ThreadPoolExecutor(THREADS) as pool:
                list(pool.map(client, range(THREADS)))
            done.set()
            sampler.join()
        assert len(statuses) > THREADS * 3 and set(statuses) == {200}, (sorted(set(statuses)), refusals)
        assert 1 < peak <= WORKERS * POOL, f"{peak} connections at once for {WORKERS} processes × a pool of {POOL}"
    finally:
        os.killpg(server.pid, 15)
        server.wait(20)
