"""A skill's ``mcp`` block in every form the seeds write: a command line split shell-style,
durations with units, and the warnings ``skillctl validate`` gives for what cannot work here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skillctl.format import normalise
from skillctl.format.load import load_skill
from skillctl.format.manifest import McpSpec
from skillctl.format.mcp_block import missing_command

BASE = {"name": "demo", "description": "Does a thing. Then more.", "license": "MIT"}


def read(block) -> tuple[McpSpec | None, dict[str, str]]:
    manifest, findings = normalise({**BASE, "mcp": block})
    return manifest.mcp, {f.code: f.severity.value for f in findings}


def test_a_command_string_with_arguments_is_split_shell_style():
    spec, _ = read({"command": "python3 -m 'my server' --flag"})
    assert (spec.command, spec.args) == ("python3", ["-m", "my server", "--flag"])


def test_args_beside_a_command_line_come_after_its_words():
    spec, _ = read({"command": "npx -y @pkg/server", "args": ["--port", "1"]})
    assert (spec.command, spec.args) == ("npx", ["-y", "@pkg/server", "--port", "1"])


@pytest.mark.parametrize(
    "raw, seconds",
    [("500ms", 0.5), ("30s", 30.0), ("5m", 300.0), ("2 min", 120.0), ("1h", 3600.0), (45, 45.0), ("90", 90.0)],
)
def test_timeouts_take_units_and_a_bare_number_is_seconds(raw, seconds):
    spec, codes = read({"command": "python3", "startup_timeout": raw, "idle_timeout": raw})
    assert spec.startup_timeout == seconds and spec.idle_timeout == seconds
    assert "field.type" not in codes


def test_a_bare_idle_timeout_under_a_minute_warns_that_seed_003_meant_minutes():
    _, codes = read({"command": "python3", "idle_timeout": 10, "startup_timeout": 10})
    assert codes["mcp.timeout_unit"] == "warning"
    for explicit in ("10s", "10m", 600):
        assert "mcp.timeout_unit" not in read({"command": "python3", "idle_timeout": explicit})[1]


def test_an_unreadable_duration_is_a_type_error():
    spec, codes = read({"command": "python3", "idle_timeout": "10 fortnights"})
    assert codes["field.type"] == "error" and spec.idle_timeout is None


def test_skillctl_validate_warns_about_a_command_this_machine_cannot_find(tmp_path):
    import json
    import subprocess

    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: demo\ndescription: Does a thing.\nlicense: MIT\n"
        "mcp:\n  command: no-such-command-zq9 --serve\n---\nBody.\n"
    )
    assert "mcp.command_not_found" not in {f.code for f in load_skill(str(folder)).findings}  # the format: pure
    skillctl = Path(sys.executable).with_name("skillctl")
    done = subprocess.run([str(skillctl), "validate", "--json", str(folder)], capture_output=True, text=True)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["valid"]
    assert [f["code"] for f in report["warnings"] if f["code"].startswith("mcp.")] == ["mcp.command_not_found"]


def test_a_command_on_the_path_or_in_the_skill_folder_does_not_warn():
    def spec(value):  # noqa: ANN001, ANN202
        return read(value)[0]

    assert missing_command(spec({"command": f"{sys.executable} server.py"})) is None
    assert missing_command(spec({"command": "./bin/server --stdio"})) is None
    assert missing_command(spec("python3 server.py")) is None
    assert missing_command(spec("no-such-command-zq9"), which=lambda _: None) is not None
