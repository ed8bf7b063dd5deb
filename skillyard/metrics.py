"""Prometheus metrics (prometheus-client): what the registry counts, and ``/metrics``.

Requests are counted by route *pattern* (``api/v1/skills/<str:name>/download``, never the raw
path: one series per skill would be unbounded), method and status, with a latency histogram;
publish checks by name and outcome with their run time (recorded when a check finishes, in the
worker that ran it); new versions published and archives downloaded (in their services);
cache calls that failed and were let through (``CacheErrors``, the cache failing open).
The check queue (pending and running checks) is read from the database at scrape time.

Several processes (uvicorn or gunicorn workers, Celery workers) each write their own files under
``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's multiprocess mode); ``SKILLYARD_METRICS_DIR``
is that folder shared by several hosts or containers, each process writing under
``<dir>/<hostname>/`` (settings.py sets it) so two hosts' process ids never collide, and
``/metrics`` adds up every file below it. Without either, one process's own counters are served.

``/metrics`` is not public: it answers a bearer token (``SKILLYARD_METRICS_TOKEN``) or a client
in ``SKILLYARD_METRICS_NETWORKS`` (default loopback), else 404 (docs/operations.md).
"""

from __future__ import annotations

import glob
import hmac
import ipaddress
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.http import HttpRequest, HttpResponseBase
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

from registry.clients import client_address

if TYPE_CHECKING:
    from registry.models import VersionCheck

# Seconds: a cached read takes ~5 ms, a publish up to a few seconds, a 50 MiB download longer.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# A scan takes under a second; the tests check up to its 5-minute sandbox limit.
CHECK_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
# Any other method is one label value: a client sending made-up methods cannot add series.
METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

REQUESTS = Counter(
    "skillyard_http_requests",
    "HTTP requests answered, by route pattern, method and status.",
    ["route", "method", "status"],
)
LATENCY = Histogram(
    "skillyard_http_request_duration_seconds",
    "Time to the response (a streamed body's transfer not included), by route pattern and method.",
    ["route", "method"],
    buckets=LATENCY_BUCKETS,
)
CHECK_DURATION = Histogram(
    "skillyard_check_duration_seconds",
    "Run time of finished publish checks (start to outcome), by check and outcome (done | error).",
    ["check", "status"],
    buckets=CHECK_BUCKETS,
)
PUBLISHES = Counter("skillyard_publishes", "New versions stored (an identical re-publish is not counted).")
DOWNLOADS = Counter(
    "skillyard_downloads", "Archives served by the download endpoints (every GET, not the ranking count)."
)

CACHE_ERRORS = Counter(
    "skillyard_cache_errors",
    "Cache calls that failed (Redis down or too slow) and were let through: the cache fails open.",
)


def route_of(request: HttpRequest) -> str:
    """The URL pattern that answered, ``static`` for static files, ``unmatched`` for the rest."""
    match = getattr(request, "resolver_match", None)
    if match is not None and match.route:
        return match.route
    if request.path.startswith(settings.STATIC_URL):
        return "static"
    return "unmatched"


class RequestMetrics:
    """Middleware (first in the list, so it times the others too): count and time each request."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        start = time.perf_counter()
        response = self.get_response(request)
        route, method = route_of(request), request.method if request.method in METHODS else "other"
        LATENCY.labels(route, method).observe(time.perf_counter() - start)
        REQUESTS.labels(route, method, str(response.status_code)).inc()
        return response


def publish_counted() -> None:
    """A new version was stored: counted once the publish commits."""
    transaction.on_commit(PUBLISHES.inc)


def download_counted() -> None:
    DOWNLOADS.inc()


def check_observed(check: VersionCheck) -> None:
    """A check reached its outcome (done or error): its run time, recorded once that commits."""
    if check.started_at is None or check.finished_at is None:
        return
    name, status = str(check.name), str(check.status)
    seconds = max((check.finished_at - check.started_at).total_seconds(), 0.0)
    transaction.on_commit(lambda: CHECK_DURATION.labels(name, status).observe(seconds))


class CacheErrors(logging.Filter):
    """On django-redis's logger (settings.LOGGING): counts every cache error it let through and
    lets one log record pass per ``SKILLYARD_CACHE_ERROR_LOG_SECONDS``, with the number held back:
    a Redis outage under load is thousands of failed calls a minute, one line says it."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._last = float("-inf")
        self._held = 0

    def filter(self, record: logging.LogRecord) -> bool:
        CACHE_ERRORS.inc()
        now = time.monotonic()
        with self._lock:
            if now - self._last < settings.SKILLYARD_CACHE_ERROR_LOG_SECONDS:
                self._held += 1
                return False
            held, self._held, self._last = self._held, 0, now
        error = record.exc_info[1] if record.exc_info else None
        record.msg = "cache call failed, let through (the cache fails open): %s; %d more since the last line"
        record.args, record.exc_info, record.exc_text = (error, held), None, None
        return True


class CheckQueueCollector:
    """Pending and running checks per check name, counted in the database at each scrape."""

    def collect(self) -> Iterator[Metric]:
        from django.db.models import Count

        from registry.models import VersionCheck

        waiting = (VersionCheck.Status.PENDING, VersionCheck.Status.RUNNING)
        rows = VersionCheck.objects.filter(status__in=waiting).values_list("name", "status").annotate(n=Count("id"))
        counts = {(name, status): n for name, status, n in rows}
        family = GaugeMetricFamily(
            "skillyard_checks_queued",
            "Publish checks not finished now: pending or running.",
            labels=["check", "status"],
        )
        for name in VersionCheck.Name.values:
            for status in waiting:
                family.add_metric([name, status], counts.get((name, status), 0))
        yield family


class _TreeCollector(MultiProcessCollector):
    """prometheus-client's multiprocess collector over every host folder below the shared one."""

    def collect(self) -> Iterable[Metric]:
        return self.merge(glob.glob(os.path.join(self._path, "**", "*.db"), recursive=True), accumulate=True)


class _ThisProcess:
    """Without multiprocess mode: this process's own metrics (the default registry's)."""

    def collect(self) -> Iterable[Metric]:
        return REGISTRY.collect()


def exposition() -> tuple[bytes, str]:
    """The metrics in Prometheus' text format, and its content type."""
    registry = CollectorRegistry()
    shared = settings.SKILLYARD_METRICS_DIR or os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")
    if shared:
        _TreeCollector(registry, path=shared)
    else:
        registry.register(_ThisProcess())
    registry.register(CheckQueueCollector())
    return generate_latest(registry), CONTENT_TYPE_LATEST


def metrics_allowed(request: HttpRequest) -> bool:
    """The bearer token when one is set, else (or also) a client address in the allowed networks.
    A request forwarded by a proxy that is not trusted counts as from its real client, unknown."""
    token = settings.SKILLYARD_METRICS_TOKEN
    given = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        return True
    address = client_address(request.META)
    forwarded = "HTTP_X_FORWARDED_FOR" in request.META or "HTTP_FORWARDED" in request.META
    if forwarded and address == request.META.get("REMOTE_ADDR"):
        return False  # a proxy we do not trust (or one that hid the client): not the address it came from
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in ipaddress.ip_network(net, strict=False) for net in settings.SKILLYARD_METRICS_NETWORKS)
