"""Where the client may send requests (and tokens): https anywhere, plain http only to this
machine. The same rule for a registry's URL, an archive URL, and every redirect hop of either
(an httpx request hook checks each request before any connection is made).

Also the cap on JSON a registry may answer with: a 300 MB body once took 650 MB of memory.
"""

from __future__ import annotations

import ipaddress
import re
import sys
from collections.abc import Iterator
from urllib.parse import urlsplit

from skillctl.errors import NetworkError, SkillctlError, UsageError

# httpx is imported here, and the client's other modules take it from here
# (``from skillctl.transport import httpx``), for one reason: start-up time. httpx's
# ``__init__`` imports ``httpx._main``, its own command-line tool, which pulls in click, rich
# (console, progress, syntax, table) and pygments: ~50 ms of a fresh ``skillctl`` process that
# never runs it. httpx does that import inside ``try: ... except ImportError`` (the CLI is an
# optional extra), so a ``None`` in ``sys.modules`` makes it fail cleanly and be skipped. The
# block is lifted right after (a later ``import httpx._main`` works as usual), is not put when
# httpx is already imported, and an httpx that does not tolerate it is imported again without it.
_HTTPX_CLI = "httpx._main"
_block_httpx_cli = "httpx" not in sys.modules and _HTTPX_CLI not in sys.modules
if _block_httpx_cli:
    sys.modules[_HTTPX_CLI] = None  # type: ignore[assignment]
try:
    import httpx
except ImportError:
    if not _block_httpx_cli:
        raise
    del sys.modules[_HTTPX_CLI]
    _block_httpx_cli = False
    import httpx
finally:
    if _block_httpx_cli and sys.modules.get(_HTTPX_CLI, False) is None:
        del sys.modules[_HTTPX_CLI]

# The largest JSON a registry sends (a search page, a version listing 1,000 files) is well under
# 1 MiB; 16 MiB leaves room and still bounds what a hostile server can make us hold.
MAX_JSON_BYTES = 16 * 1024 * 1024
SAFE_HINT = "Use an https:// URL (plain http is allowed only for 127.0.0.1, ::1 and localhost)."


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def url_problem(url: str) -> str | None:
    """Why ``url`` may not be fetched (or carry a token), or None when it may."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and is_loopback(parts.hostname):
        return None
    return f"{parts.scheme or 'no scheme'}:// to {parts.hostname or 'no host'} is not https"


def check_request(request: httpx.Request) -> None:
    """httpx ``request`` hook: every request, redirects included, obeys :func:`url_problem`."""
    if problem := url_problem(str(request.url)):
        raise SkillctlError(
            f"refusing to connect to {request.url.copy_with(query=None)}: {problem}",
            hint=SAFE_HINT + " A redirect to such a URL is refused too.",
            code="transport.insecure_url",
        )


def require_safe_url(url: str, *, what: str) -> None:
    """For URLs a user gives (a registry, an archive): a usage error naming the rule."""
    if problem := url_problem(url):
        raise UsageError(f"{what} {url} is refused: {problem}", hint=SAFE_HINT, code="transport.insecure_url")


def read_capped(response: httpx.Response, limit: int = MAX_JSON_BYTES) -> bytes:
    """The body of a streamed response, refusing (before holding it) more than ``limit`` bytes."""
    declared = response.headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise _too_large(response, int(declared), limit)
    chunks, size = [], 0
    for chunk in _chunks(response):
        size += len(chunk)
        if size > limit:
            raise _too_large(response, size, limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _chunks(response: httpx.Response) -> Iterator[bytes]:
    yield from response.iter_bytes(64 * 1024)


def _too_large(response: httpx.Response, size: int, limit: int) -> NetworkError:
    return NetworkError(
        f"{response.url.host} answered with {size} bytes or more where at most {limit // (1024 * 1024)} MiB of JSON was expected",
        hint="That is not a registry answer we accept; check the registry URL (`skillctl config`).",
        code="registry.response_too_large",
    )


def connection_cause(exc: BaseException, *, server: str = "server") -> str:
    """Why a connection failed, in words ("connection refused", "name not resolved", ...);
    ``server`` names what was called (the registry, the model server) in the hint."""
    import socket
    import ssl

    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    for err in seen:
        if isinstance(err, ConnectionRefusedError):
            return f"connection refused (is the {server} running on that port?)"
        if isinstance(err, socket.gaierror):
            return "name not resolved (check the host name, or your DNS)"
        if isinstance(err, ssl.SSLCertVerificationError):
            detail = getattr(err, "verify_message", "") or ""
            return "TLS certificate not trusted" + (f" ({detail})" if detail else "")
        if isinstance(err, ssl.SSLError):
            return "TLS handshake failed"
        if isinstance(err, ConnectionResetError):
            return "connection reset by the server"
        if isinstance(err, TimeoutError):
            return "timed out"
        if isinstance(err, OSError) and err.strerror:
            return err.strerror[0].lower() + err.strerror[1:]
    text = str(exc).lower()
    for needle, words in (
        ("refused", f"connection refused (is the {server} running on that port?)"),
        ("name or service not known", "name not resolved (check the host name, or your DNS)"),
        ("nodename nor servname", "name not resolved (check the host name, or your DNS)"),
        ("certificate", "TLS certificate not trusted"),
    ):
        if needle in text:
            return words
    return re.sub(r"sky_\w+", "sky_****", str(exc)) or type(exc).__name__
