"""The `clawhub` CLI against us (npm `clawhub` 0.23.x on Node 22, both from npm, in the interop
test's cache folder): `clawhub --site <registry>` finds our compatibility API through
/.well-known/clawhub.json; search, explore and inspect read our public skills, install places
one byte for byte, update takes the next version; private skills do not exist for it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require_service
from tests.e2e.conftest import start_registry
from tests.e2e.test_install_registry import make
from tests.e2e.test_skills_cli_interop import CACHE, skills_cli  # noqa: F401 (node 22 from npm, cached)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
CLAWHUB = "clawhub@0.23"


@pytest.fixture(scope="session")
def clawhub(skills_cli) -> tuple[Path, Path]:  # noqa: F811
    """(node 22, clawhub's entry point), installed from npm once into the cache folder."""
    node, _ = skills_cli
    cli = CACHE / "node_modules/clawhub/bin/clawdhub.js"
    if not cli.exists():
        npm = shutil.which("npm")
        require_service("npm", bool(npm), "needed to install the clawhub CLI")
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(CACHE), CLAWHUB],
            capture_output=True,
            text=True,
            timeout=600,
        )
        require_service("the clawhub CLI from npm", done.returncode == 0 and cli.exists(), done.stderr[-500:])
    return node, cli


class Clawhub:
    def __init__(self, node: Path, cli: Path, tmp: Path, site: str) -> None:
        self.node, self.cli, self.site = node, cli, site
        self.workdir = tmp / "project"
        self.workdir.mkdir()
        self.env = {**os.environ, "HOME": str(tmp / "home"), "NO_COLOR": "1", "CI": "1"}
        for var in ("CLAWHUB_REGISTRY", "CLAWHUB_SITE", "CLAWHUB_TOKEN", "CLAWDHUB_REGISTRY"):
            self.env.pop(var, None)

    def __call__(self, *args: str, ok: bool = True) -> str:
        argv = [str(self.node), str(self.cli), "--site", self.site, "--workdir", str(self.workdir), "--no-input"]
        done = subprocess.run(
            [*argv, *args], env=self.env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )
        text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
        assert (done.returncode == 0) == ok, text[-3000:]
        return text


def test_clawhub_searches_inspects_installs_and_updates_from_us(clawhub, tmp_path):
    node, cli = clawhub
    reg = start_registry(tmp_path / "registry", env_extra={"SKILLYARD_CHECKS_ENABLED": "0", "SKILLYARD_SEMANTIC": "0"})
    try:
        extra = {"scripts/greet.py": "print('hello')\n", "references/style.md": "# Style\nBe kind.\n"}
        first = make(tmp_path / "src", "greeter", "1.0.0", extra)
        reg.publish(first)
        reg.publish(make(tmp_path / "src", "pdf-rotate", "1.0.0"))
        run = Clawhub(node, cli, tmp_path, reg.url)

        assert "greeter v1.0.0" in run("search", "greeting")
        assert {"greeter", "pdf-rotate"} <= set(re.findall(r"^(\S+)\s+v1\.0\.0", run("explore"), re.MULTILINE))
        text = run("inspect", "greeter", "--json")
        inspected, _ = json.JSONDecoder().raw_decode(text[text.index("{") :])  # stderr follows
        assert inspected["latestVersion"]["version"] == "1.0.0" and inspected["owner"]["handle"] == "alice"

        run("install", "greeter")
        installed = run.workdir / "skills" / "greeter"
        for rel in ("SKILL.md", "scripts/greet.py", "references/style.md"):
            assert (installed / rel).read_bytes() == (first / rel).read_bytes(), rel
        assert "up to date" in run("update", "greeter")

        second = make(tmp_path / "src", "greeter", "1.1.0", extra)
        reg.publish(second)
        run("update", "greeter")
        assert (installed / "SKILL.md").read_bytes() == (second / "SKILL.md").read_bytes()
        assert (
            json.loads((run.workdir / ".clawhub" / "lock.json").read_text())["skills"]["greeter"]["version"] == "1.1.0"
        )

        assert "not found" in run("install", "nope", ok=False).lower()
    finally:
        reg.stop()
