"""The ``skillctl`` entry point: a thin click group that loads each command on demand.

Commands live one module each under ``skillctl.cli.commands``; they parse arguments, call the
operations in the library, and print through ``skillctl.console``. Errors are mapped to exit
codes here and only here.
"""

from __future__ import annotations

import importlib
import sys

import click

from skillctl import __version__
from skillctl.cli.app import App
from skillctl.errors import EXIT_CODES_HELP, ExitCode, SkillctlError

# name -> (module under skillctl.cli.commands, attribute, one-line help)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": ("authoring", "init", "Create a new skill skeleton."),
    "validate": ("authoring", "validate", "Validate skills (folders, SKILL.md files or archives)."),
    "pack": ("authoring", "pack", "Pack a skill folder into a reproducible archive."),
    "migrate": ("authoring", "migrate", "Rewrite OpenClaw single-line JSON metadata as YAML."),
    "publish": ("publish", "publish", "Publish a skill to a registry."),
    "yank": ("publisher", "yank", "Yank a published version (ranges skip it)."),
    "unyank": ("publisher", "unyank", "Undo a yank."),
    "deprecate": ("publisher", "deprecate", "Mark a version deprecated, with a message."),
    "dist-tag": ("publisher", "dist_tag", "Add, remove or list a skill's dist-tags."),
    "advisory": ("advisory", "advisory", "File, list or withdraw security advisories (OSV) on a skill."),
    "token": ("publisher", "token", "Create, list or revoke API tokens."),
    "org": ("publisher", "org", "Create organisations and manage their members."),
    "login": ("account", "login", "Store a token for a registry."),
    "logout": ("account", "logout", "Forget the token of a registry."),
    "whoami": ("account", "whoami", "Show who a registry thinks you are."),
    "config": ("account", "config", "Show or change the client configuration."),
    "search": ("browse", "search", "Search a registry for skills."),
    "show": ("browse", "show", "Show a skill's versions and requirements (--files, --readme)."),
    "use": ("browse", "use", "Print a registry skill's instructions for an agent, without installing it."),
    "install": ("install", "install", "Install skills (from a registry, folder, archive, URL or git)."),
    "update": ("install", "update", "Update installed skills within their ranges."),
    "outdated": ("install", "outdated", "Show skills with newer versions (current, wanted, latest)."),
    "uninstall": ("install", "uninstall", "Remove installed skills."),
    "list": ("install", "list_", "List installed skills."),
    "verify": ("install", "verify", "Check installed skills against the lock file."),
    "audit": ("audit", "audit", "Check installed versions for advisories, malicious, yanked or deprecated ones."),
    "check": ("check", "check", "Check whether skills can work on this machine (gating)."),
    "route": ("route", "route", "Pick the skills a message needs."),
    "prompt": ("route", "prompt", "Build the skills block of an agent's prompt."),
    "run": ("run", "run", "Run a skill's code in a sandbox."),
    "scan": ("scan", "scan", "Scan skills for dangerous instructions and code (the registry's scanner)."),
    "hook": ("hook", "hook", "Route every prompt inside an agent (Claude Code hook)."),
    "mcp": ("mcp", "mcp", "Serve the installed skills over MCP; add that server to agents' configs."),
    "toolsets": ("toolsets", "toolsets", "Trust the toolset code skills bring (run in the agent's process)."),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when invoked (fast start-up)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = COMMANDS.get(cmd_name)
        if spec is None:
            return None
        module_name, attr, _ = spec
        module = importlib.import_module(f"skillctl.cli.commands.{module_name}")
        return getattr(module, attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Help text comes from the table above, so `--help` imports no command module.
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=LazyGroup,
    epilog=EXIT_CODES_HELP + " Environment: SKILLYARD_REGISTRY, SKILLYARD_TOKEN, NO_COLOR.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="skillctl")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """skillctl: install, verify, route and run agent skills."""
    ctx.ensure_object(App).debug = debug


def _report(err: SkillctlError, app: App) -> None:
    from skillctl import console

    if app.json:
        console.out_json(err.to_dict(), compact=True)
    console.error(err.message, err.hint)


def main(argv: list[str] | None = None) -> int:
    app = App()
    try:
        rv = cli.main(args=argv, prog_name="skillctl", standalone_mode=False, obj=app)
    except SkillctlError as err:
        if app.debug:
            raise
        _report(err, app)
        return int(err.exit_code)
    except click.exceptions.Abort:
        sys.stderr.write("Aborted.\n")
        return int(ExitCode.FAILURE)
    except click.ClickException as err:
        err.show()
        return err.exit_code
    except click.exceptions.Exit as err:
        return err.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as err:  # the last line of defence: never a bare traceback
        if app.debug:
            raise
        from skillctl import console

        console.error(
            f"unexpected internal error: {type(err).__name__}: {err}",
            "Run again with --debug for the traceback, and please report it.",
        )
        return int(ExitCode.FAILURE)
    return rv if isinstance(rv, int) else 0


if __name__ == "__main__":
    sys.exit(main())
