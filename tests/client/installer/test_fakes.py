"""The fake registry the installer tests use speaks the v1 read contract."""

from __future__ import annotations

import hashlib

import httpx

from tests.client.installer.fakes import FakeRegistry


def test_fake_registry_serves_the_v1_read_contract(tmp_path):
    reg = FakeRegistry(tmp_path)
    try:
        sha = reg.publish("hello", "1.0.0")
        detail = httpx.get(f"{reg.url}/api/v1/skills/hello").json()
        assert detail["versions"][0]["sha256"] == sha
        data = httpx.get(f"{reg.url}/api/v1/skills/hello/versions/1.0.0/download").content
        assert hashlib.sha256(data).hexdigest() == sha
        assert httpx.get(f"{reg.url}/api/v1/skills/nope").status_code == 404
    finally:
        reg.close()
