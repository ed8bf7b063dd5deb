"""Failed authentications, counted in the shared cache: bad tokens per client address, failed
sign-ins (admin and catalog) per (username, address) and per address (registry/auth_backends.py).
Past the limit a window, the next sign-in is refused before the password is even checked, so
guessing costs real time; a bad token is refused with 429, a valid one never is
(registry/api/authentication.py).
The catalog's sign-up counts its attempts here too, against its own rate.

The window slides: the failures counted are this window's plus the previous window's, weighted
by how much of it still lies within the last ``period`` seconds (rounded up). A fixed window
would forget every failure at its boundary, letting twice the rate through around it.
"""

from __future__ import annotations

import math
import time

from django.conf import settings
from django.core.cache import cache

_PERIODS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}


def _rate(rate: str | None = None) -> tuple[int, int]:
    """(attempts allowed, window seconds) from ``rate`` ("10/hour"), by default
    ``SKILLYARD_THROTTLE_AUTH_FAILURES`` ("10/min")."""
    count, _, period = (rate or settings.SKILLYARD_THROTTLE_AUTH_FAILURES).partition("/")
    return int(count), _PERIODS[period.strip().lower()]


def _window(seconds: int) -> tuple[int, float]:
    """(the current window's number, how far into it we are, 0..1)."""
    now = time.time()
    return int(now // seconds), (now % seconds) / seconds


def _failures(who: str, seconds: int) -> tuple[int, int]:
    """(failures within the last ``seconds``, seconds until the oldest counted ones age out)."""
    window, elapsed = _window(seconds)
    current = cache.get(f"authfail:{who}:{window}") or 0
    previous = cache.get(f"authfail:{who}:{window - 1}") or 0
    remaining = max(1, math.ceil(seconds * (1 - elapsed)))
    return current + math.ceil(previous * (1 - elapsed)), remaining


def blocked(*who: str, rate: str | None = None) -> int | None:
    """Seconds to wait when any of ``who`` (``ip:…``, ``user:…@…``) used up its failures, else None."""
    allowed, seconds = _rate(rate)
    for item in who:
        count, remaining = _failures(item, seconds)
        if count >= allowed:
            return remaining
    return None


def record_failure(*who: str, rate: str | None = None) -> None:
    _, seconds = _rate(rate)
    window, _ = _window(seconds)
    for item in who:
        key = f"authfail:{item}:{window}"
        cache.add(key, 0, 2 * seconds + 1)  # read again as the previous window's count
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, 2 * seconds + 1)


def bad_token_counted(who: str) -> int | None:
    """A bad token came from ``who`` (``ip:…``): seconds to wait when that address already used
    up its failures (answer 429), else None once it is counted (answer 401).

    Call it only after the token was looked up and found bad, never before: a valid token is
    always accepted, so someone sending bad tokens from a shared address (an office, a CI
    runner's NAT) locks none of its other users out. That costs no safety: a token holds 256
    random bits, so no rate of guessing finds one; the limit tells a client stuck on a wrong or
    revoked token to back off."""
    if wait := blocked(who):
        return wait
    record_failure(who)
    return None
