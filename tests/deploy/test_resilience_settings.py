"""The settings that keep a deployment answering through faults (issue 39, the soak): PostgreSQL
through a bounded connection pool, the Redis cache failing open, and the check recovery timings
read from the environment. Each is read from a fresh process, as a deployment starts."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from tests.deploy.test_settings import PRODUCTION, manage

SHOW = """
import json
from django.conf import settings as s
db, cache = s.DATABASES["default"], s.CACHES["default"]
print(json.dumps({
    "conn_max_age": db["CONN_MAX_AGE"], "pool": db.get("OPTIONS", {}).get("pool"),
    "cache": cache["BACKEND"], "cache_options": cache.get("OPTIONS", {}),
    "visibility": s.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"],
    "sweep": s.CELERY_BEAT_SCHEDULE["checks-sweep"]["schedule"],
    "stale": s.SKILLYARD_CHECK_STALE_SECONDS, "pending": s.SKILLYARD_CHECK_PENDING_SECONDS,
}))
"""


def shown(tmp_path: Path, **env: str) -> dict:
    environ = {**PRODUCTION, "SKILLYARD_SECRET_KEY": secrets.token_urlsafe(50), **env}
    result = manage("shell", "-c", SHOW, env=environ, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_postgresql_deployment_pools_its_connections_and_keeps_none_per_thread(tmp_path):
    found = shown(tmp_path)
    assert found["pool"] == {"min_size": 1, "max_size": 10, "timeout": 10.0}
    assert found["conn_max_age"] == 0  # Django refuses persistent connections with a pool
    sized = shown(tmp_path, SKILLYARD_DB_POOL_MAX_SIZE="4", SKILLYARD_DB_POOL_TIMEOUT_SECONDS="2.5")
    assert sized["pool"] == {"min_size": 1, "max_size": 4, "timeout": 2.5}


def test_a_pool_size_of_zero_turns_pooling_off(tmp_path):
    found = shown(tmp_path, SKILLYARD_DB_POOL_MAX_SIZE="0", SKILLYARD_DB_CONN_MAX_AGE="30")
    assert found["pool"] is None and found["conn_max_age"] == 30


def test_the_redis_cache_fails_open_with_short_timeouts(tmp_path):
    found = shown(tmp_path)
    assert found["cache"] == "django_redis.cache.RedisCache"
    assert found["cache_options"] == {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 0.25, "SOCKET_TIMEOUT": 0.25}


def test_the_check_recovery_timings_come_from_the_environment(tmp_path):
    defaults = shown(tmp_path)
    assert (defaults["visibility"], defaults["stale"], defaults["pending"], defaults["sweep"]) == (900, 480, 600, 120)
    short = shown(
        tmp_path,
        SKILLYARD_BROKER_VISIBILITY_TIMEOUT="60",
        SKILLYARD_CHECK_STALE_SECONDS="30",
        SKILLYARD_CHECK_PENDING_SECONDS="40",
        SKILLYARD_CHECK_SWEEP_SECONDS="5",
    )
    assert (short["visibility"], short["stale"], short["pending"], short["sweep"]) == (60, 30, 40, 5.0)
