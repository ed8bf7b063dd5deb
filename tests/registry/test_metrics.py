"""Prometheus metrics (skillyard/metrics.py): requests by route pattern and status, latency,
publishes, downloads, check durations and the check queue; who may scrape /metrics; and several
gunicorn workers plus a process on another "host" adding up in one scrape (multiprocess mode)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from django.test import Client
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from registry import services
from registry.models import SkillVersion
from tests.conftest import ROOT, free_port
from tests.e2e.conftest import start_registry
from tests.registry.conftest import make_zip

pytestmark = pytest.mark.django_db


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def scrape(client: Client | None = None, **extra) -> dict[tuple[str, tuple], float]:
    response = (client or Client(HTTP_HOST="127.0.0.1")).get("/metrics", **extra)
    assert response.status_code == 200, response.status_code
    return parse(response.content.decode())


def parse(text: str) -> dict[tuple[str, tuple], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_requests_are_counted_by_route_pattern_never_by_raw_path(alice_api):
    route = "api/v1/skills/<str:name>"
    before = value("skillyard_http_requests_total", route=route, method="GET", status="404")
    latency_before = value("skillyard_http_request_duration_seconds_count", route=route, method="GET")
    for name in ("one-missing", "two-missing", "three-missing"):
        assert alice_api.get(f"/api/v1/skills/{name}").status_code == 404
    assert value("skillyard_http_requests_total", route=route, method="GET", status="404") == before + 3
    assert value("skillyard_http_request_duration_seconds_count", route=route, method="GET") == latency_before + 3
    routes = {dict(labels).get("route") for (name, labels) in scrape() if name == "skillyard_http_requests_total"}
    assert route in routes and not any("missing" in (r or "") for r in routes)


def test_unknown_paths_and_made_up_methods_add_no_series():
    before = value("skillyard_http_requests_total", route="unmatched", method="other", status="404")
    client = Client(HTTP_HOST="127.0.0.1")
    for i in range(3):
        client.generic("BREW", f"/no/such/page/{i}")
    assert value("skillyard_http_requests_total", route="unmatched", method="other", status="404") == before + 3


def test_a_new_version_is_one_publish_and_an_identical_retry_is_none(alice_api, django_capture_on_commit_callbacks):
    before = value("skillyard_publishes_total")
    data = make_zip("counted")
    with django_capture_on_commit_callbacks(execute=True):
        assert alice_api.publish("counted", data).status_code == 201
        assert alice_api.publish("counted", data).status_code == 200
    assert value("skillyard_publishes_total") == before + 1


def test_every_download_served_is_counted(alice_api):
    assert alice_api.publish("fetched", make_zip("fetched")).status_code == 201
    before = value("skillyard_downloads_total")
    for _ in range(3):
        assert alice_api.get("/api/v1/skills/fetched/download").status_code == 200
    assert value("skillyard_downloads_total") == before + 3
    assert SkillVersion.objects.get(skill__name="fetched").downloads == 1  # the ranking counts a client once


def test_check_durations_are_recorded_by_check_and_outcome(alice_api, django_capture_on_commit_callbacks):
    assert alice_api.publish("timed", make_zip("timed")).status_code == 201
    version = SkillVersion.objects.get(skill__name="timed")
    done_before = value("skillyard_check_duration_seconds_count", check="scan", status="done")
    error_before = value("skillyard_check_duration_seconds_count", check="tests", status="error")
    with django_capture_on_commit_callbacks(execute=True):
        scan = services.check_start(version_id=version.id, name="scan")
        tests = services.check_start(version_id=version.id, name="tests")
        assert scan is not None and tests is not None
        services.check_finish(check=scan, result={"verdict": "pass", "findings": []})
        services.check_fail(check=tests, error="sandbox: no Docker daemon")
    assert value("skillyard_check_duration_seconds_count", check="scan", status="done") == done_before + 1
    assert value("skillyard_check_duration_seconds_count", check="tests", status="error") == error_before + 1


def test_the_check_queue_is_read_from_the_database_at_each_scrape(alice_api):
    def queued(check: str, status: str, samples: dict) -> float:
        return samples[("skillyard_checks_queued", (("check", check), ("status", status)))]

    assert queued("scan", "pending", scrape()) == 0
    for name in ("queued-a", "queued-b"):
        assert alice_api.publish(name, make_zip(name)).status_code == 201  # checks stay pending (not queued here)
    services.check_start(version_id=SkillVersion.objects.get(skill__name="queued-a").id, name="scan")
    samples = scrape()
    assert queued("scan", "pending", samples) == 1 and queued("scan", "running", samples) == 1
    assert queued("tests", "pending", samples) == 2 and queued("manifest", "running", samples) == 0


def test_metrics_are_not_public(settings):
    client = Client(HTTP_HOST="127.0.0.1")
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 404
    settings.SKILLYARD_METRICS_TOKEN = "scrape-secret"
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer wrong").status_code == 404
    scrape(client, REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer scrape-secret")
    settings.SKILLYARD_METRICS_NETWORKS = ["203.0.113.0/24"]
    scrape(client, REMOTE_ADDR="203.0.113.9")


def test_a_proxy_on_loopback_does_not_make_every_caller_local(settings):
    client = Client(HTTP_HOST="127.0.0.1")
    # An untrusted proxy on this machine forwarding a caller from outside: not a local client.
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.9").status_code == 404
    # A trusted proxy: the caller is the forwarded address, judged like any other.
    settings.SKILLYARD_TRUSTED_PROXIES = ["10.0.0.0/8"]
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3", HTTP_X_FORWARDED_FOR="203.0.113.9").status_code == 404
    scrape(client, REMOTE_ADDR="10.1.2.3", HTTP_X_FORWARDED_FOR="127.0.0.1")


RECORD_ELSEWHERE = """
import django
django.setup()
from datetime import timedelta
from django.utils import timezone
from registry.models import VersionCheck
from skillyard.metrics import CHECK_DURATION, check_observed
end = timezone.now()
check = VersionCheck(name="tests", status="done", started_at=end - timedelta(seconds=42), finished_at=end)
check_observed(check)  # outside a transaction: recorded at once
"""


@pytest.mark.slow
def test_gunicorn_workers_and_a_worker_host_add_up_in_one_scrape(tmp_path):
    shared = tmp_path / "metrics"
    registry = start_registry(tmp_path / "web", server="gunicorn", env_extra={"SKILLYARD_METRICS_DIR": str(shared)})
    try:
        for i in range(24):  # a new connection each: gunicorn's sync workers take turns
            assert httpx.get(f"{registry.url}/api/v1/skills/absent-{i}").status_code == 404
        # A Celery worker on another host writes its own folder of the shared one.
        env = {
            **os.environ,
            "SKILLYARD_DATA_DIR": str(tmp_path / "web"),
            "DJANGO_SETTINGS_MODULE": "skillyard.settings",
        }
        env.update(PROMETHEUS_MULTIPROC_DIR=str(shared / "worker-host"))
        subprocess.run([sys.executable, "-c", RECORD_ELSEWHERE], cwd=ROOT, env=env, check=True)
        samples = parse(httpx.get(f"{registry.url}/metrics").text)
    finally:
        registry.stop()
    route = (("method", "GET"), ("route", "api/v1/skills/<str:name>"), ("status", "404"))
    assert samples[("skillyard_http_requests_total", route)] == 24
    writers = {p.name for p in Path(shared).rglob("counter_*.db")}
    assert len(writers) >= 2, writers  # more than one web process answered, and they were added up
    assert samples[("skillyard_check_duration_seconds_count", (("check", "tests"), ("status", "done")))] == 1
    assert samples[("skillyard_check_duration_seconds_sum", (("check", "tests"), ("status", "done")))] == 42


def test_cache_errors_are_all_counted_and_logged_once_a_window(settings, caplog, monkeypatch):
    from django.core.cache import caches

    from skillyard.metrics import CacheErrors

    logger = logging.getLogger(settings.DJANGO_REDIS_LOGGER)
    assert [type(f) for f in logger.filters] == [CacheErrors]  # settings.LOGGING puts it on django-redis's logger
    monkeypatch.setattr(logger, "filters", [CacheErrors()])  # a fresh window, whatever ran before
    settings.SKILLYARD_CACHE_ERROR_LOG_SECONDS = 3600
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{free_port()}/0",  # nothing listens there
            "OPTIONS": {"IGNORE_EXCEPTIONS": True},
        }
    }
    before = REGISTRY.get_sample_value("skillyard_cache_errors_total") or 0.0
    cache = caches["default"]
    with caplog.at_level(logging.WARNING, logger=logger.name):
        assert cache.get("throttle", []) == []  # a throttle reading its history: nothing, let through
        assert not cache.add("download:1:me", 1, 60)  # a download counted once a window: skipped
        cache.set("search:q", "found", 60)
    assert REGISTRY.get_sample_value("skillyard_cache_errors_total") - before == 3
    lines = [r.getMessage() for r in caplog.records if r.name == logger.name]
    assert len(lines) == 1 and "let through (the cache fails open)" in lines[0], lines
    assert "Connection refused" in lines[0]  # the cause, in one line (no traceback)
