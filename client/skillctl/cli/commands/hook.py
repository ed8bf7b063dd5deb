"""``skillctl hook``: routing inside an agent, before its model is called (Claude Code hooks)."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app

if TYPE_CHECKING:
    from skillctl.config import Config
    from skillctl.skillset import SkillSet


@click.group(invoke_without_command=True)
@json_option
@click.pass_context
def hook(ctx: click.Context, as_json: bool) -> None:
    """Route each prompt inside an agent: the hook agents call, and its installation.

    \b
    skillctl hook install claude      # once per project (-g: for every project)
    skillctl hook                     # where it is installed
    Claude Code then runs `skillctl hook claude` on every prompt and gives the model the
    instructions of the skills the prompt needs (nothing when it needs none).
    """
    if ctx.invoked_subcommand is not None:
        return
    from skillctl import agent_hooks, paths

    places = {
        scope: agent_hooks.claude_settings_path(user=scope == "user", project=paths.project_root())
        for scope in ("project", "user")
    }
    found = {
        scope: {"settings": str(path), "installed": agent_hooks.claude_installed(path)}
        for scope, path in places.items()
    }
    if as_json:
        console.out_json({"claude": found})
        return
    for scope, state in found.items():
        mark = "installed" if state["installed"] else "not installed"
        console.out(f"claude\t{scope}\t{mark}\t{state['settings']}")


@hook.command("claude")
@json_option
@pass_app
def claude(app: App, as_json: bool) -> int:
    """Claude Code's UserPromptSubmit hook: the event on stdin, the context as JSON on stdout.

    Routes the prompt over the skills of the event's project (.agents/skills, .claude/skills)
    and the user's. Always exits 0: a failing hook must not block the user's prompt (Claude
    Code blocks on exit 2), so errors only go to stderr (--debug raises them). A warm helper
    process (started by the first hook, gone after 10 idle minutes) answers later prompts
    without loading the model again; SKILLYARD_HOOK_HELPER=0 turns it off.
    """
    from skillctl.cli import claude_hook

    return claude_hook.run(sys.stdin.read(), debug=app.debug)


@hook.command("serve", hidden=True)
@click.option("--idle", type=float, default=None, help="Seconds without a prompt before exiting.")
@json_option
def serve(idle: float | None, as_json: bool) -> int:
    """The warm helper `hook claude` starts: answers hook events over a Unix socket."""
    from skillctl import hook_server

    seconds = (
        idle if idle is not None else float(os.environ.get("SKILLYARD_HOOK_IDLE_SECONDS", hook_server.IDLE_SECONDS))
    )
    kept = _KeptSkillSets()
    return hook_server.serve(lambda text: _event_output(App(), text, kept), idle_seconds=seconds)


def _event_output(app: App, text: str, kept: _KeptSkillSets | None = None) -> str:
    """What the hook prints for one event (:func:`skillctl.cli.claude_hook.event_output`).
    ``kept``: the helper's skill sets from earlier prompts (None: read the folders now)."""
    from skillctl.cli import claude_hook

    if kept is not None:
        return claude_hook.event_output(text, lambda cwd: kept.get(app, cwd))
    return claude_hook.event_output(text, lambda cwd: claude_hook.skills_for(app.config, cwd))


class _KeptSkillSets:
    """The warm helper's skill sets between prompts, one per project, config and the variables
    that decide where skills and state live and how routing runs (HOME, SKILLYARD_*, XDG_*),
    the least recently used dropped past ``size``. Each prompt refreshes its set (changed
    folders read again; the gates checked again against this prompt's environment: PATH, the
    variables skills require), so a kept set answers as a fresh one would, without rebuilding
    its router every time, whatever else the agent's environment carries."""

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._sets: dict[tuple, tuple[Config, SkillSet]] = {}  # key -> (config, set), oldest first

    def get(self, app: App, cwd: Path | None) -> SkillSet:
        from skillctl import paths

        where = tuple(sorted((k, v) for k, v in os.environ.items() if k == "HOME" or k.startswith(_SET_VARIABLES)))
        key = (str(paths.project_root(cwd)), where)
        found = self._sets.pop(key, None)
        if found is not None and found[0] == app.config:
            skills = found[1]
            skills.refresh()
        else:
            from skillctl.cli.claude_hook import skills_for

            skills = skills_for(app.config, cwd)
        self._sets[key] = (app.config, skills)
        while len(self._sets) > self.size:
            self._sets.pop(next(iter(self._sets)))
        return skills


# Variables a skill set is built from (where skills, config and state live; semantic on or off).
_SET_VARIABLES = ("SKILLYARD_", "XDG_")


@hook.command("install")
@click.argument("agent", type=click.Choice(["claude"]))
@click.option("-g", "--global", "user", is_flag=True, help="In the user's settings (every project).")
@json_option
@pass_app
def install(app: App, agent: str, user: bool, as_json: bool) -> int:
    """Add the routing hook to AGENT's settings (Claude Code: .claude/settings.json)."""
    from skillctl import agent_hooks, paths

    settings = agent_hooks.claude_settings_path(user=user, project=paths.project_root())
    # The user's settings belong to this machine: this skillctl, by absolute path. A project's are
    # committed and shared: `skillctl` from PATH, doing nothing where it is not installed.
    command = f"{_executable()} {agent_hooks.HOOK_ARGS}" if user else agent_hooks.PORTABLE_COMMAND
    if not user and shutil.which("skillctl") is None:
        console.warn(
            "skillctl is not on PATH here, so the hook will do nothing until it is "
            "(or use `skillctl hook install claude -g` for this machine only)"
        )
    changed = agent_hooks.install_claude(settings, command)
    if as_json:
        console.out_json({"agent": agent, "settings": str(settings), "command": command, "changed": changed})
    elif changed:
        console.success(f"Claude Code will run `{command}` on every prompt ({settings})")
    else:
        console.info(f"already installed in {settings}")
    return 0


def _executable() -> str:
    """This skillctl, by absolute path: hooks run with the agent's PATH, which may lack our venv.
    Started some other way (``python -m``), the same interpreter runs the same package (its
    ``__main__`` is the console script's, with the hook's fast path)."""
    argv0 = Path(sys.argv[0])
    if argv0.name == "skillctl" and argv0.exists():
        return shlex.quote(str(argv0.absolute()))
    return f"{shlex.quote(sys.executable)} -m skillctl"
