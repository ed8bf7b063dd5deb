"""Network for a sandboxed skill (issue: `requires_network: true` granted itself the network;
private and link-local addresses were reachable). The sandbox never has an interface but lo;
with the user's consent it reaches out only through the egress proxy, which refuses this
machine and private ranges. A "private" host is simulated in a network namespace this test
creates (veth pair, 10.213.0.0/24): no traffic leaves the machine."""

from __future__ import annotations

import ipaddress
import shutil
import subprocess
import time
import uuid

import pytest

from skillctl.format import RuntimeSpec
from skillctl.sandbox.egress import refusal
from skillctl.sandbox.policy import HostCaps, policy_for
from tests.client.sandbox.conftest import SUITE_CAPS

NETWORKED = RuntimeSpec(entrypoint="scripts/main.py", requires_network=True)
CAPS = HostCaps(**{**SUITE_CAPS.__dict__, "default_timeout_seconds": 15})
FETCH = """
    import urllib.request
    def fetch(url):
        return urllib.request.urlopen(url, timeout=8).read().decode()
    def interfaces():
        return sorted(line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:])
"""


def test_requires_network_alone_grants_nothing():
    assert policy_for(NETWORKED, HostCaps()).network is False
    assert policy_for(NETWORKED, HostCaps(), network_consent=True).network is True
    assert policy_for(NETWORKED, HostCaps(allow_network=False), network_consent=True).network is False
    assert policy_for(RuntimeSpec(entrypoint="x.py"), HostCaps(), network_consent=True).network is False


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "::1",
        "10.1.2.3",
        "172.16.0.9",
        "192.168.1.1",
        "169.254.169.254",
        "fe80::1",
        "100.64.0.1",
        "fd00::1",
        "0.0.0.0",
        "224.0.0.1",
        "::ffff:10.0.0.1",
    ],
)
def test_the_proxy_refuses_this_machine_and_private_ranges(address):
    assert refusal(ipaddress.ip_address(address)) is not None


def test_the_proxy_refuses_the_hosts_own_public_address_and_honours_the_allow_list():
    own = ipaddress.ip_address("93.184.216.34")  # data only: never contacted
    assert refusal(own) is None and refusal(own, host={own}) == "an address of this machine"
    assert refusal(ipaddress.ip_address("10.9.9.9"), allow=[ipaddress.ip_network("10.9.0.0/16")]) is None


def test_without_consent_the_sandbox_has_no_network_and_no_proxy(last_report, run_payload):
    result = run_payload(
        FETCH
        + """
    import os
    report(interfaces=interfaces(), proxy=os.environ.get("HTTPS_PROXY", ""))
    """,
        runtime=NETWORKED,
        caps=CAPS,
    )
    assert last_report(result) == {"interfaces": ["lo"], "proxy": ""}


def test_with_consent_the_only_way_out_is_the_proxy(last_report, run_payload):
    result = run_payload(
        FETCH
        + """
    import os, socket
    report(interfaces=interfaces(), proxy=os.environ.get("HTTPS_PROXY", ""),
           direct=attempt(lambda: socket.create_connection(("10.213.0.2", 80), timeout=1)))
    """,
        runtime=NETWORKED,
        caps=CAPS,
        allow_network=True,
    )
    data = last_report(result)
    assert data["interfaces"] == ["lo"] and data["proxy"] == "http://127.0.0.1:3128"
    assert data["direct"].startswith("denied:")


@pytest.fixture(scope="module")
def private_host():
    """A web server on 10.213.0.2 inside a network namespace, reached over a veth pair."""
    if shutil.which("ip") is None or subprocess.run(["ip", "netns", "list"], capture_output=True).returncode:
        pytest.skip("network namespaces are not available (iproute2, root)")
    name = f"sky{uuid.uuid4().hex[:8]}"
    host_if, ns_if = f"{name}h", f"{name}n"

    def ip(*args, check=True):
        return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)

    ip("netns", "add", name)
    server = None
    try:
        ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        ip("link", "set", ns_if, "netns", name)
        ip("addr", "add", "10.213.0.1/24", "dev", host_if)
        ip("link", "set", host_if, "up")
        ip("netns", "exec", name, "ip", "addr", "add", "10.213.0.2/24", "dev", ns_if)
        ip("netns", "exec", name, "ip", "link", "set", ns_if, "up")
        ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
        server = subprocess.Popen(
            ["ip", "netns", "exec", name, "python3", "-m", "http.server", "8080", "--bind", "10.213.0.2"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            probe = subprocess.run(
                [
                    "ip",
                    "netns",
                    "exec",
                    name,
                    "python3",
                    "-c",
                    "import socket; socket.create_connection(('10.213.0.2', 8080), 1)",
                ],
                capture_output=True,
            )
            if probe.returncode == 0:
                break
            time.sleep(0.2)
        yield "http://10.213.0.2:8080/"
    finally:
        if server is not None:
            server.kill()
        ip("link", "del", host_if, check=False)
        ip("netns", "del", name, check=False)


def test_a_private_host_is_refused_by_the_proxy(last_report, run_payload, private_host):
    result = run_payload(
        FETCH
        + f"""
    report(private=attempt(lambda: fetch({private_host!r})))
    """,
        runtime=NETWORKED,
        caps=CAPS,
        allow_network=True,
    )
    assert last_report(result)["private"].startswith("denied:")  # 403 from the proxy
    assert "10.213.0.2" in result.stderr and "private network" in result.stderr


def test_a_configured_allow_list_makes_the_private_host_reachable(last_report, run_payload, private_host):
    result = run_payload(
        FETCH
        + f"""
    report(private=attempt(lambda: "Directory listing" in fetch({private_host!r})))
    """,
        runtime=NETWORKED,
        caps=CAPS,
        allow_network=True,
        network_allow=["10.213.0.0/24"],
    )
    assert last_report(result)["private"] == "ok:True"
