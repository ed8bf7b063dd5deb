"""``skillctl hook claude`` without click: what Claude Code runs afresh on every prompt.

The console script (:mod:`skillctl.cli.launch`) runs :func:`run` for exactly ``skillctl hook
claude``, before click and the command table are imported (~30-50 ms of a cold hook, none of
it needed); the click command (:mod:`skillctl.cli.commands.hook`) calls the same function for
the other spellings (``--debug``...). The warm helper (:mod:`skillctl.hook_server`) answers when
it runs; without an answer the prompt is routed in this process and a helper is started for
the next prompts. The hook always exits 0: a failing hook must not block the user's prompt
(Claude Code blocks on exit 2), so errors only go to stderr (``--debug`` raises them).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillctl.config import Config
    from skillctl.skillset import SkillSet


# Routing's matrix products are small (1,000 skills x 640 numbers): OpenBLAS's second thread
# only waits for a core. On a 2-core machine shared with other jobs, one product took ~8 ms with
# two threads and ~0.15 ms with one, and a cold hook 863 -> 649 ms (bench/README, route_speed).
# Read when numpy loads, so set before routing imports it; the helper started here inherits it.
BLAS_THREADS = {"OPENBLAS_NUM_THREADS": "1"}


def run(text: str, *, debug: bool = False) -> int:
    """Answer one hook event (``text``, the JSON Claude Code wrote on stdin) on stdout."""
    from skillctl import hook_server

    for name, value in BLAS_THREADS.items():
        os.environ.setdefault(name, value)  # the user's own setting wins

    helper = hook_server.enabled() and not debug
    answer = hook_server.ask(text) if helper else None
    if answer is None:
        try:
            from skillctl.config import load_config

            config = load_config()
            answer = {"output": event_output(text, lambda cwd: skills_for(config, cwd))}
        except Exception as exc:  # noqa: BLE001 - see the module docstring: never block the prompt
            if debug:
                raise
            answer = {"error": str(exc)}
        if helper:
            hook_server.start_background()
    try:
        print_answer(answer)
    except BrokenPipeError:
        pass  # Claude Code went away: nothing to tell it
    return 0


def print_answer(answer: dict) -> None:
    """A hook answer (the helper's or this process's): the output on stdout, an error as a
    warning on stderr."""
    from skillctl import console

    if answer.get("error"):
        console.warn(f"skillctl hook claude: {answer['error']}")
    elif answer.get("output"):
        console.out(answer["output"])


def event_output(text: str, skills: Callable[[Path | None], SkillSet]) -> str:
    """What the hook prints for one event: Claude Code's JSON, or "" when no skill is needed.
    ``skills``: the skill set of the event's folder (read now, or the helper's kept one)."""
    from skillctl import agent_hooks

    event = agent_hooks.parse_event(text)
    context = agent_hooks.context_for(
        skills(event.cwd),
        event,
        history=agent_hooks.transcript_prompts(event.transcript, current=event.prompt),
    )
    return json.dumps(agent_hooks.claude_output(context), ensure_ascii=False, separators=(",", ":")) if context else ""


def skills_for(config: Config, cwd: Path | None) -> SkillSet:
    """The skills installed for ``cwd``: its project's (.agents/skills, .claude/skills) and the user's."""
    from skillctl import paths
    from skillctl.skillset import SkillSet

    project = paths.project_root(cwd)
    extra = [project / ".claude" / "skills", Path.home() / ".claude" / "skills"]
    return SkillSet.discover(project_dir=project, extra_dirs=extra, config=config)
