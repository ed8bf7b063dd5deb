"""Network for a sandboxed skill that asked for it and was allowed: an HTTP(S) proxy that
refuses this machine and private networks.

The sandbox itself never gets a network interface (Docker ``--network none``, bubblewrap
``--unshare-net``): its only way out is a Unix socket to :class:`EgressProxy`, running in the
skillctl process, exposed inside as ``http://127.0.0.1:3128`` by a small forwarder started
before the skill (``HTTP_PROXY``/``HTTPS_PROXY`` point at it). The proxy resolves each name
itself, refuses loopback, private, link-local (cloud metadata at 169.254.169.254), shared,
multicast and reserved addresses and every address of this host, and IPv6 addresses that
carry an IPv4 (mapped, 6to4, Teredo, NAT64: refused outright, see TRANSITION_NETWORKS), unless a
configured ``sandbox.network_allow`` CIDR covers them, and connects to the very address it checked (no
second lookup for DNS rebinding to win). Raw sockets and name lookups inside the sandbox do
not work: only proxied HTTP and HTTPS do.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import subprocess
import threading
from collections.abc import Iterable, Set
from pathlib import Path
from urllib.parse import urlsplit

PROXY_PORT = 3128  # inside the sandbox: 127.0.0.1:3128, the usual proxy port
SOCKET_NAME = "egress.sock"
FORWARDER_NAME = "forward.py"
MAX_HEADER_BYTES = 64 * 1024  # a proxy request line and headers; more is not a client we serve
CONNECT_TIMEOUT = 10.0
IDLE_TIMEOUT = 120.0  # a tunnel silent this long is closed
# Not covered by ipaddress' is_private: carrier-grade NAT space, reachable inside many clouds.
_EXTRA_BLOCKED = (ipaddress.ip_network("100.64.0.0/10"),)
# IPv6 ranges that carry an IPv4 address (RFC 3056, 4380, 6052, 8215): through a relay or a
# NAT64 gateway they reach that IPv4, which may be private. A sandbox never needs them, so they
# are refused whatever they carry, unless sandbox.network_allow lists them.
TRANSITION_NETWORKS = {
    "6to4": ipaddress.IPv6Network("2002::/16"),
    "Teredo": ipaddress.IPv6Network("2001::/32"),
    "NAT64": ipaddress.IPv6Network("64:ff9b::/96"),
    "local-use NAT64": ipaddress.IPv6Network("64:ff9b:1::/48"),
}
_NAT64 = TRANSITION_NETWORKS["NAT64"]
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")  # deprecated ::a.b.c.d (RFC 4291 2.5.5.1)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def host_addresses() -> set[Address]:
    """Every address of this machine's interfaces (what "the host's own addresses" means)."""
    found: set[Address] = set()
    try:
        out = subprocess.run(["ip", "-j", "addr", "show"], capture_output=True, text=True, timeout=5).stdout
        for interface in json.loads(out or "[]"):
            for info in interface.get("addr_info", []):
                found.add(ipaddress.ip_address(info["local"].split("%")[0]))
    except (OSError, ValueError, KeyError, subprocess.SubprocessError):
        pass
    try:
        for *_, sockaddr in socket.getaddrinfo(socket.gethostname(), None):
            found.add(ipaddress.ip_address(str(sockaddr[0]).split("%")[0]))
    except (OSError, ValueError):
        pass
    return found


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries: IPv4-mapped and -compatible, 6to4, NAT64,
    and Teredo's server and (de-obfuscated) client."""
    found = [v4 for v4 in (address.ipv4_mapped, address.sixtofour) if v4 is not None]
    found += list(address.teredo or ())
    if address in _NAT64 or (address in _IPV4_COMPATIBLE and int(address) > 1):  # not :: nor ::1
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


def refusal(address: Address, *, allow: Iterable[Network] = (), host: Set[Address] = frozenset()) -> str | None:
    """Why the sandbox may not reach ``address``, or None when it may."""
    if any(address in network for network in allow):
        return None
    if isinstance(address, ipaddress.IPv6Address):
        if why := _ipv6_refusal(address, host):
            return why
        address = address.ipv4_mapped or address
    checks = (
        (address in host, "an address of this machine"),
        (address.is_loopback, "loopback"),
        (address.is_link_local, "link-local (cloud metadata lives here)"),
        (address.is_private, "a private network"),
        (any(address in n for n in _EXTRA_BLOCKED), "shared address space"),
        (address.is_multicast or address.is_reserved or address.is_unspecified, "not a public address"),
    )
    return next((why for blocked, why in checks if blocked), None)


def _ipv6_refusal(address: ipaddress.IPv6Address, host: Set[Address]) -> str | None:
    """An IPv6 address carrying a refused IPv4, or in a transition range (TRANSITION_NETWORKS)."""
    for inner in embedded_ipv4(address):
        if why := refusal(inner, host=host):
            return f"carries {inner}: {why}"
    kind = next((name for name, network in TRANSITION_NETWORKS.items() if address in network), None)
    return f"a {kind} address, which carries IPv4 (not allowed unless sandbox.network_allow lists it)" if kind else None


