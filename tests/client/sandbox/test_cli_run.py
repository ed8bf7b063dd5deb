"""`skillctl run`: a well-behaved skill returns ok with its output, on each backend."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.sandbox

SKILL_MD = """---
name: doubler
description: Doubles a number.
runtime:
  entrypoint: scripts/main.py
  timeout_seconds: 10
  max_memory_mb: 128
---
Doubles `n`.
"""


def skillctl(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "skillctl", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )


@pytest.fixture
def doubler(tmp_path):
    folder = tmp_path / ".agents" / "skills" / "doubler"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    (folder / "scripts" / "main.py").write_text(
        "import json, os\n"
        "n = json.loads(os.environ['SKILL_INPUT'])['n']\n"
        "print(n * 2)\n"
        "open('/work/output/result.json', 'w').write(json.dumps({'doubled': n * 2}))\n"
    )
    return folder


def test_run_by_name_prints_ok_json_with_output(backend, doubler, tmp_path):
    proc = skillctl("run", "doubler", "--input", '{"n": 21}', "--json", "--backend", backend, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "ok" and result["exit_code"] == 0 and result["backend"] == backend
    assert result["stdout"] == "42\n"
    assert [o["path"] for o in result["outputs"]] == ["result.json"]
    assert set(result) == {
        "status",
        "exit_code",
        "stdout",
        "stderr",
        "duration_ms",
        "backend",
        "outputs",
    }


def test_run_by_path_copies_outputs_and_exit_code_reflects_status(backend, doubler, tmp_path):
    out = tmp_path / "out"
    proc = skillctl("run", str(doubler), "--input", '{"n": 2}', "--backend", backend, "--output-dir", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "4\n"
    assert json.loads((out / "result.json").read_text()) == {"doubled": 4}
    (doubler / "scripts" / "main.py").write_text("import time; time.sleep(100)\n")
    proc = skillctl("run", str(doubler), "--backend", backend, "--timeout", "1", "--json")
    assert proc.returncode == 10 and json.loads(proc.stdout)["status"] == "timeout"


def test_unknown_skill_and_bad_input_are_refused(tmp_path):
    assert skillctl("run", "no-such-skill", cwd=tmp_path).returncode == 1
    proc = skillctl("run", ".", "--input", "{not json", cwd=tmp_path)
    assert proc.returncode == 2 and "not JSON" in proc.stderr


NETWORKED_MD = """---
name: fetcher
description: Wants the network.
runtime:
  entrypoint: scripts/main.py
  requires_network: true
---
"""


@pytest.mark.parametrize("flag", [[], ["--allow-network"]])
def test_run_gives_the_network_only_with_consent(tmp_path, backend, flag):
    folder = tmp_path / "fetcher"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(NETWORKED_MD)
    (folder / "scripts" / "main.py").write_text("import os\nprint(os.environ.get('HTTPS_PROXY', 'none'))\n")
    result = skillctl("run", str(folder), "--backend", backend, "--json", *flag)
    assert result.returncode == 0, result.stderr
    proxy = json.loads(result.stdout)["stdout"].strip()
    if flag:
        assert proxy == "http://127.0.0.1:3128"
    else:
        assert proxy == "none" and "--allow-network" in result.stderr


def test_a_command_after_the_double_dash_runs_instead_of_the_entrypoint(backend, doubler, tmp_path):
    (doubler / "scripts" / "echo_args.py").write_text("import os, sys\nprint(os.getcwd(), sys.argv[1:])\n")
    proc = skillctl(
        "run",
        "doubler",
        "--json",
        "--backend",
        backend,
        "--",
        "python3",
        "/skill/scripts/echo_args.py",
        "--degrees",
        "90",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "ok" and result["stdout"] == "/work ['--degrees', '90']\n"
    failing = skillctl("run", "doubler", "--backend", backend, "--", "sh", "-c", "exit 3", cwd=tmp_path)
    assert failing.returncode == 1 and "exit 3" in failing.stdout + failing.stderr


def test_a_run_over_work_size_exits_14_with_limits_disk(backend, doubler, tmp_path):
    (doubler / "scripts" / "main.py").write_text("open('/work/big', 'wb').write(b'x' * (8 << 20))\n")
    args = ("run", "doubler", "--work-size", "4", "--json", "--backend", backend)
    proc = skillctl(*args, cwd=tmp_path)
    assert proc.returncode == 14, proc.stderr
    assert json.loads(proc.stdout)["status"] == "limits.disk"
