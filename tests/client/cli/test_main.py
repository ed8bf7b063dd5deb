"""The CLI frame: help without importing commands, usage errors exit 2, errors map to codes."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from skillctl.cli import main as cli_main
from skillctl.errors import ExitCode, IntegrityError, SkillctlError


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skillctl", *args], capture_output=True, text=True, timeout=60)


def test_help_lists_every_command_and_the_exit_codes() -> None:
    proc = run("--help")
    assert proc.returncode == 0
    for name in cli_main.COMMANDS:
        assert name in proc.stdout
    assert "Exit codes" in proc.stdout


def test_help_imports_no_command_module() -> None:
    code = (
        "import sys\nfrom skillctl.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print([m for m in sys.modules if m.startswith('skillctl.cli.commands.')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_unknown_command_is_a_usage_error() -> None:
    proc = run("no-such-command")
    assert proc.returncode == ExitCode.USAGE
    assert "Traceback" not in proc.stderr


def test_skillctl_error_maps_to_its_exit_code_with_hint(monkeypatch, capsys) -> None:
    @click.command()
    def boom() -> None:
        raise IntegrityError("sha256 mismatch for x", hint="delete the cache and retry")

    monkeypatch.setitem(cli_main.COMMANDS, "boom", ("authoring", "boom", "test"))
    monkeypatch.setattr(cli_main.LazyGroup, "get_command", lambda self, ctx, name: boom)
    assert cli_main.main(["boom"]) == ExitCode.INTEGRITY
    err = capsys.readouterr().err
    assert "sha256 mismatch" in err and "hint:" in err


def test_unexpected_exception_is_reported_without_traceback(monkeypatch, capsys) -> None:
    @click.command()
    def crash() -> None:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(cli_main.LazyGroup, "get_command", lambda self, ctx, name: crash)
    assert cli_main.main(["crash"]) == ExitCode.FAILURE
    err = capsys.readouterr().err
    assert "kaboom" in err and "Traceback" not in err and "--debug" in err


@pytest.mark.parametrize("cls,code", [(SkillctlError, 1), (IntegrityError, 4)])
def test_error_json_shape(cls, code) -> None:
    data = cls("msg", hint="h").to_dict()
    assert data == {"error": cls.code, "message": "msg", "hint": "h", "exit_code": code}


def _all_commands(group: click.Group, ctx: click.Context, prefix: str = ""):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        yield prefix + name, command
        if isinstance(command, click.Group):
            yield from _all_commands(command, ctx, f"{prefix}{name} ")


def test_every_command_has_json_and_help() -> None:
    ctx = click.Context(cli_main.cli)
    missing = [
        name
        for name, command in _all_commands(cli_main.cli, ctx)
        if not any("--json" in p.opts for p in command.params)
    ]
    assert missing == []
    # ... and help that says what the command does (its docstring's first line at least).
    undocumented = [name for name, command in _all_commands(cli_main.cli, ctx) if not (command.help or "").strip()]
    assert undocumented == []
