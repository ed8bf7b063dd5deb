"""Probes and metrics for whoever runs the registry (docs/operations.md).

``/healthz``: the process answers (no database, nothing outside it: a liveness probe must not
restart every web process because PostgreSQL is down). ``/readyz``: the database, the archive
storage, the broker and the shared cache (the last two when configured) answer; 503 naming the
ones that failed, so a load balancer stops sending traffic here. ``/metrics``: Prometheus'
text format (skillyard/metrics.py), not public.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.core.files.storage import FileSystemStorage
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache

from registry.storage import archive_storage
from skillyard import metrics

logger = logging.getLogger(__name__)


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _storage() -> None:
    """Files: the folder is there and writable; S3: the bucket answers (HEAD, no listing)."""
    storage = archive_storage()
    if isinstance(storage, FileSystemStorage):
        location = str(storage.location)  # made by the first publish: its parent must take it
        folder = location if os.path.isdir(location) else os.path.dirname(location)
        if not os.access(folder, os.W_OK):
            raise OSError(f"{folder} is missing or not writable")
        return
    s3 = storage.connection.meta.client  # type: ignore[attr-defined]
    s3.head_bucket(Bucket=storage.bucket_name)  # type: ignore[attr-defined]


def _broker() -> None:
    from worker.celery import app

    with app.connection_for_write(url=settings.CELERY_BROKER_URL) as conn:
        conn.ensure_connection(max_retries=1)


def _cache() -> None:
    # Asked of Redis itself: the cache's own calls fail open (settings.CACHES) and would say ok.
    cache.client.get_client(write=False).ping()  # type: ignore[attr-defined]


def _dependencies() -> dict[str, Callable[[], None]]:
    found: dict[str, Callable[[], None]] = {"database": _database, "storage": _storage}
    if not settings.CELERY_BROKER_URL.startswith("memory://"):
        found["broker"] = _broker
    if "redis" in settings.CACHES["default"]["BACKEND"].lower():
        found["cache"] = _cache
    return found


@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    """200 when every dependency answers; 503 with ``failed`` naming those that did not. The
    reasons go to the log only: a public probe must not describe the network behind it."""
    checks: dict[str, str] = {}
    for name, probe in _dependencies().items():
        try:
            probe()
            checks[name] = "ok"
        except Exception as exc:  # noqa: BLE001 - any failure means not ready; its reason is logged
            logger.warning("readyz: %s is not reachable: %s: %s", name, type(exc).__name__, exc)
            checks[name] = "failed"
    failed = [name for name, state in checks.items() if state != "ok"]
    body = {"status": "unavailable" if failed else "ok", "checks": checks, "failed": failed}
    return JsonResponse(body, status=503 if failed else 200)


@never_cache
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus' scrape; 404 to anyone without the token or outside the allowed networks."""
    if not metrics.metrics_allowed(request):
        raise Http404("not found")
    body, content_type = metrics.exposition()
    return HttpResponse(body, content_type=content_type)
