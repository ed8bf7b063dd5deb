"""Registries and who you are on them: ``login``, ``logout``, ``whoami``, ``config``.

Thin callers of :mod:`skillctl.config` and :mod:`skillctl.registry_client`. Tokens are read
without echo, verified with ``GET /api/v1/me`` before they are stored, and never printed.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app
from skillctl.config import (
    ENV_REGISTRY,
    ENV_TOKEN,
    Config,
    Registry,
    mask_secret,
    masked,
)
from skillctl.errors import SkillctlError, UsageError

REGISTRY_OPTION = click.option(
    "--registry", "registry_name", metavar="NAME", help="A configured registry (default: the default one)."
)


def _user_label(me: dict) -> str:
    user = me.get("user") if isinstance(me.get("user"), dict) else me
    return str(user.get("username") or user.get("name") or user.get("email") or "unknown user")


def _read_token(reg: Registry) -> str:
    """From a pipe when stdin is not a terminal (CI), else a prompt that does not echo."""
    if not sys.stdin.isatty():
        return sys.stdin.readline().strip()
    return click.prompt(f"Token for {reg.name} ({reg.url})", hide_input=True, err=True).strip()


def _configured(config: Config, registry_name: str | None) -> Registry:
    """The registry to store a token for: it must be a named, configured one."""
    reg = config.registry(registry_name)
    if reg.name not in config.registries:
        raise UsageError(
            f"{ENV_REGISTRY} points at {reg.url}, which is not a configured registry",
            hint=f"Run `skillctl config add-registry NAME {reg.url}`, then `skillctl login --registry NAME`.",
            code="config.unnamed_registry",
        )
    return reg


@click.command()
@REGISTRY_OPTION
@click.option("--token", help="The token (else read from stdin, or prompted without echo).")
@json_option
@pass_app
def login(app: App, registry_name: str | None, token: str | None, as_json: bool) -> int:
    """Store a token for a registry, after checking it with the registry.

    The token goes to credentials.toml (mode 0600) in the config folder.
    """
    from skillctl.config import save_token
    from skillctl.registry_client import RegistryClient, RegistryError
    from skillctl.transport import require_safe_url

    reg = _configured(app.config, registry_name)
    require_safe_url(reg.url, what=f"{reg.name}'s URL")  # before asking for a token to send there
    token = (token or _read_token(reg)).strip()
    if not token:
        raise UsageError(
            "no token given", hint="Pass --token, pipe it on stdin, or type it at the prompt.", code="auth.no_token"
        )
    try:
        with RegistryClient(Registry(reg.name, reg.url, token)) as client:
            me = client.me()
    except RegistryError as err:
        if err.status in (401, 403):
            err.message = f"{reg.name} refused the token: {err.message}"
            err.hint = "Check the token: it may be mistyped, expired or revoked. Nothing was stored."
        raise
    save_token(reg.name, token)
    user = _user_label(me)
    if as_json:
        console.out_json({"registry": reg.name, "url": reg.url, "user": me})
    else:
        console.success(f"Logged in to {reg.name} ({reg.url}) as {user}.")
    return 0


@click.command()
@REGISTRY_OPTION
@json_option
@pass_app
def logout(app: App, registry_name: str | None, as_json: bool) -> int:
    """Forget the stored token of a registry."""
    from skillctl.config import delete_token

    reg = _configured(app.config, registry_name)
    removed = delete_token(reg.name)
    if as_json:
        console.out_json({"registry": reg.name, "removed": removed})
    elif removed:
        console.success(f"Logged out of {reg.name}.")
    else:
        console.info(f"No token was stored for {reg.name}.")
    if os.environ.get(ENV_TOKEN):
        console.warn(f"{ENV_TOKEN} is set, so a token is still sent; unset it to stop.")
    return 0


@click.command()
@REGISTRY_OPTION
@json_option
@pass_app
def whoami(app: App, registry_name: str | None, as_json: bool) -> int:
    """Show the account a registry sees for your token."""
    from skillctl.registry_client import RegistryClient

    reg = app.config.registry(registry_name)
    reg.require_token()
    with RegistryClient(reg) as client:
        me = client.me()
    if as_json:
        console.out_json({"registry": reg.name, "url": reg.url, "user": me})
    else:
        console.out(f"{_user_label(me)} on {reg.name} ({reg.url})")
    return 0


# --- config ------------------------------------------------------------------------------


def _config_summary(config: Config) -> dict[str, Any]:
    from skillctl.config import config_path, credentials_path

    env_url = os.environ.get(ENV_REGISTRY)
    return {
        "config_file": str(config_path()),
        "credentials_file": str(credentials_path()),
        "default_registry": config.default_registry,
        "registries": [
            {**reg.to_dict(), "default": name == config.default_registry}
            for name, reg in sorted(config.registries.items())
        ],
        "environment": {
            ENV_REGISTRY: env_url or None,
            ENV_TOKEN: mask_secret(os.environ.get(ENV_TOKEN)) or None,
        },
        "values": masked(config.values),
    }


def _show(app: App, as_json: bool) -> None:
    from skillctl.config import iter_flat

    summary = _config_summary(app.config)
    if as_json:
        console.out_json(summary)
        return
    rows = [
        [r["name"] + (" (default)" if r["default"] else ""), r["url"], r["token"] or "-"] for r in summary["registries"]
    ]
    console.table(["REGISTRY", "URL", "TOKEN"], rows)
    for name, value in summary["environment"].items():
        if value:
            console.out(f"{name} = {value}")
    flat = [(k, v) for k, v in iter_flat(summary["values"]) if not k.startswith("registries.")]
    if flat:
        console.out("")
    for key, value in flat:
        console.out(f"{key} = {_literal(value)}")
    console.info(f"config: {summary['config_file']}")


def _literal(value: Any) -> str:
    """A value as TOML would write it, so `config get` output can go back into `config set`."""
    import tomlkit

    return tomlkit.item(value).as_string().strip() if value != {} else "{}"


@click.group(invoke_without_command=True)
@json_option
@click.pass_context
def config(ctx: click.Context, as_json: bool) -> None:
    """Show the configuration (tokens masked), or change it with a subcommand."""
    if ctx.invoked_subcommand is None:
        _show(ctx.ensure_object(App), as_json)


@config.command("get")
@click.argument("key")
@json_option
@pass_app
def config_get(app: App, key: str, as_json: bool) -> int:
    """Print the value of a dotted KEY (secrets masked)."""
    from skillctl.config import get_dotted

    missing = object()
    value = get_dotted(masked(app.config.values), key, missing)
    if value is missing:
        raise SkillctlError(
            f"{key} is not set", hint="`skillctl config` lists every key that is set.", code="config.missing_key"
        )
    if as_json:
        console.out_json({"key": key, "value": value})
    elif isinstance(value, dict):
        from skillctl.fileio import dump_toml

        console.out(dump_toml(value).rstrip())
    else:
        console.out(value if isinstance(value, str) else _literal(value))
    return 0


@config.command("set")
@click.argument("key")
@click.argument("value")
@json_option
@pass_app
def config_set(app: App, key: str, value: str, as_json: bool) -> int:
    """Set a dotted KEY to VALUE (a TOML literal such as true, 3 or ["a"], else text).

    Examples: default_registry work; skills.NAME.enabled false; skills.NAME.env.VAR value.
    """
    from skillctl.config import is_secret_key, set_value

    stored = set_value(key, value)
    secret = any(is_secret_key(p) for p in key.split(".")) or ".env." in f".{key}"
    shown = mask_secret(stored) if secret else stored
    if as_json:
        console.out_json({"key": key, "value": shown})
    else:
        console.success(f"{key} = {_literal(shown)}")
    return 0


@config.command("add-registry")
@click.argument("name")
@click.argument("url")
@click.option("--default", "make_default", is_flag=True, help="Make it the default registry.")
@json_option
@pass_app
def config_add_registry(app: App, name: str, url: str, make_default: bool, as_json: bool) -> int:
    """Add (or change) the registry NAME at base URL."""
    from skillctl.config import add_registry

    reg = add_registry(name, url, default=make_default)
    if as_json:
        console.out_json({"name": reg.name, "url": reg.url, "default": make_default})
    else:
        console.success(f"Added registry {reg.name} ({reg.url})" + (" as the default." if make_default else "."))
        if not make_default:
            console.info(f"Use it with --registry {reg.name}, or `skillctl config set default_registry {reg.name}`.")
    return 0
