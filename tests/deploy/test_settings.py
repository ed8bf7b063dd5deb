"""Deployment settings (issue: ALLOWED_HOSTS defaulted to `*`, a hard-coded secret key):
refuse to start without a key and host names outside the embedded default, and
`manage.py check --deploy` is clean with the production environment the README documents."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import redis

ROOT = Path(__file__).resolve().parents[2]

# README "Running a registry", production: what an operator sets.
PRODUCTION = {
    "DATABASE_URL": "postgres://skillyard:secret@db.internal:5432/skillyard",
    "SKILLYARD_STORAGE": "s3",
    "SKILLYARD_S3_BUCKET": "skillyard",
    "SKILLYARD_BROKER_URL": "redis://redis.internal:6379/0",
    "SKILLYARD_CACHE_URL": "redis://redis.internal:6379/1",
    "SKILLYARD_ALLOWED_HOSTS": "skills.example.com",
    "SKILLYARD_PUBLIC_URL": "https://skills.example.com",
    "SKILLYARD_HTTPS": "1",
    "SKILLYARD_PROXY_SSL_HEADER": "X-Forwarded-Proto",
    "SKILLYARD_TRUSTED_PROXIES": "10.0.0.0/8",
}


def manage(*args: str, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLYARD_", "DATABASE_URL"))}
    environ = {**base, "SKILLYARD_DATA_DIR": str(tmp_path / "data"), **env}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_is_clean_with_the_documented_production_environment(tmp_path):
    env = {**PRODUCTION, "SKILLYARD_SECRET_KEY": secrets.token_urlsafe(50)}
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=env, tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.parametrize("missing", ["SKILLYARD_SECRET_KEY", "SKILLYARD_ALLOWED_HOSTS"])
def test_a_deployment_refuses_to_start_without_key_or_hosts(tmp_path, missing):
    env = {**PRODUCTION, "SKILLYARD_SECRET_KEY": secrets.token_urlsafe(50)}
    env.pop(missing)
    result = manage("check", env=env, tmp_path=tmp_path)
    assert result.returncode != 0
    assert missing in result.stderr.strip().splitlines()[-1]  # one clear line, the last one


def test_a_wildcard_host_is_refused(tmp_path):
    env = {**PRODUCTION, "SKILLYARD_SECRET_KEY": secrets.token_urlsafe(50), "SKILLYARD_ALLOWED_HOSTS": "*"}
    result = manage("check", env=env, tmp_path=tmp_path)
    assert result.returncode != 0 and "SKILLYARD_ALLOWED_HOSTS" in result.stderr


def test_the_embedded_default_keeps_a_generated_key_and_loopback_hosts(tmp_path):
    show = "from django.conf import settings as s; print(s.ALLOWED_HOSTS, len(s.SECRET_KEY))"
    first = manage("shell", "-c", show, env={}, tmp_path=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "'127.0.0.1', 'localhost'" in first.stdout and "*" not in first.stdout
    key_file = tmp_path / "data" / "secret_key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    key = key_file.read_text()
    assert manage("shell", "-c", show, env={}, tmp_path=tmp_path).returncode == 0
    assert key_file.read_text() == key and len(key) >= 50  # kept, not regenerated


def test_a_process_losing_the_race_for_the_key_file_uses_the_winners_key(tmp_path, monkeypatch):
    """`make run` starts several processes on a fresh data folder: one that saw no key file, then
    found one created meanwhile, neither crashes nor replaces it, and leaves no draft behind."""
    from skillyard import settings as module

    data = tmp_path / "data"
    monkeypatch.setattr(module, "DATA_DIR", data)
    monkeypatch.setenv("SKILLYARD_SECRET_KEY", "")
    first = module._secret_key()
    assert len(first) >= 50 and (data / "secret_key").stat().st_mode & 0o777 == 0o600
    real_exists = Path.exists
    monkeypatch.setattr(Path, "exists", lambda self: False if self.name == "secret_key" else real_exists(self))
    assert module._secret_key() == first  # it looked before the other process wrote the key
    assert not list(data.glob(".secret_key.*"))


def test_wellknown_urls_use_the_public_url(settings, client, db):
    settings.SKILLYARD_PUBLIC_URL = "https://skills.example.com"
    from registry import services
    from registry.access import Actor
    from tests.registry.conftest import make_zip

    user = services.user_create(username="pub")
    services.skill_version_publish(actor=Actor(user), name="pdf-tools", archive=_file(make_zip("pdf-tools")))
    data = client.get("/.well-known/agent-skills/index.json").json()
    # the archive is served re-rooted under the well-known path, on the public origin
    assert data["skills"][0]["url"] == "https://skills.example.com/.well-known/agent-skills/pdf-tools/1.0.0.zip"


def _file(data: bytes):
    import io

    handle = io.BytesIO(data)
    handle.name = "s.zip"
    return handle


def test_failed_sign_ins_count_across_processes_sharing_the_redis_cache(tmp_path, redis_url):
    """Two processes (two web workers) against one counter: with SKILLYARD_CACHE_URL the third
    failure, recorded by another process, blocks; without it each process counts alone."""
    cache_url = redis_url.rsplit("/", 1)[0] + "/12"  # a database of its own
    redis.Redis.from_url(cache_url).flushdb()
    record = "from registry import auth_limits as a; [a.record_failure('ip:192.0.2.7') for _ in range({n})]"
    show = "from registry import auth_limits as a; print('blocked', a.blocked('ip:192.0.2.7'))"
    try:
        for cache in ({"SKILLYARD_CACHE_URL": cache_url}, {}):
            env = {**cache, "SKILLYARD_THROTTLE_AUTH_FAILURES": "3/day"}
            assert manage("shell", "-c", record.format(n=2), env=env, tmp_path=tmp_path).returncode == 0
            last = manage("shell", "-c", record.format(n=1) + "; " + show, env=env, tmp_path=tmp_path)
            assert last.returncode == 0, last.stderr
            assert ("blocked None" in last.stdout) is (not cache), last.stdout
    finally:
        redis.Redis.from_url(cache_url).flushdb()


@pytest.mark.parametrize(
    "header, expected", [("X-Forwarded-Proto", "('HTTP_X_FORWARDED_PROTO', 'https')"), ("", "None")]
)
def test_the_proxy_ssl_header_is_set_only_when_configured(tmp_path, header, expected):
    env = {**PRODUCTION, "SKILLYARD_SECRET_KEY": secrets.token_urlsafe(50), "SKILLYARD_PROXY_SSL_HEADER": header}
    show = "from django.conf import settings as s; print(s.SECURE_PROXY_SSL_HEADER)"
    result = manage("shell", "-c", show, env=env, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == expected


def test_a_request_the_proxy_marks_https_is_secure_and_not_redirected(settings, client, db):
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    plain = client.get("/api/v1/skills")
    assert plain.status_code == 301 and plain["Location"].startswith("https://")
    assert client.get("/api/v1/skills", HTTP_X_FORWARDED_PROTO="https").status_code == 200
    assert client.get("/api/v1/skills", HTTP_X_FORWARDED_PROTO="http").status_code == 301


SHOW_HTTPS = (
    "from django.conf import settings as s; print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
    "s.SECURE_HSTS_SECONDS, s.SECURE_SSL_REDIRECT)"
)
A_YEAR = 365 * 24 * 3600


@pytest.mark.parametrize(
    "changes, expected",
    [
        # A deployment that says nothing about HTTPS gets it (issue 34: no Secure cookies, no HSTS).
        ({"SKILLYARD_PROXY_SSL_HEADER": "", "SKILLYARD_TRUSTED_PROXIES": ""}, f"True True {A_YEAR} True"),
        # Behind a proxy that marks https requests, the registry can tell them apart: redirect on.
        ({}, f"True True {A_YEAR} True"),
        # Behind a proxy that does not say which requests came over TLS, every request looks plain
        # here: a redirect would loop, so the proxy redirects.
        ({"SKILLYARD_PROXY_SSL_HEADER": ""}, f"True True {A_YEAR} False"),
        ({"SKILLYARD_HTTPS": "0"}, "False False 0 False"),  # the explicit opt-out
    ],
)
def test_a_deployment_defaults_to_https_settings(tmp_path, changes, expected):
    env = {k: v for k, v in PRODUCTION.items() if k != "SKILLYARD_HTTPS"}
    env = {**env, "SKILLYARD_SECRET_KEY": secrets.token_urlsafe(50), **changes}
    result = manage("shell", "-c", SHOW_HTTPS, env=env, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == expected


def test_the_embedded_default_stays_on_plain_http(tmp_path):
    result = manage("shell", "-c", SHOW_HTTPS, env={}, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "False False 0 False"


def test_check_deploy_is_clean_without_saying_https(tmp_path):
    env = {k: v for k, v in PRODUCTION.items() if k != "SKILLYARD_HTTPS"}
    env["SKILLYARD_SECRET_KEY"] = secrets.token_urlsafe(50)
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=env, tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("host", [".com", ".", ".co.uk", ".localhost", "..com", ".com.au"])
def test_an_allowed_host_covering_a_whole_top_level_domain_is_refused(tmp_path, host):
    env = {**PRODUCTION, "SKILLYARD_SECRET_KEY": secrets.token_urlsafe(50)}
    env["SKILLYARD_ALLOWED_HOSTS"] = f"skills.example.com,{host}"
    result = manage("check", env=env, tmp_path=tmp_path)
    assert result.returncode != 0
    assert "SKILLYARD_ALLOWED_HOSTS" in result.stderr.strip().splitlines()[-1] and repr(host) in result.stderr


def test_allowed_hosts_naming_a_domain_and_its_subdomains_are_accepted(tmp_path):
    env = {**PRODUCTION, "SKILLYARD_SECRET_KEY": secrets.token_urlsafe(50)}
    env["SKILLYARD_ALLOWED_HOSTS"] = ".example.com,skills.example.org,.example.co.uk,10.0.0.5,[::1]"
    show = "from django.conf import settings as s; print(s.ALLOWED_HOSTS)"
    result = manage("shell", "-c", show, env=env, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "'.example.co.uk'" in result.stdout.strip().splitlines()[-1]


def test_launchers_that_serve_plain_http_off_the_embedded_defaults_opt_out_of_https_explicitly():
    """HTTPS is the default off the embedded defaults: what serves plain http says so."""
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yaml").read_text())
    assert compose["services"]["web"]["environment"]["SKILLYARD_HTTPS"] == "${SKILLYARD_HTTPS:-0}"
    postgres_run = (ROOT / "scripts" / "test.sh").read_text().split('DATABASE_URL="$SKILLYARD_TEST_POSTGRES_URL"')[1]
    assert "SKILLYARD_HTTPS=0" in postgres_run.split("pytest_status")[0]
