"""The README's author walk-through (init -> validate -> publish -> yank) runs as written against a
live registry, and leaves the registry in the state the README describes."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SKILLCTL = Path(sys.executable).with_name("skillctl")
MARKER = "<!-- author-walkthrough:"


def walkthrough_commands() -> list[list[str]]:
    readme = (ROOT / "README.md").read_text("utf-8")
    block = readme[readme.index(MARKER) :]
    block = block[block.index("```sh\n") + 6 : block.index("\n```", block.index("```sh\n"))]
    commands = [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]
    assert commands and all(c[0] == "skillctl" for c in commands)
    return commands


def test_readme_author_walkthrough_runs_as_written(live_registry, tmp_path):
    env = {
        **os.environ,
        "SKILLYARD_HOME": str(tmp_path / "home"),
        "SKILLYARD_REGISTRY": live_registry.url,
        "SKILLYARD_TOKEN": live_registry.token,
        "NO_COLOR": "1",
    }
    for command in walkthrough_commands():
        done = subprocess.run(
            [str(SKILLCTL), *command[1:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{shlex.join(command)}\n{done.stdout}\n{done.stderr}"
        if command[1:3] == ["publish", "greeter"] and "--dry-run" in command:
            assert "would publish greeter 0.1.0" in done.stdout

    api = f"{live_registry.url}/api/v1/skills/greeter"
    versions = {v["version"]: v for v in httpx.get(api).json()["versions"]}
    assert set(versions) == {"0.1.0", "0.2.0"}
    assert versions["0.2.0"]["yanked"] and versions["0.2.0"]["yanked_reason"] == "the French greeting is wrong"
    assert versions["0.1.0"]["deprecated"] == "use 0.3.0 or later"
    assert httpx.get(f"{api}/versions/0.2.0").json()["changelog"] == "Greets in French too."
    assert httpx.get(f"{api}/dist-tags").json()["beta"] == "0.2.0"
    # --bump wrote the new version into the author's SKILL.md, where the skeleton keeps it.
    assert re.search(r'^  version: "0\.2\.0"$', (tmp_path / "greeter" / "SKILL.md").read_text(), re.M)
