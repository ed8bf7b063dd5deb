"""What publishers and teams do on a registry: ``yank``, ``unyank``, ``deprecate``, ``dist-tag``,
``token`` and ``org``.

Thin callers of :class:`~skillctl.registry_client.RegistryClient`. The registry decides who may
do what (an owner's admin or publisher role, a token's scope) and says why when it refuses.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app
from skillctl.cli.commands.account import REGISTRY_OPTION
from skillctl.errors import UsageError
from skillctl.format.limits import MAX_REASON_CHARS


@contextmanager
def _client(app: App, registry_name: str | None, *, write: bool = True) -> Iterator:
    from skillctl.registry_client import RegistryClient

    reg = app.config.registry(registry_name)
    if write:
        reg.require_token()
    with RegistryClient(reg) as client:
        yield client


def _name_at_version(spec: str) -> tuple[str, str]:
    name, _, version = spec.partition("@")
    if not name or not version:
        raise UsageError(
            f"give NAME@VERSION, not {spec!r}", hint="e.g. skillctl yank pdf-tools@1.2.0", code="cli.name_version"
        )
    return name, version


def _reason(text: str, what: str) -> str:
    if len(text) > MAX_REASON_CHARS:
        raise UsageError(f"the {what} is {len(text)} characters; the limit is {MAX_REASON_CHARS}", code="cli.too_long")
    return text


def _done(as_json: bool, data: dict, message: str) -> int:
    if as_json:
        console.out_json(data, compact=True)
    else:
        console.success(message)
    return 0


# --- versions ---------------------------------------------------------------------------------


@click.command()
@click.argument("spec", metavar="NAME@VERSION")
@click.option(
    "--reason", default="", help=f"Why (shown to everyone installing it; at most {MAX_REASON_CHARS} characters)."
)
@REGISTRY_OPTION
@json_option
@pass_app
def yank(app: App, spec: str, reason: str, registry_name: str | None, as_json: bool) -> int:
    """Yank a version: ranges skip it; installs pinned to it still work, with a warning."""
    name, version = _name_at_version(spec)
    with _client(app, registry_name) as client:
        result = client.yank(name, version, reason=_reason(reason, "reason"))
    return _done(as_json, result, f"yanked {name} {version}" + (f": {reason}" if reason else ""))


@click.command()
@click.argument("spec", metavar="NAME@VERSION")
@REGISTRY_OPTION
@json_option
@pass_app
def unyank(app: App, spec: str, registry_name: str | None, as_json: bool) -> int:
    """Undo a yank."""
    name, version = _name_at_version(spec)
    with _client(app, registry_name) as client:
        result = client.unyank(name, version)
    return _done(as_json, result, f"unyanked {name} {version}")


@click.command()
@click.argument("spec", metavar="NAME@VERSION")
@click.option("--message", "-m", default=None, help="What to use instead (shown on install and in the catalog).")
@click.option("--undo", is_flag=True, help="Clear the deprecation.")
@REGISTRY_OPTION
@json_option
@pass_app
def deprecate(app: App, spec: str, message: str | None, undo: bool, registry_name: str | None, as_json: bool) -> int:
    """Mark a version deprecated with a message (it stays installable), or --undo it."""
    name, version = _name_at_version(spec)
    if undo == (message is not None):
        raise UsageError(
            "give --message TEXT or --undo", hint=f"skillctl deprecate {spec} -m 'use 2.x'", code="cli.usage"
        )
    with _client(app, registry_name) as client:
        result = client.deprecate(name, version, message="" if undo else _reason(message or "", "message"))
    return _done(as_json, result, f"{'un' if undo else ''}deprecated {name} {version}")


# --- dist-tags --------------------------------------------------------------------------------


@click.group("dist-tag")
@json_option
def dist_tag(as_json: bool) -> None:
    """Named pointers to versions (`latest`, `beta`): install NAME@TAG follows them."""


@dist_tag.command("add")
@click.argument("spec", metavar="NAME@VERSION")
@click.argument("tag")
@REGISTRY_OPTION
@json_option
@pass_app
def dist_tag_add(app: App, spec: str, tag: str, registry_name: str | None, as_json: bool) -> int:
    """Point TAG at VERSION (moving it if it pointed elsewhere)."""
    name, version = _name_at_version(spec)
    with _client(app, registry_name) as client:
        result = client.dist_tag_set(name, tag, version)
    return _done(as_json, {"name": name, **result}, f"{name}: {tag} -> {version}")


@dist_tag.command("rm")
@click.argument("name")
@click.argument("tag")
@REGISTRY_OPTION
@json_option
@pass_app
def dist_tag_rm(app: App, name: str, tag: str, registry_name: str | None, as_json: bool) -> int:
    """Remove TAG (`latest` is computed again from the versions)."""
    with _client(app, registry_name) as client:
        client.dist_tag_remove(name, tag)
    return _done(as_json, {"name": name, "tag": tag, "removed": True}, f"{name}: removed {tag}")


@dist_tag.command("ls")
@click.argument("name")
@REGISTRY_OPTION
@json_option
@pass_app
def dist_tag_ls(app: App, name: str, registry_name: str | None, as_json: bool) -> int:
    """List a skill's dist-tags."""
    with _client(app, registry_name, write=False) as client:
        tags = client.dist_tags(name)
    if as_json:
        console.out_json(tags)
    else:
        console.table(["tag", "version"], sorted([t, v] for t, v in tags.items()))
    return 0


