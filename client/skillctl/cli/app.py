"""The application object passed to every command, and the options every command shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import click


@dataclass
class App:
    """State of one invocation: flags shared by all commands, lazily loaded config."""

    debug: bool = False
    json: bool = False
    _config: Any = field(default=None, repr=False)

    @property
    def config(self):
        # Imported lazily: most commands (validate, pack, route) never read the user config.
        if self._config is None:
            from skillctl.config import load_config

            self._config = load_config()
        return self._config


pass_app = click.make_pass_decorator(App, ensure=True)


def _set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    if value:
        ctx.ensure_object(App).json = True
    return value


def json_option(func):
    """``--json``: machine-readable output on stdout (every command has it)."""
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        expose_value=True,
        callback=_set_json,
        help="Print machine-readable JSON on stdout.",
    )(func)
