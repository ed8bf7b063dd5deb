"""``skillctl mcp``: serve the installed skills over MCP, add that server to agents' configs, and
trust (or untrust) a skill's own MCP command (:mod:`skillctl.runtime.mcp_trust`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app
from skillctl.errors import SkillctlError

AGENTS = ("claude", "cursor", "vscode", "gemini", "opencode")  # runtime.mcp_config.CLIENTS


@click.group(invoke_without_command=True)
@click.option(
    "--http",
    "port",
    type=click.IntRange(0, 65535),
    metavar="PORT",
    help="Serve streamable HTTP on PORT (path /mcp) instead of stdio.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind with --http. Anything but loopback exposes the skills, unauthenticated.",
)
@click.option(
    "--backend",
    type=click.Choice(["auto", "docker", "bwrap"]),
    default="auto",
    show_default=True,
    help="Sandbox backend of run_skill (as `skillctl run`).",
)
@click.option(
    "--agent", metavar="NAME", help="Apply [agents.NAME.tools] of the config on top of [tools] (the tool policy)."
)
@click.option(
    "--semantic/--no-semantic",
    default=None,
    help="Route find_skills with the MiniLM model (default: when the `semantic` extra is installed).",
)
@json_option
@click.pass_context
def mcp(
    ctx: click.Context,
    port: int | None,
    host: str,
    backend: str,
    agent: str | None,
    semantic: bool | None,
    as_json: bool,
) -> int:
    """Serve the installed skills to MCP clients (stdio by default).

    \b
    skillctl mcp install claude       # once per project: .mcp.json (-g: the user's config)
    skillctl mcp                      # what the agent runs (stdio)
    skillctl mcp --http 8765          # streamable HTTP on 127.0.0.1:8765/mcp
    skillctl mcp trust NAME           # let agents start skill NAME's own MCP server
    Tools: find_skills, load_skill, read_skill_file, run_skill (those the tool policy of
    the config allows; the two bridge tools while a skill is available), and the tools of a
    loaded skill's own MCP server once you trusted its command (mcp__SKILL__TOOL); resources:
    skill://NAME/SKILL.md. Needs the `agent` extra: pip install 'skillyard[agent]'.
    """
    if ctx.invoked_subcommand is not None:
        return 0
    from skillctl.runtime import mcp_server
    from skillctl.runtime.mcp_protocol import Notifier
    from skillctl.runtime.policy import ToolPolicy
    from skillctl.runtime.sdk import require_mcp
    from skillctl.skillset import SkillSet

    require_mcp()  # before the (slower) discovery, so a missing extra is said at once
    app: App = ctx.ensure_object(App)
    policy = ToolPolicy.from_config(app.config, agent=agent)
    skills = SkillSet.discover(config=app.config, semantic=semantic, agent=agent)
    notifier = Notifier()
    _watch(skills, notifier)
    log_level = "DEBUG" if app.debug else "WARNING"
    server = mcp_server.build_server(
        mcp_server.SkillTools(skills, config=app.config, backend=backend),
        allows=policy.allows,
        log_level=log_level,
        notifier=notifier,
    )
    _announce(len(skills.names), port, host)
    try:
        mcp_server.serve(server, port=port, host=host, log_level=log_level)
    finally:
        skills.close()  # the MCP servers loaded skills started, and the watcher
    return 0


def _watch(skills, notifier) -> None:
    """Re-index when skills are installed, edited or removed while the agent keeps the server
    running, and tell the clients their lists changed (the agent extra brings watchfiles;
    without it, what was installed at start)."""
    try:
        skills.watch(on_reload=lambda: notifier.changed_from_thread(tools=True, resources=True))
    except SkillctlError:
        pass  # mcp installed without the extra: serve what was there at start


def _announce(count: int, port: int | None, host: str) -> None:
    from skillctl.runtime.mcp_server import LOOPBACK_HOSTS

    if port is None:
        if sys.stdin.isatty():
            console.info(
                "skillctl mcp speaks MCP on stdin/stdout: an agent starts it "
                "(`skillctl mcp install claude`), or use --http PORT"
            )
        return
    if host not in LOOPBACK_HOSTS:
        console.warn(f"serving on {host}: anyone who can reach it can read and run the installed skills")
    console.info(f"serving {count} skills at http://{host}:{port}/mcp")


@mcp.command("install")
@click.argument("agent", type=click.Choice(AGENTS))
@click.option("-g", "--global", "user", is_flag=True, help="In the user's config (every project).")
@json_option
@pass_app
def install(app: App, agent: str, user: bool, as_json: bool) -> int:
    """Add `skillctl mcp` to AGENT's MCP servers (claude: .mcp.json, cursor: .cursor/mcp.json,
    vscode: .vscode/mcp.json, gemini: .gemini/settings.json, opencode: opencode.json).

    Other servers and settings in the file are kept; running it again changes nothing."""
    from skillctl import paths
    from skillctl.runtime import mcp_config

    done = mcp_config.install(agent, user=user, project=paths.project_root())
    if as_json:
        console.out_json(done.to_dict())
    elif done.changed:
        console.success(f"{agent} will start `skillctl mcp` ({done.file})")
    else:
        console.info(f"already installed in {done.file}")
    return 0


TRUST_EPILOG = (
    "A skill's MCP server runs on this machine, outside the sandbox, with your rights: an agent "
    "(SkillSet, skillctl's agent loop) starts it only after you trusted its exact command here. The "
    "trust is pinned to a digest of the skill's mcp block and of the skill files its command line "
    "names; an update or edit that changes them untrusts it until you trust it again. Installs, "
    "updates and the skill_management tool never trust anything."
)


@mcp.command("trust", epilog=TRUST_EPILOG)
@click.argument("skill")
@click.option("-y", "--yes", is_flag=True, help="Trust without asking (the command is still shown).")
@json_option
@pass_app
def trust(app: App, skill: str, yes: bool, as_json: bool) -> int:
    """Let agents start the MCP server of SKILL (an installed skill's NAME, or a PATH to its folder).

    Shows the command, its arguments, the folder it runs in, the names of the environment
    variables it gets and the files it runs, then asks; writes [runtime] trusted_mcp in config.toml."""
    from skillctl.runtime import mcp_trust

    command = mcp_trust.server_command(installed_skill(skill, app.config))
    if not (as_json and yes):
        _show_command(command)
    if not yes and not confirmed(f"Trust this command for {command.skill}?"):
        raise SkillctlError(
            f"{command.skill}'s MCP command was not trusted; nothing was written",
            hint=f"Run it again and answer y, or pass --yes: skillctl mcp trust {command.skill} --yes",
            code="mcp.trust_declined",
        )
    changed = mcp_trust.trust_write(command)
    if as_json:
        console.out_json({**command.to_dict(), "trusted": True, "changed": changed})
    elif changed:
        console.success(f"trusted: agents start {command.skill}'s MCP server when they load the skill")
    else:
        console.info(f"{command.skill}'s MCP command was trusted as it is already")
    return 0


@mcp.command("untrust")
@click.argument("name")
@json_option
@pass_app
def untrust(app: App, name: str, as_json: bool) -> int:
    """Stop agents from starting the MCP server of skill NAME (removes it from [runtime] trusted_mcp)."""
    from skillctl.runtime import mcp_trust

    removed = mcp_trust.untrust_write(name)
    if as_json:
        console.out_json({"name": name, "removed": removed})
    elif removed:
        console.success(f"{name}'s MCP server no longer starts")
    else:
        console.info(f"{name} was not trusted")
    return 0


@mcp.command("trusted")
@json_option
@pass_app
def trusted(app: App, as_json: bool) -> int:
    """List the skills whose MCP command you trusted, and whether each is still as trusted."""
    rows = [_trusted_row(entry, app.config) for entry in _entries(app.config)]
    if as_json:
        console.out_json({"trusted": rows})
        return 0
    if not rows:
        console.info("no skill's MCP command is trusted (skillctl mcp trust NAME)")
    for row in rows:
        status = {"changed": f"changed — re-run `skillctl mcp trust {row['name']}`"}.get(row["status"], row["status"])
        console.out(f"{row['name']}\t{status}\t{row['digest']}\t{row['command'] or ''}")
    return 0


def _entries(config):
    from skillctl.runtime.mcp_trust import trusted_entries

    return trusted_entries(config)


def _trusted_row(entry, config) -> dict:
    """One trusted entry and its status: trusted, changed (the block or its files), not_installed."""
    from skillctl.runtime import mcp_trust

    row = {"name": entry.name, "digest": entry.digest, "status": "not_installed", "command": None}
    try:
        command = mcp_trust.server_command(installed_skill(entry.name, config))
    except SkillctlError as err:
        if err.code != "mcp.unknown_skill":
            row["status"] = mcp_trust.Trust.CHANGED.value  # it no longer declares a command
        return row
    row["command"] = command.line
    row["status"] = "trusted" if command.digest == entry.digest else mcp_trust.Trust.CHANGED.value
    return row


def installed_skill(skill: str, config):
    """An installed skill by name (project, user, then config skill_dirs), or a skill folder's path."""
    from skillctl import discovery

    folder = Path(skill).expanduser()
    if "/" in skill or skill in (".", ".."):
        found = discovery.load_installed("dir", folder.resolve()) if (folder / "SKILL.md").is_file() else None
    else:
        found = discovery.discover(extra_dirs=config.skill_dirs).get(skill)
    if found is None:
        raise SkillctlError(
            f"no installed skill named {skill!r}",
            hint="Give an installed skill's name (skillctl list) or the path to its folder.",
            code="mcp.unknown_skill",
        )
    return found


def _show_command(command) -> None:
    """What trusting consents to, on stderr (stdout stays for --json)."""
    lines = [
        f"the MCP server of {command.skill} runs on this machine, outside the sandbox, with your rights:",
        f"  command  {command.line}",
        f"  folder   {command.cwd}",
        f"  env      {', '.join(command.env_names) or '(none)'}",
    ]
    if command.vars_used:
        lines.append(f"  vars     {', '.join(command.vars_used)} (the skill's declared vars fill ${{VAR}})")
    lines += [f"  runs     {path} (sha256 {digest[:16]}…)" for path, digest in command.files.items()]
    click.echo("\n".join(lines), err=True)


def confirmed(question: str) -> bool:
    try:
        return click.confirm(question, default=False, err=True)
    except click.Abort:  # no answer (end of input)
        return False