# --- tokens -----------------------------------------------------------------------------------


@click.group()
@json_option
def token(as_json: bool) -> None:
    """API tokens: create (the secret is shown once), list, revoke."""


@token.command("create")
@click.option("--scope", type=click.Choice(["read", "publish", "admin"]), default="publish", show_default=True)
@click.option("--owner", default="", help="Limit the token to one user or organisation.")
@click.option("--name", "label", default="", help="A label to recognise it by (e.g. ci-release).")
@click.option("--expires-days", type=click.IntRange(1, 3650), default=None, help="Expire after N days.")
@REGISTRY_OPTION
@json_option
@pass_app
def token_create(
    app: App, scope: str, owner: str, label: str, expires_days: int | None, registry_name: str | None, as_json: bool
) -> int:
    """Create a token. Its secret goes to stdout once; store it (e.g. as a CI secret) now."""
    with _client(app, registry_name) as client:
        result = client.token_create(scope=scope, owner=owner, name=label, expires_days=expires_days)
    if as_json:
        console.out_json(result, compact=True)
    else:
        console.out(str(result.get("token", "")))
        console.success(
            f"created token {result.get('id')} ({scope}{', ' + owner if owner else ''}); it is shown only now"
        )
    return 0


@token.command("list")
@REGISTRY_OPTION
@json_option
@pass_app
def token_list(app: App, registry_name: str | None, as_json: bool) -> int:
    """Your tokens (never their secrets)."""
    with _client(app, registry_name) as client:
        tokens = client.tokens()
    if as_json:
        console.out_json(tokens)
        return 0
    rows = [
        [
            t.get("id"),
            t.get("name") or "",
            t.get("prefix"),
            t.get("scope"),
            t.get("owner") or "",
            (t.get("expires_at") or "")[:10],
            "revoked" if t.get("revoked_at") else (t.get("last_used_at") or "never")[:10],
        ]
        for t in tokens
    ]
    console.table(["id", "name", "prefix", "scope", "owner", "expires", "last used"], rows)
    return 0


@token.command("revoke")
@click.argument("token_id", type=int, metavar="ID")
@REGISTRY_OPTION
@json_option
@pass_app
def token_revoke(app: App, token_id: int, registry_name: str | None, as_json: bool) -> int:
    """Revoke a token by its id (`skillctl token list`)."""
    with _client(app, registry_name) as client:
        client.token_revoke(token_id)
    return _done(as_json, {"id": token_id, "revoked": True}, f"revoked token {token_id}")


# --- organisations ----------------------------------------------------------------------------


@click.group()
@json_option
def org(as_json: bool) -> None:
    """Organisations: shared owners for skills, with members and roles."""


@org.command("create")
@click.argument("name")
@REGISTRY_OPTION
@json_option
@pass_app
def org_create(app: App, name: str, registry_name: str | None, as_json: bool) -> int:
    """Create an organisation; you become its owner. Publish into it with --owner NAME."""
    with _client(app, registry_name) as client:
        result = client.org_create(name)
    return _done(as_json, result, f"created organisation {name}")


@org.command("members")
@click.argument("name")
@REGISTRY_OPTION
@json_option
@pass_app
def org_members(app: App, name: str, registry_name: str | None, as_json: bool) -> int:
    """List an organisation's members (members only)."""
    with _client(app, registry_name) as client:
        members = client.org_members(name)
    if as_json:
        console.out_json(members)
    else:
        console.table(
            ["username", "role", "since"],
            [[m.get("username"), m.get("role"), (m.get("created_at") or "")[:10]] for m in members],
        )
    return 0


@org.command("add")
@click.argument("name")
@click.argument("username")
@click.option(
    "--role", type=click.Choice(["owner", "admin", "publisher", "reader"]), default="reader", show_default=True
)
@REGISTRY_OPTION
@json_option
@pass_app
def org_add(app: App, name: str, username: str, role: str, registry_name: str | None, as_json: bool) -> int:
    """Add USERNAME to the organisation, or change their role."""
    with _client(app, registry_name) as client:
        result = client.org_member_set(name, username, role)
    return _done(as_json, {"org": name, **result}, f"{username} is now {role} of {name}")


@org.command("remove")
@click.argument("name")
@click.argument("username")
@REGISTRY_OPTION
@json_option
@pass_app
def org_remove(app: App, name: str, username: str, registry_name: str | None, as_json: bool) -> int:
    """Remove USERNAME from the organisation."""
    with _client(app, registry_name) as client:
        client.org_member_remove(name, username)
    return _done(as_json, {"org": name, "username": username, "removed": True}, f"removed {username} from {name}")
