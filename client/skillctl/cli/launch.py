"""The ``skillctl`` console script: one fast path, then the click CLI.

Claude Code runs ``skillctl hook claude`` afresh on every prompt. When the warm helper
(:mod:`skillctl.hook_server`) is running, the answer is one socket round trip, so loading the
CLI (click and the command table, about half of such a run) would be most of the cost: this
module hands the event to the helper first, importing nothing but the helper's client, and only
without an answer loads the CLI, which then routes in-process as before (the event read here is
given back to it on stdin; it does not ask the helper a second time).
"""

from __future__ import annotations

import io
import sys


def main() -> int:
    if sys.argv[1:] == ["hook", "claude"]:
        answered = _hook_via_helper()
        if answered is not None:
            return answered
    from skillctl.cli.main import main as cli

    return cli()


def _hook_via_helper() -> int | None:
    from skillctl import hook_server

    if not hook_server.enabled():
        return None
    text = sys.stdin.read()
    answer = hook_server.ask(text)
    if answer is None:
        sys.stdin = io.StringIO(text)
        hook_server.already_asked = True
        return None
    try:
        print_hook_answer(answer)
    except BrokenPipeError:
        pass  # Claude Code went away: nothing to tell it
    return 0


def print_hook_answer(answer: dict) -> None:
    """Print a hook answer (the helper's or the in-process one): the output on stdout, an error
    as a warning on stderr (the hook always exits 0: a failing hook must not block the prompt)."""
    from skillctl import console

    if answer.get("error"):
        console.warn(f"skillctl hook claude: {answer['error']}")
    elif answer.get("output"):
        console.out(answer["output"])
