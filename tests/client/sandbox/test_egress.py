"""The egress proxy's address policy and request parsing (issue 34, item 11): IPv6 literals in
request targets are parsed, not crashed on, and IPv6 addresses that carry an IPv4 (6to4, Teredo,
NAT64, mapped, compatible) are refused. Only policy decisions are asserted; the one proxy here
listens on a Unix socket and is only sent requests it refuses (no traffic leaves the machine)."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from skillctl.sandbox.egress import EgressProxy, embedded_ipv4, refusal, request_target

ip = ipaddress.ip_address


@pytest.mark.parametrize(
    ("address", "carried"),
    [
        ("2002:a00:1::1", "10.0.0.1"),  # 6to4: bits 16-48
        ("2002:c0a8:101::", "192.168.1.1"),
        ("64:ff9b::a9fe:a9fe", "169.254.169.254"),  # NAT64: the last 32 bits (cloud metadata)
        ("64:ff9b::7f00:1", "127.0.0.1"),
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "10.0.0.1"),  # Teredo client: last 32 bits XOR 1s
        ("2001:0:a00:1::1", "10.0.0.1"),  # Teredo server: bits 32-64
        ("::ffff:10.0.0.1", "10.0.0.1"),  # IPv4-mapped
        ("::10.0.0.1", "10.0.0.1"),  # IPv4-compatible
    ],
)
def test_ipv6_addresses_carrying_a_private_ipv4_are_refused(address, carried):
    assert ip(carried) in embedded_ipv4(ip(address))
    why = refusal(ip(address))
    assert why is not None and why.startswith(f"carries {carried}:"), why


@pytest.mark.parametrize(
    "address", ["2002:5db8:d822::1", "64:ff9b::5db8:d822", "64:ff9b:1::5db8:d822", "2001:0:5db8:d822::a247:27dd"]
)
def test_transition_addresses_are_refused_even_when_what_they_carry_is_public(address):
    # 93.184.216.34 is data only: never contacted.
    why = refusal(ip(address))
    assert why is not None and "carries IPv4" in why, why


def test_a_transition_address_carrying_this_hosts_own_address_names_it():
    own = ip("93.184.216.34")
    assert refusal(ip("2002:5db8:d822::1"), host={own}) == f"carries {own}: an address of this machine"


def test_the_allow_list_can_let_a_transition_network_through():
    nat64 = ipaddress.ip_network("64:ff9b::/96")
    assert refusal(ip("64:ff9b::5db8:d822"), allow=[nat64]) is None
    assert refusal(ip("2606:4700::1111")) is None  # an ordinary global IPv6 address stays allowed
    assert refusal(ip("::ffff:93.184.216.34")) is None  # so does a mapped public IPv4


@pytest.mark.parametrize(
    ("method", "target", "expected"),
    [
        ("GET", "http://[::1]:8080/x", ("::1", 8080, "/x")),
        ("GET", "http://[::1]/x?q=1#frag", ("::1", 80, "/x?q=1")),
        ("GET", "http://user@Example.com", ("example.com", 80, "/")),
        ("CONNECT", "[2001:db8::1]:443", ("2001:db8::1", 443, "")),
        ("CONNECT", "example.com:443", ("example.com", 443, "")),
    ],
)
def test_request_targets_with_ipv6_literals_are_parsed(method, target, expected):
    assert request_target(method, target) == expected


@pytest.mark.parametrize(
    ("method", "target"),
    [
        ("GET", "http://[::1/x"),
        ("GET", "http://host:99999/"),
        ("GET", "http:///x"),
        ("CONNECT", "2001:db8::1:443"),
        ("CONNECT", "example.com"),
        ("CONNECT", "example.com:https"),
    ],
)
def test_malformed_request_targets_are_value_errors(method, target):
    with pytest.raises(ValueError):
        request_target(method, target)


@pytest.fixture
def proxy(tmp_path):
    with EgressProxy(tmp_path / "egress.sock") as running:
        yield running


def ask(proxy: EgressProxy, request: str) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(10)
        conn.connect(str(proxy.socket_path))
        conn.sendall(request.encode())
        answer = b""
        while chunk := conn.recv(4096):
            answer += chunk
    return answer.decode()


@pytest.mark.parametrize(
    ("request_line", "status", "reason"),
    [
        ("GET http://[::1]:8080/x HTTP/1.1", "403", "may not reach ::1"),
        ("GET http://[::1]/x HTTP/1.1", "403", "may not reach ::1"),
        ("CONNECT [2001:db8::1]:443 HTTP/1.1", "403", "private network"),
        ("CONNECT [2002:a00:1::1]:443 HTTP/1.1", "403", "carries 10.0.0.1"),
        ("GET http://[64:ff9b::a9fe:a9fe]/latest/meta-data HTTP/1.1", "403", "carries 169.254.169.254"),
        ("GET http://[::1/x HTTP/1.1", "400", "bad request target"),
        ("CONNECT [::1] HTTP/1.1", "400", "bad request target"),
    ],
)
def test_the_proxy_answers_ipv6_literal_requests(proxy, request_line, status, reason):
    answer = ask(proxy, f"{request_line}\r\nHost: x\r\n\r\n")
    assert answer.split(" ", 2)[1] == status, answer
    assert reason in answer
    if status == "403":  # and the refusal is in the run's report
        assert proxy.refused and proxy.refused[-1].split(": ", 1)[1] in answer
