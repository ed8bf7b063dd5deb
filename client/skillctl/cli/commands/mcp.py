"""``skillctl mcp``: serve the installed skills over MCP, and add that server to agents' configs."""

from __future__ import annotations

import sys

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app

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
    Tools: find_skills, load_skill, read_skill_file, run_skill (those the tool policy of
    the config allows); resources: skill://NAME/SKILL.md. Needs the `agent` extra:
    pip install 'skillyard[agent]'.
    """
    if ctx.invoked_subcommand is not None:
        return 0
    from skillctl.runtime import mcp_server
    from skillctl.runtime.policy import ToolPolicy
    from skillctl.runtime.sdk import require_mcp
    from skillctl.skillset import SkillSet

    require_mcp()  # before the (slower) discovery, so a missing extra is said at once
    app: App = ctx.ensure_object(App)
    policy = ToolPolicy.from_config(app.config, agent=agent)
    skills = SkillSet.discover(config=app.config, semantic=semantic, agent=agent)
    _watch(skills)
    server = mcp_server.build_server(
        mcp_server.SkillTools(skills, config=app.config, backend=backend),
        allows=policy.allows,
        log_level="DEBUG" if app.debug else "WARNING",
    )
    _announce(len(skills.names), port, host)
    mcp_server.serve(server, port=port, host=host)
    return 0


def _watch(skills) -> None:
    """Re-index when skills are installed, edited or removed while the agent keeps the server
    running (the agent extra brings watchfiles; without it, what was installed at start)."""
    from skillctl.errors import SkillctlError

    try:
        skills.watch()
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
