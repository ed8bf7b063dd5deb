"""`npx skills find` against us (npm `skills` 1.7.4 on Node 22, the interop test's cache):
`SKILLS_API_URL=<registry> skills find QUERY` lists our public skills for a request, and the
`skills add` line it prints installs that one skill from us, byte for byte."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from tests.e2e.conftest import start_registry
from tests.e2e.test_install_registry import make
from tests.e2e.test_skills_cli_interop import skills_cli  # noqa: F401 (the CLI from npm, cached)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def run(node, cli, *args: str, cwd, home, registry: str) -> str:  # noqa: ANN001
    env = {
        **os.environ,
        "HOME": str(home),
        "SKILLS_API_URL": registry,
        "DISABLE_TELEMETRY": "1",
        "DO_NOT_TRACK": "1",
        "CI": "1",
        "NO_COLOR": "1",
    }
    done = subprocess.run(
        [str(node), str(cli), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)


def test_skills_find_lists_our_skills_and_its_add_line_installs_one(skills_cli, tmp_path):  # noqa: F811
    node, cli = skills_cli
    reg = start_registry(tmp_path / "registry", env_extra={"SKILLYARD_CHECKS_ENABLED": "0", "SKILLYARD_SEMANTIC": "0"})
    try:
        rotator = make(tmp_path / "src", "pdf-rotate", "1.0.0", {"scripts/rotate.py": "print('rotated')\n"})
        (rotator / "SKILL.md").write_text(
            "---\nname: pdf-rotate\ndescription: Rotate the pages of PDF files.\nversion: 1.0.0\n---\n\n# Rotate\n"
        )
        reg.publish(rotator)
        reg.publish(make(tmp_path / "src", "greeter", "1.0.0"))
        project, home = tmp_path / "project", tmp_path / "home"
        project.mkdir()
        out = run(node, cli, "find", "rotate", "pdf", "pages", cwd=project, home=home, registry=reg.url)
        lines = [line.strip() for line in out.splitlines() if line.strip().startswith(reg.url)]
        assert lines == [f"{reg.url}/skills/pdf-rotate@pdf-rotate"], out  # greeter is not a match
        run(node, cli, "add", lines[0], "-y", "-a", "claude-code", cwd=project, home=home, registry=reg.url)
        installed = [p.parent for p in project.rglob("SKILL.md")]
        assert [p.name for p in installed] == ["pdf-rotate"]  # that skill alone, not the whole registry
        for rel in ("SKILL.md", "scripts/rotate.py"):
            assert (installed[0] / rel).read_bytes() == (rotator / rel).read_bytes(), rel
        nothing = run(node, cli, "find", "bake", "sourdough", cwd=project, home=home, registry=reg.url)
        assert "No skills found" in nothing
    finally:
        reg.stop()
