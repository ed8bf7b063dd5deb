"""``skillctl advisory create|list|withdraw``: security advisories (OSV) on a registry's skills.

Filing and withdrawing need the owner's publish or admin token (or staff); listing is public.
``skillctl audit`` reports the advisories that affect installed versions.
"""

from __future__ import annotations

from pathlib import Path

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app
from skillctl.cli.commands.account import REGISTRY_OPTION
from skillctl.errors import ExitCode, UsageError

SEVERITIES = ("low", "medium", "high", "critical")


@click.group()
@json_option
def advisory(as_json: bool) -> None:
    """File, list and withdraw security advisories (OSV format) on a registry's skills."""


@advisory.command()
@click.argument("name")
@click.option("--affected", required=True, metavar="RANGE", help="The affected versions: 1.2.0, ^1.0, >=1.0,<1.3")
@click.option("--severity", required=True, type=click.Choice(SEVERITIES))
@click.option("--summary", required=True, metavar="TEXT", help="One line saying what is wrong.")
@click.option("--details", default="", metavar="TEXT|@FILE", help="The full story (Markdown); @FILE reads a file.")
@click.option("--alias", "aliases", multiple=True, metavar="ID", help="Another id of the same issue (CVE-...).")
@REGISTRY_OPTION
@json_option
@pass_app
def create(
    app: App,
    name: str,
    affected: str,
    severity: str,
    summary: str,
    details: str,
    aliases: tuple[str, ...],
    registry_name: str | None,
    as_json: bool,
) -> int:
    """File an advisory against versions of NAME; prints its id (SKY-YYYY-NNNN)."""
    from skillctl.format.versions import parse_spec
    from skillctl.registry_client import RegistryClient

    parse_spec(affected)  # a bad range is a usage error before any request
    text = _details(details)
    with RegistryClient(app.config.registry(registry_name)) as client:
        filed = client.advisory_create(
            name, summary=summary, severity=severity, affected=affected, details=text, aliases=aliases
        )
    if as_json:
        console.out_json(filed)
    else:
        console.out(str(filed.get("id", "")))
        console.success(f"filed {filed.get('id')} against {name} {affected}: `skillctl audit` reports it")
    return int(ExitCode.OK)


def _details(value: str) -> str:
    if not value.startswith("@"):
        return value
    try:
        return Path(value[1:]).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(
            f"cannot read --details {value}: {err}",
            hint="Give @PATH of a UTF-8 text file, or the text itself.",
            code="advisory.details_unreadable",
        ) from err


@advisory.command("list")
@click.argument("name")
@REGISTRY_OPTION
@json_option
@pass_app
def list_(app: App, name: str, registry_name: str | None, as_json: bool) -> int:
    """List NAME's advisories (withdrawn ones marked)."""
    from skillctl.registry_client import RegistryClient

    with RegistryClient(app.config.registry(registry_name)) as client:
        found = client.advisories(name)
    if as_json:
        console.out_json({"advisories": found})
        return int(ExitCode.OK)
    if not found:
        console.info(f"No advisories for {name}.")
    console.table(["ID", "SEVERITY", "AFFECTED", "PUBLISHED", "SUMMARY"], [_row(a) for a in found])
    return int(ExitCode.OK)


def _row(advisory: dict) -> list:
    severity = (advisory.get("database_specific") or {}).get("severity") or ""
    status = f"withdrawn {str(advisory['withdrawn'])[:10]}: " if advisory.get("withdrawn") else ""
    return [
        advisory.get("id"),
        severity,
        _affected(advisory),
        str(advisory.get("published") or "")[:10],
        status + str(advisory.get("summary") or ""),
    ]


def _affected(advisory: dict) -> str:
    """The affected versions in words: the listed versions, else the ranges' events."""
    parts: list[str] = []
    for entry in advisory.get("affected") or []:
        listed = [str(v) for v in entry.get("versions") or []]
        if listed:
            parts.append(", ".join(listed))
            continue
        for rng in entry.get("ranges") or []:
            events = [f"{k} {v}" for e in rng.get("events") or [] for k, v in e.items()]
            parts.append(" ".join(events))
    return "; ".join(p for p in parts if p)


@advisory.command()
@click.argument("advisory_id", metavar="ID")
@REGISTRY_OPTION
@json_option
@pass_app
def withdraw(app: App, advisory_id: str, registry_name: str | None, as_json: bool) -> int:
    """Withdraw an advisory filed in error; it keeps its id, marked withdrawn."""
    from skillctl.registry_client import RegistryClient

    with RegistryClient(app.config.registry(registry_name)) as client:
        withdrawn = client.advisory_withdraw(advisory_id)
    if as_json:
        console.out_json(withdrawn)
    else:
        console.success(f"withdrew {advisory_id}")
    return int(ExitCode.OK)
