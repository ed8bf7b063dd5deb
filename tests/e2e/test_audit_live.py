"""Issue 35 against a live registry: an advisory filed after install makes `skillctl audit`
exit 1 naming it, and withdrawing it clears it; a deprecated version installs with its message;
a version whose tests failed installs with a warning carrying the check's summary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_checks_live import wait_for_checks
from tests.e2e.test_install_registry import make

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SKILLCTL = Path(sys.executable).with_name("skillctl")


@pytest.fixture
def skillctl(live_registry, tmp_path):
    """Runs skillctl in a fresh project as the publisher (their token), against the registry."""
    env = {
        **os.environ,
        "SKILLYARD_HOME": str(tmp_path / "home"),
        "SKILLYARD_USER_SKILLS": str(tmp_path / "user-skills"),
        "SKILLYARD_REGISTRY": live_registry.url,
        "SKILLYARD_TOKEN": live_registry.token,
        "SKILLYARD_SEMANTIC": "0",
        "NO_COLOR": "1",
    }
    project = tmp_path / "project"
    project.mkdir()

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(SKILLCTL), *args], cwd=project, env=env, capture_output=True, text=True, timeout=120)

    return run


def test_an_advisory_fails_audit_until_it_is_withdrawn(live_registry, skillctl, tmp_path):
    for version in ("1.0.0", "1.1.0"):
        live_registry.publish(make(tmp_path / version, "pdf-tools", version))
    installed = skillctl("install", "pdf-tools@1.0.0")
    assert installed.returncode == 0, installed.stderr
    assert skillctl("audit").returncode == 0

    filed = skillctl(
        "advisory", "create", "pdf-tools", "--affected", "<1.1.0", "--severity", "high", "--summary", "leaks files"
    )
    assert filed.returncode == 0, filed.stderr
    advisory_id = filed.stdout.strip()
    assert advisory_id.startswith("SKY-")
    listed = json.loads(skillctl("advisory", "list", "pdf-tools", "--json").stdout)["advisories"]
    assert [a["id"] for a in listed] == [advisory_id]

    again = skillctl("install", "pdf-tools@1.0.0")
    assert again.returncode == 0 and "1 installed skill has an advisory: run skillctl audit" in again.stderr
    audit = skillctl("audit")
    assert audit.returncode == 1, audit.stdout + audit.stderr
    assert advisory_id in audit.stdout and "leaks files" in audit.stdout
    [skill] = json.loads(skillctl("audit", "--json").stdout)["skills"]
    [finding] = skill["findings"]
    assert (finding["kind"], finding["id"], finding["severity"]) == ("advisory", advisory_id, "high")

    assert skillctl("advisory", "withdraw", advisory_id).returncode == 0
    clean = skillctl("audit")
    assert clean.returncode == 0, clean.stdout + clean.stderr


def test_a_deprecated_version_installs_with_its_message(live_registry, skillctl, tmp_path):
    live_registry.publish(make(tmp_path, "old-tool", "1.0.0"))
    assert skillctl("deprecate", "old-tool@1.0.0", "-m", "use new-tool instead").returncode == 0
    done = skillctl("install", "old-tool", "--json")
    assert done.returncode == 0, done.stderr
    assert "old-tool 1.0.0 is deprecated: use new-tool instead" in done.stderr
    [change] = json.loads(done.stdout)["changes"]
    assert {"code": "deprecated", "message": "old-tool 1.0.0 is deprecated: use new-tool instead"} in change["notices"]
    verify = skillctl("verify", "--json")
    assert verify.returncode == 1
    assert [p["code"] for p in json.loads(verify.stdout)["skills"][0]["problems"]] == ["deprecated"]


def test_failed_tests_warn_with_the_checks_summary(live_registry, skillctl, tmp_path):
    failing = "import unittest\nclass T(unittest.TestCase):\n    def test_no(self):\n        self.assertTrue(False)\n"
    live_registry.publish(make(tmp_path, "adder-broken", "1.0.0", {"tests/test_add.py": failing}))
    detail = wait_for_checks(live_registry.url, "adder-broken", "1.0.0", live_registry.token, seconds=120)
    if detail["checks"]["tests"].get("result") != "failed":
        pytest.skip(f"the tests check did not run the tests here: {detail['checks']['tests']}")
    done = skillctl("install", "adder-broken", "--json")
    assert done.returncode == 0, done.stderr
    assert "adder-broken 1.0.0: its tests failed: FAILED (failures=1)" in done.stderr
    [change] = json.loads(done.stdout)["changes"]
    assert [n["code"] for n in change["notices"]] == ["tests_failed"]
    shown = json.loads(skillctl("show", "adder-broken", "--json").stdout)
    assert [n["code"] for n in shown["notices"]] == ["tests_failed"]
