"""docker-compose.yaml describes the deployment of DESIGN section 14, built on this machine.

`make compose-test` (scripts/compose-test.sh) runs the stack for real; these checks keep its shape
honest without Docker: every service is there, every image is built here from the local base
(nothing can be pulled), long-running ones have healthchecks, start order waits on health, web,
worker and beat run on PostgreSQL, Redis and S3, and the README's production section is what the
compose test runs.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yaml").read_text())
SERVICES = COMPOSE["services"]
REGISTRY = ("web", "worker", "beat")
BASE_IMAGE = "skillyard/base:bookworm"  # scripts/compose-image.sh


def test_every_part_of_the_deployment_is_a_service() -> None:
    assert {"web", "worker", "beat", "postgres", "redis", "s3", "nginx"} == set(SERVICES)


def test_long_running_services_have_healthchecks() -> None:
    for name, service in SERVICES.items():
        assert service.get("healthcheck", {}).get("test"), name


def test_no_image_is_pulled_every_one_is_built_here() -> None:
    built = {service["image"] for service in SERVICES.values() if "build" in service}
    for name, service in SERVICES.items():
        assert service["pull_policy"] == "never", name
        assert service["image"] in built, f"{name} runs an image no service builds"
        assert service["image"].startswith("skillyard/"), name


def test_every_dockerfile_starts_from_the_local_base() -> None:
    contexts = {service["build"] for service in SERVICES.values() if "build" in service}
    for context in contexts:
        dockerfile = (ROOT / context / "Dockerfile").read_text()
        froms = re.findall(r"^FROM\s+(\S+)", dockerfile, flags=re.MULTILINE)
        assert froms == [BASE_IMAGE], context
    assert 'BASE_IMAGE="skillyard/base:$BASE_RELEASE"' in (ROOT / "scripts" / "compose-image.sh").read_text()
    assert "BASE_RELEASE=bookworm" in (ROOT / "scripts" / "compose-image.sh").read_text()


def test_registry_processes_share_one_image_built_once() -> None:
    assert [name for name in REGISTRY if "build" in SERVICES[name]] == ["web"]
    assert {SERVICES[name]["image"] for name in REGISTRY} == {SERVICES["web"]["image"]}


def test_registry_processes_wait_for_healthy_dependencies() -> None:
    for name in ("web", "worker"):
        depends = SERVICES[name]["depends_on"]
        for part in ("postgres", "redis", "s3"):
            assert depends[part]["condition"] == "service_healthy", (name, part)
    for name in ("worker", "beat"):  # the web process migrates the database first
        assert SERVICES[name]["depends_on"]["web"]["condition"] == "service_healthy"


def test_registry_processes_use_the_production_parts() -> None:
    for name in REGISTRY:
        env = SERVICES[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://")
        assert env["SKILLYARD_STORAGE"] == "s3"
        assert env["SKILLYARD_S3_ENDPOINT_URL"] == "http://s3:9000"
        assert env["SKILLYARD_BROKER_URL"].startswith("redis://")


def test_two_workers_and_exactly_one_beat() -> None:
    # A worker killed mid-check leaves its check to the other; two beats would sweep twice.
    assert SERVICES["worker"]["scale"] == 2
    assert SERVICES["worker"]["command"][:4] == ["celery", "-A", "worker", "worker"]
    assert "-B" not in SERVICES["worker"]["command"] and "--beat" not in SERVICES["worker"]["command"]
    assert SERVICES["beat"]["command"][:4] == ["celery", "-A", "worker", "beat"]
    assert "scale" not in SERVICES["beat"]


def test_the_bucket_is_created_when_the_s3_server_starts() -> None:
    s3 = SERVICES["s3"]
    bucket = SERVICES["web"]["environment"]["SKILLYARD_S3_BUCKET"]
    assert bucket in s3["environment"]["S3_BUCKETS"].split()
    assert f"/{bucket}'" in s3["healthcheck"]["test"][-1]  # healthy only once the bucket answers


def test_published_ports_bind_loopback_only() -> None:
    for name, service in SERVICES.items():
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), name


def test_the_image_copies_every_package_it_installs() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    for part in ("client", "skillyard", "registry", "catalog", "worker", "templates"):
        assert f"COPY {part} ./{part}" in dockerfile
    ignored = (ROOT / ".dockerignore").read_text().split()
    for part in ("pyproject.toml", "README.md", "LICENSE", "manage.py", "client", "registry", "templates"):
        assert f"!{part}" in ignored, part  # in the build context despite the leading `*`


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
    # The image serves several web processes (scripts/web.sh): a counter kept in one process's
    # memory would let each of them allow the full number of failed sign-ins.
    assert "exec sh scripts/web.sh" in (ROOT / "Dockerfile").read_text()
    assert 'WORKERS="${SKILLYARD_WEB_WORKERS:-4}"' in (ROOT / "scripts" / "web.sh").read_text()
    for name in REGISTRY:
        env = SERVICES[name]["environment"]
        assert env["SKILLYARD_CACHE_URL"].startswith("redis://redis:6379/")
        assert env["SKILLYARD_CACHE_URL"] != env["SKILLYARD_BROKER_URL"]  # its own database


def readme_production_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Running a registry with docker-compose", 1)[1].split("\n#", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [line.split("  #", 1)[0].strip() for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_the_readme_production_section_is_what_the_compose_test_runs() -> None:
    commands = readme_production_commands()
    assert any(command.startswith("docker-compose up") for command in commands)
    assert any(command.startswith("docker-compose down --volumes") for command in commands)
    script = (ROOT / "scripts" / "compose-test.sh").read_text()
    for command in commands:
        assert command in script, command


def run_compose_test_without_docker(require_services: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DOCKER_HOST": "unix:///nonexistent/docker.sock",
        "SKILLYARD_REQUIRE_SERVICES": require_services,
    }
    script = ROOT / "scripts" / "compose-test.sh"
    return subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=60)


def test_compose_test_skips_without_a_docker_daemon() -> None:
    done = run_compose_test_without_docker("0")
    assert done.returncode == 0
    assert "skipped: no Docker daemon answers" in done.stderr


def test_compose_test_fails_without_a_docker_daemon_when_services_are_required() -> None:
    done = run_compose_test_without_docker("1")
    assert done.returncode == 1
    assert "FAILED: no Docker daemon answers" in done.stderr
