"""Fixtures of the runtime suite: a project with installed skills, an isolated home, and a
deadline poll (tests never sleep a fixed time).

Everything here talks to loopback only: MCP servers are child processes on pipes, or
``skillctl mcp --http`` bound to 127.0.0.1.
"""

from __future__ import annotations

import os
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from skillctl.config import Config

NOTES_MD = """---
name: notes
description: Take notes in markdown files and keep a journal of meetings.
---
# Notes

Read references/guide.md before writing.
"""

DOUBLER_MD = """---
name: doubler
description: Double a number with a small python script.
runtime:
  entrypoint: scripts/main.py
  timeout_seconds: 20
  requires_network: true
---
Doubles `n`.
"""

DOUBLER_PY = """\
import json, os
n = json.loads(os.environ["SKILL_INPUT"])["n"]
print(json.dumps({"doubled": n * 2, "proxy": os.environ.get("HTTPS_PROXY")}))
"""


def write_skill(folder: Path, skill_md: str, files: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(skill_md)
    for relative, text in (files or {}).items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(textwrap.dedent(text))
    return folder


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """An isolated skillctl home and user skills folder; no registry from the caller."""
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SKILLYARD_USER_SKILLS", str(tmp_path / "user-skills"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("SKILLYARD_SEMANTIC", "0")
    monkeypatch.delenv("SKILLYARD_REGISTRY", raising=False)
    monkeypatch.delenv("SKILLYARD_TOKEN", raising=False)
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path, home) -> Path:
    """A project with two installed skills (notes, doubler) and a secret file beside them."""
    root = tmp_path / "project"
    skills = root / ".agents" / "skills"
    write_skill(skills / "notes", NOTES_MD, {"references/guide.md": "the guide\n"})
    write_skill(skills / "doubler", DOUBLER_MD, {"scripts/main.py": DOUBLER_PY})
    (root / "secret.txt").write_text("top secret\n")
    return root


def config_toml(home: Path, text: str) -> Path:
    path = home / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def wait_until(predicate: Callable[[], object], *, timeout: float = 10.0, what: str = "condition") -> object:
    """Poll ``predicate`` until it is truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped) is gone for our purposes
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def skillctl_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "skillctl", *args]


def trusting(skills_root: Path, *names: str, **values) -> Config:
    """A Config whose ``[runtime] trusted_mcp`` pins the MCP commands of the named skills under
    ``skills_root`` as they are now (what ``skillctl mcp trust`` writes), with other ``values``."""
    from skillctl import discovery
    from skillctl.runtime.mcp_trust import server_command

    found = discovery.discover_dir(skills_root)
    entries = [{"name": name, "digest": server_command(found.get(name)).digest} for name in names]
    return Config(values={**values, "runtime": {"trusted_mcp": entries}})
