"""The ``skillctl`` console script: one fast path, then the click CLI.

Claude Code runs ``skillctl hook claude`` afresh on every prompt, so that command skips the CLI:
:mod:`skillctl.cli.claude_hook` hands the event to the warm helper, or routes it in this
process, without importing click and the command table (about half of a run the helper
answers, and ~30-50 ms of a cold one). Every other command line goes to the click CLI.
"""

from __future__ import annotations

import sys


def main() -> int:
    if sys.argv[1:] == ["hook", "claude"]:
        from skillctl.cli.claude_hook import run

        try:
            return run(sys.stdin.read())
        except KeyboardInterrupt:
            sys.stderr.write("Interrupted.\n")
            return 130
    from skillctl.cli.main import main as cli

    return cli()
