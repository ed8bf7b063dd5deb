"""Probes (registry/health.py): /healthz never touches the database, /readyz names each
dependency that does not answer (database, archive storage, broker, cache), on real services:
files, moto's S3 server, Redis, and a registry process whose PostgreSQL is not there."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest
from django.test import Client

from tests.conftest import ROOT, free_port, tcp_open
from tests.registry.test_storage import s3_archives, s3_endpoint  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


def probe(path: str):
    return Client(HTTP_HOST="127.0.0.1").get(path)


def test_healthz_answers_without_a_database_query(django_assert_num_queries):
    with django_assert_num_queries(0):
        response = probe("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]


def test_readyz_is_ok_when_the_database_and_the_archive_folder_answer():
    response = probe("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "storage": "ok"}, "failed": []}


def test_readyz_is_503_naming_the_storage_when_the_archive_folder_is_gone(settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "archives": {
            "BACKEND": "registry.storage.FileSystemArchiveStorage",
            "OPTIONS": {"location": str(tmp_path / "gone" / "archives")},
        },
    }
    response = probe("/readyz")
    assert response.status_code == 503
    assert response.json()["failed"] == ["storage"] and response.json()["checks"]["database"] == "ok"


def test_readyz_reaches_the_s3_bucket_and_fails_when_it_is_missing(s3_archives):  # noqa: F811
    client, bucket = s3_archives
    assert probe("/readyz").json()["checks"]["storage"] == "ok"
    client.delete_bucket(Bucket=bucket)
    response = probe("/readyz")
    assert response.status_code == 503 and response.json()["failed"] == ["storage"]


def redis_cache(url: str) -> dict:
    """CACHES as settings.py makes them for SKILLYARD_CACHE_URL: django-redis, failing open."""
    return {
        "default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": url, "OPTIONS": {"IGNORE_EXCEPTIONS": True}}
    }


def test_readyz_checks_the_broker_and_the_cache_when_configured(settings, redis_url):
    settings.CELERY_BROKER_URL = redis_url
    settings.CACHES = redis_cache(redis_url)
    response = probe("/readyz")
    assert response.status_code == 200, response.json()
    assert response.json()["checks"] == {"database": "ok", "storage": "ok", "broker": "ok", "cache": "ok"}
    closed = f"redis://127.0.0.1:{free_port()}/0"
    settings.CELERY_BROKER_URL = closed
    response = probe("/readyz")
    assert response.status_code == 503 and response.json()["failed"] == ["broker"]
    settings.CELERY_BROKER_URL, settings.CACHES = redis_url, redis_cache(closed)
    response = probe("/readyz")  # requests go on without the cache (it fails open); readiness says it is down
    assert response.status_code == 503 and response.json()["failed"] == ["cache"]


def test_a_registry_whose_database_and_broker_are_down_is_alive_but_not_ready(tmp_path):
    closed = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://skillyard:skillyard@127.0.0.1:{closed}/skillyard",
        "SKILLYARD_BROKER_URL": f"redis://127.0.0.1:{closed}/0",
        "SKILLYARD_SECRET_KEY": "test-" + "k" * 50,
        "SKILLYARD_ALLOWED_HOSTS": "127.0.0.1",
        "SKILLYARD_HTTPS": "0",
        "SKILLYARD_DATA_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "skillyard.settings",
    }
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "skillyard.asgi:application",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not tcp_open("127.0.0.1", port) and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.1)
        assert httpx.get(f"http://127.0.0.1:{port}/healthz").json() == {"status": "ok"}
        ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=30)
        assert ready.status_code == 503
        assert ready.json()["failed"] == ["database", "broker"]
        assert "Connection refused" not in ready.text  # reasons go to the log, not to the caller
    finally:
        server.terminate()
        server.wait(10)


def test_docker_compose_waits_on_readyz_and_adds_up_each_containers_processes():
    import yaml

    services = yaml.safe_load((ROOT / "docker-compose.yaml").read_text())["services"]
    assert "http://127.0.0.1:8000/readyz" in services["web"]["healthcheck"]["test"][-1]
    for name in ("web", "worker", "beat"):
        assert services[name]["environment"]["PROMETHEUS_MULTIPROC_DIR"], name
