"""`skillctl run` gives the skill the variables and API keys that satisfy `check` (config
`[skills.<key>.env]`, `apiKey` into `primaryEnv`, vars files and defaults), only those it
declares, and masks the secret ones in what it prints (issue 36 item 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

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


def test_run_gets_the_declared_variables_that_satisfy_check_with_secrets_masked(backend, tmp_path):
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
    check = subprocess.run([sys.executable, "-m", "skillctl", "check", "envy"], cwd=project, env=env, timeout=60)
    assert check.returncode == 0
    proc = subprocess.run(
        [sys.executable, "-m", "skillctl", "run", "envy", "--json", "--backend", backend],
        capture_output=True, text=True, timeout=120, cwd=project, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    seen, length = (json.loads(line) for line in json.loads(proc.stdout)["stdout"].splitlines())
    assert seen == {
        "ENVY_API_KEY": "****",  # the apiKey reached primaryEnv; masked in the output
        "ENVY_REGION": "****",  # a config env value is a secret too
        "STYLE": "balanced",
        "PASSWORD": "****",
        "NOT_DECLARED": None,
        "OUTSIDE_SECRET": None,
    }
    assert length == {"key_length": len(API_KEY)}
    assert API_KEY not in proc.stdout + proc.stderr
