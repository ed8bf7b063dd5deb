"""Shared fixtures: the real services tests use, and the corpus.

A test that needs a service asks for its fixture. When the service is missing the test is
skipped, except under ``SKILLYARD_REQUIRE_SERVICES=1`` (CI), where it fails: a missing service
must never pass silently. ``scripts/services.sh`` starts them on loopback.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("SKILLYARD_CORPUS", ROOT.parent / "shared" / "corpus"))
REQUIRE_SERVICES = os.environ.get("SKILLYARD_REQUIRE_SERVICES") == "1"

POSTGRES_URL = os.environ.get("SKILLYARD_TEST_POSTGRES_URL", "postgres://skillyard:skillyard@127.0.0.1:5432/skillyard")
REDIS_URL = os.environ.get("SKILLYARD_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def require_service(name: str, available: bool, why: str = "") -> None:
    """Skip (locally) or fail (CI) when a service a test needs is not there."""
    if available:
        return
    message = f"{name} is not available{': ' + why if why else ''} (run `make test` to start it)"
    if REQUIRE_SERVICES:
        pytest.fail(f"SKILLYARD_REQUIRE_SERVICES=1 and {message}")
    pytest.skip(message)


def tcp_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """../shared/corpus/skills; tests using it skip only where the corpus is absent."""
    skills = CORPUS / "skills"
    if not skills.is_dir():
        pytest.skip(f"the shared corpus is absent ({skills})")
    return skills


@pytest.fixture(scope="session")
def postgres_url() -> str:
    url = urlparse(POSTGRES_URL)
    require_service("PostgreSQL", tcp_open(url.hostname or "127.0.0.1", url.port or 5432), POSTGRES_URL)
    return POSTGRES_URL


def drop_database(admin_url: str, name: str) -> None:
    """Drop a test's database and every connection to it. ``WITH (FORCE)`` cannot terminate an
    autovacuum worker that has just started on it (that process has no role this one may signal,
    and PostgreSQL says so with InsufficientPrivilege): wait for it to finish and try again."""
    import psycopg

    for attempt in range(40):
        try:
            with psycopg.connect(admin_url, autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            return
        except (psycopg.errors.InsufficientPrivilege, psycopg.errors.ObjectInUse):
            if attempt == 39:
                raise
            time.sleep(0.25)


@pytest.fixture(scope="session")
def redis_url() -> str:
    url = urlparse(REDIS_URL)
    require_service("Redis", tcp_open(url.hostname or "127.0.0.1", url.port or 6379), REDIS_URL)
    return REDIS_URL


def docker_daemon_ok() -> bool:
    if not shutil.which("docker"):
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="session")
def docker_daemon() -> None:
    require_service("Docker daemon", docker_daemon_ok())


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    require_service("Chromium", bool(path))
    return path
