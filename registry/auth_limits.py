"""Failed authentications, counted in the shared cache: bad tokens per client address, failed
sign-ins (admin and catalog) per address and per username. Past the limit a window, the next
attempt is refused before the credentials are even checked, so guessing costs real time.
The catalog's sign-up counts its attempts here too, against its own rate.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache

_PERIODS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}


def _rate(rate: str | None = None) -> tuple[int, int]:
    """(attempts allowed, window seconds) from ``rate`` ("10/hour"), by default
    ``SKILLYARD_THROTTLE_AUTH_FAILURES`` ("10/min")."""
    count, _, period = (rate or settings.SKILLYARD_THROTTLE_AUTH_FAILURES).partition("/")
    return int(count), _PERIODS[period.strip().lower()]


def _key(who: str, rate: str | None) -> tuple[str, int]:
    _, seconds = _rate(rate)
    window = int(time.time() // seconds)
    return f"authfail:{who}:{window}", seconds - int(time.time() % seconds)


def blocked(*who: str, rate: str | None = None) -> int | None:
    """Seconds to wait when any of ``who`` (``ip:…``, ``user:…``) used up its failures, else None."""
    allowed, _ = _rate(rate)
    for item in who:
        key, remaining = _key(item, rate)
        if (cache.get(key) or 0) >= allowed:
            return max(1, remaining)
    return None


def record_failure(*who: str, rate: str | None = None) -> None:
    for item in who:
        key, remaining = _key(item, rate)
        cache.add(key, 0, remaining + 1)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, remaining + 1)
