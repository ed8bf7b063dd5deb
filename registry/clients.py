"""Who is asking: the client address behind trusted proxies, and the identity throttles,
download counts and sign-in limits key on.

``X-Forwarded-For`` is believed only when the connection comes from a proxy listed in
``SKILLYARD_TRUSTED_PROXIES``, and then only up to the first address that is not one of them
(reading right to left: the proxies append, the client can write anything on the left).
Ten spoofed ``X-Forwarded-For`` values once got ten requests past a 5/min limit.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from functools import lru_cache

from django.conf import settings


@lru_cache(maxsize=8)
def _networks(spec: tuple[str, ...]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(item, strict=False) for item in spec)


def _trusted(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in _networks(tuple(settings.SKILLYARD_TRUSTED_PROXIES)))


def client_address(meta: Mapping[str, str]) -> str:
    """The address of the client a request (its ``META``) is for: never a proxy's, never forged."""
    peer = meta.get("REMOTE_ADDR", "") or "unknown"
    if not _trusted(peer):
        return peer
    hops = [h.strip() for h in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if h.strip()]
    for hop in reversed(hops):
        if not _trusted(hop):
            try:
                return str(ipaddress.ip_address(hop))
            except ValueError:
                return peer  # garbage where an address should be: the proxy is what we know
    return hops[0] if hops else peer


def client_identity(request) -> str:  # noqa: ANN001
    """The user when signed in (a token or a session), else the client address."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    return f"ip:{client_address(request.META)}"
