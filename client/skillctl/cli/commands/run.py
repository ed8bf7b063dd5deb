"""``skillctl run``: run an installed skill (or a skill folder) in a sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import click

from skillctl import console, paths
from skillctl.cli.app import App, json_option, pass_app
from skillctl.errors import SkillctlError, UsageError

# The command's exit code for each run status (0 and 1 keep their global meaning).
STATUS_EXIT_CODES = {
    "ok": 0,
    "error": 1,
    "timeout": 10,
    "oom": 11,
    "output_limit": 12,
    "killed": 13,
    "limits.disk": 14,
}

EPILOG = (
    "The skill runs with no network unless its runtime asks for it AND you allow it "
    "(--allow-network, or `skillctl config set skills.NAME.network true`); even then it reaches "
    "out only through a proxy that refuses this machine and private networks "
    "(config sandbox.network_allow lists CIDRs to let through). Limited "
    "memory, processes, file size and time, read-only at /skill, with a fresh /work of limited "
    "size (--work-size, config sandbox.work_size_mb; 256 MiB); files it "
    "writes to /work/output are listed (and copied with --output-dir). Backends: auto picks "
    "Docker when a daemon answers, else bubblewrap, and refuses when neither works; a skill is "
    "never run unsandboxed. Image: SKILLYARD_SANDBOX_IMAGE, else skillyard/sandbox-python:3.11 "
    "(make sandbox-image) when present, else python:3.11-slim. "
    "Exit codes: 0 ok, 1 error (the skill failed, or it could not be run), 2 usage, "
    "10 timeout, 11 oom, 12 output_limit, 13 killed, 14 limits.disk (/work or a file went over its size)."
)


class SkillNotFound(SkillctlError):
    code = "run.not_found"


@click.command("run", epilog=EPILOG)
@click.argument("skill")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED, metavar="[-- COMMAND...]")
@click.option("--input", "input_", metavar="JSON|@FILE", help="Input: JSON text, or @FILE to read it.")
@click.option("--backend", type=click.Choice(["auto", "docker", "bwrap"]), default="auto", show_default=True)
@click.option("--timeout", type=float, help="Seconds before the run is killed (capped by config).")
@click.option("--work-size", type=click.IntRange(min=1), metavar="MIB", help="Size of /work in MiB (capped by config).")
@click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path), help="Copy /work/output here.")
@click.option("--image", help="Docker image for the docker backend.")
@click.option(
    "--allow-network", is_flag=True, help="Give the skill the network its runtime asks for (through the egress proxy)."
)
@json_option
@pass_app
def run(
    app: App,
    skill: str,
    argv: tuple[str, ...],
    input_,
    backend,
    timeout,
    work_size,
    output_dir,
    image,
    allow_network,
    as_json: bool,
) -> int:
    """Run SKILL (an installed skill's NAME, or a PATH to a skill folder) in a sandbox.

    Without COMMAND, the skill's `runtime.entrypoint` runs. After `--`, COMMAND runs instead, in
    the same sandbox (the skill at /skill, read-only; a fresh /work as the current folder):
    `skillctl run pdf-tools -- python3 /skill/scripts/rotate.py --degrees 90`.
    """
    from skillctl.sandbox import run_skill
    from skillctl.sandbox.request import request_for, skill_env

    input_value = _parse_input(input_)  # usage errors first
    folder = resolve_skill(skill)
    config = _config_or_none(app)
    if config is not None:  # seed 000's settings: no Docker at all, or another image for it
        backend = "bwrap" if backend == "auto" and config.setting("docker_enabled") is False else backend
        image = image or config.setting("python_base_image")
    env, mask = skill_env(folder, config)
    request = request_for(
        folder,
        config=config,
        input=input_value,
        allow_network=allow_network,
        backend=backend,
        timeout_seconds=timeout,
        work_size_mb=work_size,
        output_dir=output_dir,
        image=image,
        command=list(argv) or None,
        env=env,
    )
    if request.runtime is not None and request.runtime.requires_network and not request.allow_network:
        console.warn(
            f"{folder.name} asks for the network; it runs without it "
            f"(allow it with --allow-network, or `skillctl config set skills.{folder.name}.network true`)"
        )
    if backend == "auto":
        _warn_python_without_docker(folder)
    result = run_skill(request)
    result.stdout, result.stderr = mask(result.stdout), mask(result.stderr)
    if as_json:
        console.out_json(result.to_dict())
    else:
        _print_human(result)
    return STATUS_EXIT_CODES[result.status.value]


def _warn_python_without_docker(folder: Path) -> None:
    from skillctl.format import load_skill
    from skillctl.sandbox.skill_kind import docker_missing_notice, skill_kind

    manifest = load_skill(folder).manifest
    if manifest is not None and (notice := docker_missing_notice(folder.name, skill_kind(manifest, folder))):
        console.warn(notice)


def resolve_skill(skill: str) -> Path:
    """A path to a folder, else an installed skill: project scope first, then user scope."""
    candidate = Path(skill).expanduser()
    if "/" in skill or skill in (".", "..") or (candidate.is_dir() and (candidate / "SKILL.md").exists()):
        if candidate.is_dir():
            return candidate.resolve()
        raise SkillNotFound(f"{skill} is not a folder", hint="Pass a skill folder or an installed skill's name.")
    for root in (paths.project_skills_dir(), paths.user_skills_dir()):
        if (root / skill).is_dir():
            return (root / skill).resolve()
    raise SkillNotFound(
        f"no installed skill named {skill!r}",
        hint="Install it (`skillctl install NAME`), or pass a path to the skill folder.",
    )


def _parse_input(raw: str | None):
    if raw is None:
        return None
    text = raw
    if raw.startswith("@"):
        try:
            text = Path(raw[1:]).read_text(encoding="utf-8")
        except OSError as err:
            raise UsageError(
                f"cannot read {raw[1:]}: {err.strerror}", hint="Check the path after @.", code="run.input_unreadable"
            ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise UsageError(
            f"--input is not JSON: {err}", hint='Quote it: --input \'{"key": "value"}\'.', code="run.input_not_json"
        ) from None


def _config_or_none(app: App):
    try:
        return app.config
    except SkillctlError:
        return None  # an unreadable config must not stop a sandboxed run; defaults apply


def _print_human(result) -> None:
    if result.stdout:
        console.out(result.stdout.rstrip("\n"))
    if result.stderr:
        console.info(result.stderr.rstrip("\n"))
    collected = [o for o in result.outputs if not o.skipped]
    summary = f"{result.status.value} (exit {result.exit_code}) in {result.duration_ms} ms on {result.backend}"
    if result.outputs:
        summary += f"; {len(collected)} output file(s)"
    for o in result.outputs:
        where = f" -> {o.saved_to}" if o.saved_to else ""
        console.info(f"  output {o.path} ({o.size} bytes){where}" + (f" skipped: {o.skipped}" if o.skipped else ""))
    (console.success if result.ok else console.warn)(f"run: {summary}")
