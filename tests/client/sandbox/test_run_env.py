"""`skillctl run` gives the skill the variables and API keys that satisfy `check` (config
`[skills.<key>.env]`, `apiKey` into `primaryEnv`, vars files and defaults), only those it
declares, and masks the secret ones in what it prints (issue 36 item 5); the `run_skill` tool of
`skillctl mcp` runs a skill the same way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

pytestmark = pytest.mark.sandbox

SKILL_MD = """---
name: envy
description: Prints the variables it gets.
primaryEnv: ENVY_API_KEY
requires:
  env: [ENVY_API_KEY, ENVY_REGION]
vars:
  STYLE: balanced
  PASSWORD:
    secret: true
runtime:
  entrypoint: main.py
  timeout_seconds: 20
---
Prints its environment.
"""
MAIN = """\
import json, os
names = ["ENVY_API_KEY", "ENVY_REGION", "STYLE", "PASSWORD", "NOT_DECLARED", "OUTSIDE_SECRET"]
print(json.dumps({n: os.environ.get(n) for n in names}))
print(json.dumps({"key_length": len(os.environ.get("ENVY_API_KEY", ""))}))
"""
API_KEY = "k-config-api-key-1234"


EXPECTED = {
    "ENVY_API_KEY": "****",  # the apiKey reached primaryEnv; masked in the output
    "ENVY_REGION": "****",  # a config env value is a secret too
    "STYLE": "balanced",
    "PASSWORD": "****",
    "NOT_DECLARED": None,
    "OUTSIDE_SECRET": None,
}


def envy_project(tmp_path) -> tuple[Path, dict[str, str]]:
    """A project with the envy skill installed, its config, and the environment to run skillctl in."""
    home, project = tmp_path / "home", tmp_path / "project"
    folder = project / ".agents" / "skills" / "envy"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    (folder / "main.py").write_text(MAIN)
    (folder / "vars.json").write_text(json.dumps({"PASSWORD": "hunter2-long-password"}))
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(
        f'[skills.envy]\napiKey = "{API_KEY}"\n[skills.envy.env]\nENVY_REGION = "eu-west"\nNOT_DECLARED = "x"\n'
    )
    env = {**os.environ, "SKILLYARD_HOME": str(home), "OUTSIDE_SECRET": "s", "SKILLYARD_USER_SKILLS": str(tmp_path)}
    env.pop("ENVY_API_KEY", None)
    return project, env


def test_run_gets_the_declared_variables_that_satisfy_check_with_secrets_masked(backend, tmp_path):
    project, env = envy_project(tmp_path)
    check = subprocess.run([sys.executable, "-m", "skillctl", "check", "envy"], cwd=project, env=env, timeout=60)
    assert check.returncode == 0
    proc = subprocess.run(
        [sys.executable, "-m", "skillctl", "run", "envy", "--json", "--backend", backend],
        capture_output=True, text=True, timeout=120, cwd=project, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    seen, length = (json.loads(line) for line in json.loads(proc.stdout)["stdout"].splitlines())
    assert seen == EXPECTED
    assert length == {"key_length": len(API_KEY)}
    assert API_KEY not in proc.stdout + proc.stderr


def test_the_mcp_servers_run_skill_gets_the_same_variables_masked_the_same_way(backend, tmp_path):
    mcp = pytest.importorskip("mcp")
    project, env = envy_project(tmp_path)
    params = mcp.StdioServerParameters(
        command=sys.executable, args=["-m", "skillctl", "mcp", "--backend", backend], env=env, cwd=str(project)
    )

    async def call():
        async with mcp.Client(params, mode="legacy", read_timeout_seconds=120) as client:
            return (await client.call_tool("run_skill", {"name": "envy"})).structured_content

    result = anyio.run(call)
    assert result["status"] == "ok", result
    seen, length = (json.loads(line) for line in result["stdout"].splitlines())
    assert seen == EXPECTED
    assert length == {"key_length": len(API_KEY)}
    assert API_KEY not in json.dumps(result)