class EgressProxy:
    """A CONNECT (and plain http) proxy on a Unix socket, one thread per connection."""

    def __init__(self, socket_path: Path, *, allow: Iterable[str] = ()) -> None:
        self.socket_path = Path(socket_path)
        self.allow = [ipaddress.ip_network(a, strict=False) for a in allow]
        self.host = host_addresses()
        self.refused: list[str] = []  # "host:port: why", for the run's report
        self._server: socket.socket | None = None

    def __enter__(self) -> EgressProxy:
        self._server = server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(self.socket_path))
        os.chmod(self.socket_path, 0o666)  # the sandbox runs as another uid
        server.listen(32)
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
        self.socket_path.unlink(missing_ok=True)

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with client:
            client.settimeout(IDLE_TIMEOUT)
            head = _read_head(client)
            if head is None:
                return
            method, target, rest = _parse_request_line(head)
            if method != "CONNECT" and not target.lower().startswith("http://"):
                _answer(client, 400, "only CONNECT and http:// requests go through this proxy")
                return
            try:
                host, port, path = request_target(method, target)
            except ValueError as err:
                _answer(client, 400, f"bad request target {target[:200]!r}: {err}")
                return
            upstream = self._open(client, host, port)
            if upstream is None:
                return
            if method == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                _pipe(client, upstream, rest)
            else:  # origin-form for the server: "GET /path HTTP/1.1"
                line, _, headers = head.partition(b"\r\n")
                version = line.rsplit(b" ", 1)[-1]
                _pipe(client, upstream, b"%s %s %s\r\n" % (method.encode(), path.encode(), version) + headers)

    def _open(self, client: socket.socket, host: str, port: int) -> socket.socket | None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            _answer(client, 502, f"cannot resolve {host}")
            return None
        for *_, sockaddr in infos:
            address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
            if why := refusal(address, allow=self.allow, host=self.host):
                self.refused.append(f"{host}:{port} ({address}): {why}")
                _answer(client, 403, f"the sandbox may not reach {host} ({address}): {why}")
                return None
        sockaddr = infos[0][4]  # the address just checked: no second lookup to rebind
        try:
            return socket.create_connection((str(sockaddr[0]), int(sockaddr[1])), timeout=CONNECT_TIMEOUT)
        except OSError:
            _answer(client, 502, f"cannot connect to {host}:{port}")
            return None


def request_target(method: str, target: str) -> tuple[str, int, str]:
    """(host, port, origin-form path) of a CONNECT authority or an http:// absolute URI; an
    IPv6 literal comes bracketed (``[::1]:8080``) and is returned bare. ValueError when malformed."""
    parts = urlsplit(target if method != "CONNECT" else f"//{target}")
    host, port = parts.hostname, parts.port  # .port raises ValueError for a bad or out-of-range port
    if not host:
        raise ValueError("no host")
    if method == "CONNECT":
        if port is None or parts.path or parts.query:
            raise ValueError("CONNECT needs host:port")
        return host, port, ""
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return host, 80 if port is None else port, path


def _read_head(conn: socket.socket) -> bytes | None:
    data = b""
    while b"\r\n\r\n" not in data:
        try:
            chunk = conn.recv(4096)
        except OSError:
            return None
        if not chunk or len(data) > MAX_HEADER_BYTES:
            return None
        data += chunk
    return data


def _parse_request_line(head: bytes) -> tuple[str, str, bytes]:
    end = head.index(b"\r\n\r\n") + 4
    line = head.split(b"\r\n", 1)[0].decode("latin-1").split()
    method, target = (line + ["", ""])[:2]
    return method.upper(), target, head[end:] if method.upper() == "CONNECT" else b""


def _answer(conn: socket.socket, status: int, text: str) -> None:
    body = (text + "\n").encode()
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    try:
        conn.sendall(
            f"HTTP/1.1 {status} {reason}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body
        )
    except OSError:
        pass


def _pipe(client: socket.socket, upstream: socket.socket, first: bytes) -> None:
    with upstream:
        upstream.settimeout(IDLE_TIMEOUT)
        if first:
            upstream.sendall(first)
        back = threading.Thread(target=_copy, args=(upstream, client), daemon=True)
        back.start()
        _copy(client, upstream)
        back.join(IDLE_TIMEOUT)


def _copy(source: socket.socket, dest: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            dest.sendall(chunk)
    except OSError:
        pass
    finally:
        try:
            dest.shutdown(socket.SHUT_WR)
        except OSError:
            pass


# Runs inside the sandbox (python3 only, no skillctl there): listen on 127.0.0.1:PORT, carry each
# connection to the proxy's Unix socket, and exec the skill's command in the foreground.
FORWARDER = r"""
import os, socket, sys, threading
port, path, command = int(sys.argv[1]), sys.argv[2], sys.argv[4:]
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen(32)
def copy(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    finally:
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass
def serve(conn):
    up = socket.socket(socket.AF_UNIX)
    try:
        up.connect(path)
    except OSError:
        conn.close()
        return
    threading.Thread(target=copy, args=(up, conn), daemon=True).start()
    copy(conn, up)
if os.fork() == 0:
    try:
        import ctypes
        ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL: gone with the skill
    except Exception:
        pass
    while True:
        c, _ = server.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
server.close()
os.execvp(command[0], command)
"""


def proxy_env() -> dict[str, str]:
    url = f"http://127.0.0.1:{PROXY_PORT}"
    return {
        "HTTP_PROXY": url,
        "HTTPS_PROXY": url,
        "http_proxy": url,
        "https_proxy": url,
        "ALL_PROXY": url,
        "NO_PROXY": "",
        "no_proxy": "",
    }
