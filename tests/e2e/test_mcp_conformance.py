"""The official MCP conformance suite (npm @modelcontextprotocol/conformance on Node 22, both from
npm, kept in the interop test's cache folder) against ``skillctl mcp --http`` (issue 36 item 20).

Every active server scenario runs. Those that need the suite's own fixture tools, resources and
prompts (``test_simple_text``, ``test://static-text``, ``test_simple_prompt``...) or a capability
this server does not advertise (logging, completions, subscriptions) are listed in
EXPECTED_FAILURES, each with why; the suite exits 1 on any other failure, and also when a listed
scenario passes (a stale list), so the list cannot hide a regression."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from tests.client.runtime.conftest import NOTES_MD, skillctl_argv, wait_until, write_skill
from tests.conftest import free_port, require_service

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
CONFORMANCE = "@modelcontextprotocol/conformance@0.1.16"
CACHE = Path(os.environ.get("SKILLYARD_NPM_CACHE", Path.home() / ".cache" / "skillyard" / "skills-cli"))
SUITE_TIMEOUT_S = 240  # the whole active suite runs in seconds; well under the 5 minutes allowed

FIXTURE = "calls a fixture the suite's own test server defines"
NOT_ADVERTISED = "a capability this server does not advertise"
EXPECTED_FAILURES = {
    "logging-set-level": NOT_ADVERTISED,
    "completion-complete": NOT_ADVERTISED,
    "resources-subscribe": NOT_ADVERTISED,
    "resources-unsubscribe": NOT_ADVERTISED,
    "tools-call-simple-text": FIXTURE,
    "tools-call-image": FIXTURE,
    "tools-call-audio": FIXTURE,
    "tools-call-embedded-resource": FIXTURE,
    "tools-call-mixed-content": FIXTURE,
    "tools-call-with-logging": FIXTURE,
    "tools-call-error": FIXTURE,
    "tools-call-with-progress": FIXTURE,
    "tools-call-sampling": FIXTURE,
    "tools-call-elicitation": FIXTURE,
    "elicitation-sep1034-defaults": FIXTURE,
    "elicitation-sep1330-enums": FIXTURE,
    "resources-read-text": FIXTURE,
    "resources-read-binary": FIXTURE,
    "resources-templates-read": FIXTURE,
    "prompts-list": NOT_ADVERTISED,
    "prompts-get-simple": FIXTURE,
    "prompts-get-with-args": FIXTURE,
    "prompts-get-embedded-resource": FIXTURE,
    "prompts-get-with-image": FIXTURE,
}


@pytest.fixture(scope="session")
def conformance() -> tuple[Path, Path]:
    """(node 22, the suite's entry point), installed from npm once into the cache folder."""
    node = CACHE / "node_modules/.bin/node"
    entry = CACHE / "node_modules/@modelcontextprotocol/conformance/dist/index.js"
    if not (node.exists() and entry.exists()):
        npm = shutil.which("npm")
        require_service("npm", bool(npm), "needed to install the MCP conformance suite")
        CACHE.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(CACHE), CONFORMANCE, "node@22"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        require_service(
            "the MCP conformance suite from npm", done.returncode == 0 and entry.exists(), done.stderr[-500:]
        )
    return node, entry


def test_skillctl_mcp_passes_the_official_conformance_suite(conformance, tmp_path, monkeypatch):
    node, entry = conformance
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SKILLYARD_USER_SKILLS", str(tmp_path / "user-skills"))
    monkeypatch.setenv("SKILLYARD_SEMANTIC", "0")
    project = tmp_path / "project"
    write_skill(project / ".agents" / "skills" / "notes", NOTES_MD)
    baseline = tmp_path / "baseline.yml"
    baseline.write_text("server:\n" + "".join(f"  - {name}\n" for name in EXPECTED_FAILURES))
    port = free_port()
    server = subprocess.Popen(skillctl_argv("mcp", "--http", str(port)), cwd=project, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: server.poll() is not None or _listening(port), timeout=30, what="skillctl mcp --http")
        assert server.poll() is None, server.stderr.read()
        done = subprocess.run(
            [str(node), str(entry), "server", "--url", f"http://127.0.0.1:{port}/mcp"]
            + ["--expected-failures", str(baseline), "-o", str(tmp_path / "results")],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=SUITE_TIMEOUT_S,
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    summary = done.stdout[done.stdout.find("=== SUMMARY") :]
    assert done.returncode == 0, summary[-4000:] + done.stderr[-2000:]
    for scenario in ("server-initialize", "ping", "tools-list", "resources-list", "dns-rebinding-protection"):
        assert f"✓ {scenario}:" in summary, summary


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0
