"""docker-compose.yaml describes the production-like deployment of DESIGN section 2.

No container image can be pulled on our machines, so the stack is not started here; these checks
keep its shape honest: every service is there, long-running ones have healthchecks, start order
waits on health, and web and worker run on PostgreSQL, Redis and S3 (MinIO).
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yaml").read_text())
SERVICES = COMPOSE["services"]


def test_every_part_of_the_deployment_is_a_service() -> None:
    assert {"web", "worker", "postgres", "redis", "minio"} <= set(SERVICES)


def test_long_running_services_have_healthchecks() -> None:
    for name in ("web", "worker", "postgres", "redis", "minio"):
        assert SERVICES[name].get("healthcheck", {}).get("test"), name


def test_web_and_worker_wait_for_healthy_dependencies() -> None:
    for name in ("web", "worker"):
        depends = SERVICES[name]["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"


def test_web_and_worker_use_the_production_parts() -> None:
    for name in ("web", "worker"):
        env = SERVICES[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://")
        assert env["SKILLYARD_STORAGE"] == "s3"
        assert env["SKILLYARD_BROKER_URL"].startswith("redis://")
    assert "celery" in SERVICES["worker"]["command"]


def test_published_ports_bind_loopback_only() -> None:
    for name, service in SERVICES.items():
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), name


def test_the_image_copies_every_package_it_installs() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    for part in ("client", "skillyard", "registry", "catalog", "worker", "templates"):
        assert f"COPY {part} ./{part}" in dockerfile


def test_nginx_fronts_the_registry_buffering_bodies_with_timeouts() -> None:
    nginx = SERVICES["nginx"]
    assert nginx["depends_on"]["web"]["condition"] == "service_healthy"
    assert "ports" not in SERVICES["web"]  # reachable only through the front
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    for directive in ("proxy_request_buffering on", "client_body_timeout", "client_max_body_size 51m"):
        assert directive in conf


def test_no_default_secret_and_no_wildcard_host() -> None:
    env = SERVICES["web"]["environment"]
    assert env["SKILLYARD_SECRET_KEY"].startswith("${SKILLYARD_SECRET_KEY:?")  # compose refuses to start
    assert "*" not in env["SKILLYARD_ALLOWED_HOSTS"]
    subnet = COMPOSE["networks"]["default"]["ipam"]["config"][0]["subnet"]
    assert env["SKILLYARD_TRUSTED_PROXIES"] == subnet


def test_web_and_worker_share_throttle_counters_in_redis() -> None:
    # The image serves several uvicorn processes: a counter kept in one process's memory would
    # let each of them allow the full number of failed sign-ins.
    assert "--workers ${SKILLYARD_WEB_WORKERS:-4}" in (ROOT / "Dockerfile").read_text()
    for name in ("web", "worker"):
        env = SERVICES[name]["environment"]
        assert env["SKILLYARD_CACHE_URL"].startswith("redis://redis:6379/")
        assert env["SKILLYARD_CACHE_URL"] != env["SKILLYARD_BROKER_URL"]  # its own database
