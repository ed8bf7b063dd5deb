"""``skillctl toolsets``: trust (or untrust) the toolset code a skill brings.

A skill's own toolsets (seed 004's ``toolsets/index:Class``) are Python files of the skill that an
agent imports into its own process. They load only after the user read and trusted them; the trust
is pinned to a digest of the skill's Python files (:mod:`skillctl.runtime.toolsets`), so an update
or edit untrusts them. Toolsets from installed packages are trusted by ``[runtime]
trusted_toolsets`` patterns instead (``skillctl config``).
"""

from __future__ import annotations

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app
from skillctl.cli.commands.mcp import confirmed, installed_skill
from skillctl.errors import SkillctlError

TRUST_EPILOG = (
    "A skill's own toolsets are Python code it brings, imported into the agent's process (SkillSet, "
    "skillctl's agent loop) with your rights, outside any sandbox. The trust is pinned to a digest "
    "of every Python file of the skill; an update or edit untrusts them until you trust them again. "
    "Installs, updates and the skill_management tool never trust anything."
)


@click.group()
@json_option
def toolsets(as_json: bool) -> None:
    """Trust the toolset code skills bring (their Python files run in the agent's process)."""


@toolsets.command("trust", epilog=TRUST_EPILOG)
@click.argument("skill")
@click.option("-y", "--yes", is_flag=True, help="Trust without asking (what is trusted is still shown).")
@json_option
@pass_app
def trust(app: App, skill: str, yes: bool, as_json: bool) -> int:
    """Let agents import the toolsets of SKILL (an installed skill's NAME, or a PATH to its folder).

    Shows the toolsets and every Python file of the skill with its sha256, then asks; writes
    [runtime] trusted_skill_toolsets in config.toml."""
    from skillctl.runtime import toolsets as runtime_toolsets

    found = installed_skill(skill, app.config)
    own = runtime_toolsets.own_toolsets(found)
    if not own:
        raise SkillctlError(
            f"{found.name} brings no toolset code of its own; nothing to trust",
            hint="Toolsets from installed packages are trusted by [runtime] trusted_toolsets patterns.",
            code="toolset.none",
        )
    files = runtime_toolsets.skill_code_files(found)
    if not (as_json and yes):
        _show(found, own, files)
    if not yes and not confirmed(f"Trust {found.name}'s toolset code?"):
        raise SkillctlError(
            f"{found.name}'s toolsets were not trusted; nothing was written",
            hint=f"Run it again and answer y, or pass --yes: skillctl toolsets trust {found.name} --yes",
            code="toolset.trust_declined",
        )
    changed = runtime_toolsets.trust_skill_toolsets(found)
    if as_json:
        digest = runtime_toolsets.skill_code(found)
        console.out_json({"name": found.name, "toolsets": own, "files": files, "digest": digest, "changed": changed})
    elif changed:
        console.success(f"trusted: agents import {found.name}'s toolsets when they load the skill")
    else:
        console.info(f"{found.name}'s toolsets were trusted as they are already")
    return 0


@toolsets.command("untrust")
@click.argument("name")
@json_option
@pass_app
def untrust(app: App, name: str, as_json: bool) -> int:
    """Stop agents from importing the toolsets of skill NAME (removes its pin)."""
    from skillctl.runtime.mcp_trust import untrust_write
    from skillctl.runtime.toolsets import SKILL_CODE_KEY

    removed = untrust_write(name, SKILL_CODE_KEY)
    if as_json:
        console.out_json({"name": name, "removed": removed})
    elif removed:
        console.success(f"{name}'s toolsets are no longer imported")
    else:
        console.info(f"{name}'s toolsets were not trusted")
    return 0


@toolsets.command("trusted")
@json_option
@pass_app
def trusted(app: App, as_json: bool) -> int:
    """List the skills whose toolset code you trusted, and whether each is still as trusted."""
    from skillctl.runtime.mcp_trust import trusted_entries
    from skillctl.runtime.toolsets import SKILL_CODE_KEY

    rows = [_row(entry, app.config) for entry in trusted_entries(app.config, SKILL_CODE_KEY)]
    if as_json:
        console.out_json({"trusted": rows})
        return 0
    if not rows:
        console.info("no skill's toolset code is trusted (skillctl toolsets trust NAME)")
    for row in rows:
        status = {"changed": f"changed — re-run `skillctl toolsets trust {row['name']}`"}.get(
            row["status"], row["status"]
        )
        console.out(f"{row['name']}\t{status}\t{row['digest']}")
    return 0


def _row(entry, config) -> dict:
    """One pinned skill and its status: trusted, changed (its Python files), not_installed."""
    from skillctl.runtime.toolsets import skill_code

    row = {"name": entry.name, "digest": entry.digest, "status": "not_installed"}
    try:
        found = installed_skill(entry.name, config)
    except SkillctlError:
        return row
    try:
        row["status"] = "trusted" if skill_code(found) == entry.digest else "changed"
    except SkillctlError:  # too many Python files now: it would not load
        row["status"] = "changed"
    return row


def _show(found, own: list[str], files: dict[str, str]) -> None:
    """What trusting consents to, on stderr (stdout stays for --json)."""
    lines = [
        f"the toolsets of {found.name} run in the agent's process, outside the sandbox, with your rights:",
        *(f"  toolset  {ref}" for ref in own),
        f"  folder   {found.path}",
        *(f"  python   {path} (sha256 {digest[:16]}…)" for path, digest in files.items()),
    ]
    click.echo("\n".join(lines), err=True)
