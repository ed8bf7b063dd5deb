"""Throttles whose rates are read per request from settings (env ``SKILLYARD_THROTTLE_*``).

DRF's own classes copy the rates once at import, which makes them impossible to change in a test
or a running shell; these read ``api_settings`` each time. A refusal is 429 with ``Retry-After``.

Each client has one counter per window (``<rate's period>``), bumped with one cache call. DRF's
own throttles keep a list of every request's time in the window and read and write it whole on
each request: at 600/min that is 600 floats pickled to Redis and back, twice per request (two
throttles), and a client allowed more requests pays more per request. A fixed window lets a
client send up to twice the rate across a window's edge, which every limit here can afford.
"""

from __future__ import annotations

import time

from django.core.cache import cache
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from registry.clients import client_address


class _RateFromSettings:
    cache_format = "throttle:%(scope)s:%(ident)s"
    rate: str | None
    num_requests: int
    duration: int

    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_ident(self, request):
        # DRF's own trusts any X-Forwarded-For when NUM_PROXIES is unset: a spoofed header
        # was a fresh identity per request. The client behind trusted proxies only.
        return client_address(request.META)

    def allow_request(self, request, view) -> bool:  # noqa: ANN001
        if self.rate is None or (key := self.get_cache_key(request, view)) is None:  # type: ignore[attr-defined]
            return True
        now = time.time()
        window = int(now // self.duration)
        self.retry_after = self.duration - (now - window * self.duration)
        count = _bump(f"{key}:{window}", timeout=self.duration + 1)
        # None: the cache is down and fails open (settings.CACHES): the request goes through.
        return count is None or count <= self.num_requests

    def wait(self) -> float:
        return self.retry_after


def _bump(key: str, *, timeout: int) -> int | None:
    """Add one to the window's counter, creating it; the new count (None: no cache)."""
    try:
        return cache.incr(key)
    except ValueError:  # no counter yet in this window
        if cache.add(key, 1, timeout):
            return 1
        try:
            return cache.incr(key)  # another request created it meanwhile
        except ValueError:
            return None


class AnonThrottle(_RateFromSettings, AnonRateThrottle):
    pass


class UserThrottle(_RateFromSettings, UserRateThrottle):
    """Signed-in users and tokens, by user. DRF's own also counts anonymous requests by address,
    a second counter beside AnonThrottle's for the same requests: here the ``anon`` rate alone
    governs them (one cache call a request instead of two)."""

    def get_cache_key(self, request, view):  # noqa: ANN001
        if not (request.user and request.user.is_authenticated):
            return None
        return super().get_cache_key(request, view)


class PublishThrottle(_RateFromSettings, UserRateThrottle):
    scope = "publish"
