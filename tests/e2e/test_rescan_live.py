"""Issue 35 §5 against a live registry: the scanner learns a rule, the registry (restarted with
it, on the same data and URL) re-scans what it published, and a version a project installed
last week turns malicious: `skillctl audit` reports it, and outsiders no longer see it.

The new rule comes in as a real code change would: the restarted server's interpreter loads a
``sitecustomize`` that gives the scanner a new rules version and one more critical rule."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from tests.e2e.conftest import start_registry
from tests.e2e.test_audit_live import skillctl  # noqa: F401 (the fixture, run against `live_registry`)
from tests.e2e.test_checks_live import wait_for_checks
from tests.e2e.test_install_registry import make

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

MARKER = "zq-beacon-7781"
NEW_RULE = f"""
from pathlib import Path

from skillctl.format import scanner

_real = scanner.scan_folder


def _scan_folder(path):
    report = _real(path)
    root = Path(path)
    if not any({MARKER!r} in p.read_text(errors="replace") for p in root.rglob("*.py")):
        return report
    found = scanner.ScanFinding("e2e.beacon", "critical", "scripts/main.py", 1, "calls home", {MARKER!r})
    return scanner.ScanReport([*report.findings, found])


scanner.RULES_VERSION = scanner.RULES_VERSION + ".e2e"
scanner.scan_folder = _scan_folder
"""


@pytest.fixture
def live_registry(tmp_path):
    """A registry served as `make run` serves it (uvicorn: its start-up runs the rescans)."""
    reg = start_registry(tmp_path / "registry", server="uvicorn")
    yield reg
    reg.stop()


def test_a_version_turned_malicious_by_a_rescan_shows_in_audit(live_registry, skillctl, tmp_path):  # noqa: F811
    folder = make(tmp_path / "src", "beacon", "1.0.0", {"scripts/main.py": f"print('{MARKER}')\n"})
    live_registry.publish(folder)
    first = wait_for_checks(live_registry.url, "beacon", "1.0.0", live_registry.token, seconds=180)
    assert first["checks"]["scan"]["verdict"] == "pass"
    assert skillctl("install", "beacon").returncode == 0
    assert skillctl("audit").returncode == 0

    live_registry.stop()
    patch = tmp_path / "new-rules"
    patch.mkdir()
    (patch / "sitecustomize.py").write_text(NEW_RULE)
    port = int(live_registry.url.rsplit(":", 1)[1])
    restarted = start_registry(  # as another user: alice's token (the project's) stays valid
        live_registry.data_dir,
        username="bob",
        server="uvicorn",
        port=port,
        env_extra={"PYTHONPATH": str(patch), "SKILLYARD_RESCAN_INTERVAL_SECONDS": "1"},
    )
    try:
        deadline, verdict = time.monotonic() + 90, ""
        while time.monotonic() < deadline and verdict != "malicious":
            time.sleep(0.5)
            detail = httpx.get(
                f"{restarted.url}/api/v1/skills/beacon/versions/1.0.0",
                headers={"Authorization": f"Bearer {live_registry.token}"},  # the owner sees it
                timeout=10,
            ).json()
            verdict = detail["checks"]["scan"].get("verdict", "")
        assert verdict == "malicious", detail["checks"]["scan"]
        history = detail["checks"]["scan"]["history"]
        assert [h["outcome"] for h in history[:2]] == ["malicious", "pass"]
        assert history[0]["rules_version"].endswith(".e2e")

        assert httpx.get(f"{restarted.url}/api/v1/skills/beacon", timeout=10).status_code == 404  # outsiders
        audit = skillctl("audit")
        assert audit.returncode == 1, audit.stdout + audit.stderr
        [skill] = json.loads(skillctl("audit", "--json").stdout)["skills"]
        assert [f["kind"] for f in skill["findings"]] == ["malicious"]
    finally:
        restarted.stop()
