"""The most used installer against us: `npx skills add <registry URL>` (npm `skills` 1.7.4 on
Node 22, both from npm, kept in a cache folder) installs a published skill byte for byte."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require_service
from tests.e2e.conftest import start_registry
from tests.e2e.test_install_registry import make

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
SKILLS_CLI = "skills@1.7.4"
CACHE = Path(os.environ.get("SKILLYARD_NPM_CACHE", Path.home() / ".cache" / "skillyard" / "skills-cli"))


@pytest.fixture(scope="session")
def skills_cli() -> tuple[Path, Path]:
    """(node 22, the skills CLI's entry point), installed from npm once into the cache folder."""
    node, cli = CACHE / "node_modules/.bin/node", CACHE / "node_modules/skills/bin/cli.mjs"
    if not (node.exists() and cli.exists()):
        npm = shutil.which("npm")
        require_service("npm", bool(npm), "needed to install the skills CLI")
        CACHE.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(CACHE), SKILLS_CLI, "node@22"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        require_service("the skills CLI from npm", done.returncode == 0 and cli.exists(), done.stderr[-500:])
    return node, cli


def test_npx_skills_add_installs_a_published_skill_byte_for_byte(skills_cli, tmp_path):
    node, cli = skills_cli
    reg = start_registry(tmp_path / "registry", env_extra={"SKILLYARD_CHECKS_ENABLED": "0"})
    try:
        folder = make(
            tmp_path / "src",
            "greeter",
            "1.0.0",
            {"scripts/greet.py": "print('hello')\n", "references/style.md": "# Style\nBe kind.\n"},
        )
        reg.publish(folder)
        project = tmp_path / "project"
        project.mkdir()
        env = {
            **os.environ,
            "HOME": str(tmp_path / "home"),
            "DISABLE_TELEMETRY": "1",
            "DO_NOT_TRACK": "1",
            "CI": "1",
            "NO_COLOR": "1",
        }
        done = subprocess.run(
            [str(node), str(cli), "add", reg.url, "-y", "-a", "claude-code"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        installed = next(p.parent for p in project.rglob("SKILL.md"))
        for rel in ("SKILL.md", "scripts/greet.py", "references/style.md"):
            assert (installed / rel).read_bytes() == (folder / rel).read_bytes(), rel
    finally:
        reg.stop()
