"""Every CLI test runs in an isolated skillctl home, with no registry or token from the caller's
environment and no colour, so output and config are the test's own.

``registry`` (a fake registry over real loopback HTTP with hello 1.0.0, 1.1.0 and 2.0.0) and
``cli`` (runs ``skillctl`` in a fresh project against it) serve the install, audit and advisory
tests; modules with their own ``registry`` fixture override it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import tests.client.installer.fakes as F

COMMAND = [sys.executable, "-m", "skillctl"]


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SKILLYARD_REGISTRY", raising=False)
    monkeypatch.delenv("SKILLYARD_TOKEN", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("SKILLYARD_HOOK_HELPER", "0")  # tests that want the warm helper turn it on
    return tmp_path / "home"


@pytest.fixture
def registry(tmp_path):
    reg = F.FakeRegistry(tmp_path / "reg")
    for v in ("1.0.0", "1.1.0", "2.0.0"):
        reg.publish("hello", v)
    yield reg
    reg.close()


@pytest.fixture
def cli(tmp_path, registry):
    proj = tmp_path / "proj"
    proj.mkdir()
    base = {
        **os.environ,
        "SKILLYARD_HOME": str(tmp_path / "home"),
        "SKILLYARD_USER_SKILLS": str(tmp_path / "user"),
        "SKILLYARD_REGISTRY": registry.url,
    }
    for var in ("SKILLYARD_TOKEN", "NO_COLOR", "FORCE_COLOR"):
        base.pop(var, None)

    def run(*args: str, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*COMMAND, *args], cwd=proj, env={**base, **env}, capture_output=True, text=True, timeout=60
        )

    run.project = proj
    run.env = base
    return run
