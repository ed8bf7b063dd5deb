"""Every CLI test runs in an isolated skillctl home, with no registry or token from the caller's
environment and no colour, so output and config are the test's own."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SKILLYARD_REGISTRY", raising=False)
    monkeypatch.delenv("SKILLYARD_TOKEN", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("SKILLYARD_HOOK_HELPER", "0")  # tests that want the warm helper turn it on
    return tmp_path / "home"
