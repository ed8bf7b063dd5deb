"""Network for a sandboxed skill that asked for it and was allowed: an HTTP(S) proxy that
refuses this machine and private networks.

The sandbox itself never gets a network interface (Docker ``--network none``, bubblewrap
``--unshare-net``): its only way out is a Unix socket to :class:`EgressProxy`, running in the
skillctl process, exposed inside as ``http://127.0.0.1:3128`` by a small forwarder started
before the skill (``HTTP_PROXY``/``HTTPS_PROXY`` point at it). The proxy resolves each name
itself, refuses loopback, private, link-local (cloud metadata at 169.254.169.254), shared,
multicast and reserved addresses and every address of this host, unless a configured
``sandbox.network_allow`` CIDR covers them, and connects to the very address it checked (no
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
from collections.abc import Iterable
from pathlib import Path

PROXY_PORT = 3128  # inside the sandbox: 127.0.0.1:3128, the usual proxy port
SOCKET_NAME = "egress.sock"
FORWARDER_NAME = "forward.py"
MAX_HEADER_BYTES = 64 * 1024  # a proxy request line and headers; more is not a client we serve
CONNECT_TIMEOUT = 10.0
IDLE_TIMEOUT = 120.0  # a tunnel silent this long is closed
# Not covered by ipaddress' is_private: carrier-grade NAT space, reachable inside many clouds.
_EXTRA_BLOCKED = (ipaddress.ip_network("100.64.0.0/10"),)

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
            found.add(ipaddress.ip_address(sockaddr[0].split("%")[0]))
    except (OSError, ValueError):
        pass
    return found


def refusal(address: Address, *, allow: Iterable[Network] = (), host: set[Address] = frozenset()) -> str | None:
    """Why the sandbox may not reach ``address``, or None when it may."""
    if any(address in network for network in allow):
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    checks = (
        (address in host, "an address of this machine"),
        (address.is_loopback, "loopback"),
        (address.is_link_local, "link-local (cloud metadata lives here)"),
        (address.is_private, "a private network"),
        (any(address in n for n in _EXTRA_BLOCKED), "shared address space"),
        (address.is_multicast or address.is_reserved or address.is_unspecified, "not a public address"),
    )
    return next((why for blocked, why in checks if blocked), None)


class EgressProxy:
    """A CONNECT (and plain http) proxy on a Unix socket, one thread per connection."""

    def __init__(self, socket_path: Path, *, allow: Iterable[str] = ()) -> None:
        self.socket_path = Path(socket_path)
        self.allow = [ipaddress.ip_network(a, strict=False) for a in allow]
        self.host = host_addresses()
        self.refused: list[str] = []  # "host:port: why", for the run's report
        self._server: socket.socket | None = None

    def __enter__(self) -> EgressProxy:
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.socket_path))
        os.chmod(self.socket_path, 0o666)  # the sandbox runs as another uid
        self._server.listen(32)
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
        self.socket_path.unlink(missing_ok=True)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
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
            if method == "CONNECT":
                host, _, port = target.rpartition(":")
                upstream = self._open(client, host.strip("[]"), int(port or 443))
                if upstream is not None:
                    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    _pipe(client, upstream, rest)
            elif target.startswith("http://"):
                hostport, _, path = target[7:].partition("/")
                host, _, port = hostport.rpartition(":") if ":" in hostport else (hostport, "", "80")
                upstream = self._open(client, host.strip("[]"), int(port or 80))
                if upstream is not None:  # origin-form for the server: "GET /path HTTP/1.1"
                    line, _, headers = head.partition(b"\r\n")
                    version = line.rsplit(b" ", 1)[-1]
                    _pipe(client, upstream, b"%s /%s %s\r\n" % (method.encode(), path.encode(), version) + headers)
            else:
                _answer(client, 400, "only CONNECT and http:// requests go through this proxy")

    def _open(self, client: socket.socket, host: str, port: int) -> socket.socket | None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            _answer(client, 502, f"cannot resolve {host}")
            return None
        for *_, sockaddr in infos:
            address = ipaddress.ip_address(sockaddr[0].split("%")[0])
            if why := refusal(address, allow=self.allow, host=self.host):
                self.refused.append(f"{host}:{port} ({address}): {why}")
                _answer(client, 403, f"the sandbox may not reach {host} ({address}): {why}")
                return None
        sockaddr = infos[0][4]  # the address just checked: no second lookup to rebind
        try:
            return socket.create_connection(sockaddr[:2], timeout=CONNECT_TIMEOUT)
        except OSError:
            _answer(client, 502, f"cannot connect to {host}:{port}")
            return None


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
