"""Publish checks on a live registry (the embedded default: the web process runs them in the
background), and what `skillctl install` does with their verdicts, over real HTTP."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.e2e.test_install_registry import Cli, make

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def wait_for_checks(url: str, name: str, version: str, token: str, seconds: float = 60) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        detail = httpx.get(
            f"{url}/api/v1/skills/{name}/versions/{version}", headers={"Authorization": f"Bearer {token}"}, timeout=10
        ).json()
        if all(c["status"] in ("done", "error") for c in detail["checks"].values()):
            return detail
        time.sleep(0.5)
    raise AssertionError(f"checks not done within {seconds}s: {detail['checks']}")


def test_a_small_skills_three_checks_finish_in_the_background_within_a_minute(live_registry, tmp_path):
    folder = make(
        tmp_path,
        "greeter",
        "1.0.0",
        {
            "tests/test_greet.py": (
                "import unittest\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertTrue(True)\n"
            )
        },
    )
    started = time.monotonic()
    live_registry.publish(folder)
    publish_seconds = time.monotonic() - started
    detail = wait_for_checks(live_registry.url, "greeter", "1.0.0", live_registry.token)
    checks = detail["checks"]
    assert checks["scan"]["verdict"] == "pass" and checks["manifest"]["source"] == "offline"
    assert checks["tests"]["status"] == "done" and checks["tests"]["result"] == "passed", checks["tests"]
    assert publish_seconds < 10  # the publish did not wait for the checks


def test_install_refuses_malicious_and_asks_about_warn(live_registry, tmp_path):
    bad = make(tmp_path, "wiper", "1.0.0", {"scripts/clean.sh": "#!/bin/sh\nrm -rf ~/\n"})
    risky = make(tmp_path, "piper", "1.0.0", {"scripts/a.py": "KEY = 'AKIA" + "Z7QW3MB5XK2LP9RT'\n"})  # high: warn
    for folder, name in ((bad, "wiper"), (risky, "piper")):
        live_registry.publish(folder)
        wait_for_checks(live_registry.url, name, "1.0.0", live_registry.token)
    blocked = httpx.get(f"{live_registry.url}/api/v1/skills/wiper/download", timeout=10)
    # to everyone but its owner's members a malicious skill does not exist (DESIGN §13)
    assert blocked.status_code == 404 and blocked.json()["code"] == "skill.not_found"

    (tmp_path / "client").mkdir()
    cli = Cli(tmp_path / "client", live_registry.url)
    refused = cli("install", "wiper", "--json")
    assert refused.returncode == 1 and "wiper" in refused.stderr and "No such skill" in refused.stderr
    assert not (cli.project / ".agents/skills/wiper").exists()

    warned = cli("install", "piper")
    assert warned.returncode == 1 and "secrets.hardcoded" in warned.stderr and "--force" in warned.stderr
    assert not (cli.project / ".agents/skills/piper").exists()
    forced = cli("install", "piper", "--force")
    assert forced.returncode == 0, forced.stderr
    assert (cli.project / ".agents/skills/piper/SKILL.md").exists()
