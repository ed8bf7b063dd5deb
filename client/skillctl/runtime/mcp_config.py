"""``skillctl mcp install AGENT``: add the ``skillctl mcp`` server to an agent's MCP config file.

Each client keeps its servers in a JSON file of its own shape (documented by each client):

========  ========================  ================================  ==========  ====================
agent     project file              user file (-g)                    servers at  entry
========  ========================  ================================  ==========  ====================
claude    .mcp.json                 ~/.claude.json                    mcpServers  type stdio + command
cursor    .cursor/mcp.json          ~/.cursor/mcp.json                mcpServers  command + args
vscode    .vscode/mcp.json          (per VS Code profile: not here)   servers     type stdio + command
gemini    .gemini/settings.json     ~/.gemini/settings.json           mcpServers  command + args
opencode  opencode.json             ~/.config/opencode/opencode.json  mcp         type local, argv list
========  ========================  ================================  ==========  ====================

The entry runs ``skillctl mcp`` by name, not by absolute path, so a project file committed to
git works on every machine where skillctl is on the PATH. Everything else in the file is kept;
installing twice changes nothing; a file that is not a JSON object is refused, never rewritten.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skillctl import fileio
from skillctl.errors import SkillctlError, UsageError

SERVER_KEY = "skillyard"  # the name of our entry in every client's file
COMMAND = ["skillctl", "mcp"]


@dataclass(frozen=True)
class McpClient:
    name: str
    project_file: str  # relative to the project root
    user_file: str | None  # relative to the home folder; None when there is no plain user file
    servers_key: str
    entry: Callable[[list[str]], dict]


def _stdio_typed(argv: list[str]) -> dict:
    return {"type": "stdio", "command": argv[0], "args": argv[1:]}


def _plain(argv: list[str]) -> dict:
    return {"command": argv[0], "args": argv[1:]}


def _opencode(argv: list[str]) -> dict:
    return {"type": "local", "command": list(argv), "enabled": True}


CLIENTS: dict[str, McpClient] = {
    c.name: c
    for c in (
        McpClient("claude", ".mcp.json", ".claude.json", "mcpServers", _stdio_typed),
        McpClient("cursor", ".cursor/mcp.json", ".cursor/mcp.json", "mcpServers", _plain),
        McpClient("vscode", ".vscode/mcp.json", None, "servers", _stdio_typed),
        McpClient("gemini", ".gemini/settings.json", ".gemini/settings.json", "mcpServers", _plain),
        McpClient("opencode", "opencode.json", ".config/opencode/opencode.json", "mcp", _opencode),
    )
}


@dataclass(frozen=True)
class Installed:
    agent: str
    file: Path
    entry: dict
    changed: bool

    def to_dict(self) -> dict:
        return {
            "agent": self.agent,
            "file": str(self.file),
            "server": SERVER_KEY,
            "entry": self.entry,
            "changed": self.changed,
        }


def config_file(agent: str, *, user: bool, project: Path, home: Path | None = None) -> Path:
    client = CLIENTS[agent]
    if not user:
        return project / client.project_file
    if client.user_file is None:
        raise UsageError(
            f"{agent} keeps user-level MCP servers in its own profile, not in a file skillctl edits",
            hint=f"Install it for the project (drop -g): skillctl mcp install {agent}",
            code="mcp.no_user_config",
        )
    return (home or Path.home()) / client.user_file


def install(agent: str, *, user: bool = False, project: Path, home: Path | None = None) -> Installed:
    """Add (or update) our entry in ``agent``'s MCP config file; ``changed`` is False when it
    was already there exactly."""
    client = CLIENTS[agent]
    path = config_file(agent, user=user, project=project, home=home)
    data = _read_object(path)
    servers = data.setdefault(client.servers_key, {})
    if not isinstance(servers, dict):
        raise _invalid(path, f"`{client.servers_key}` is not an object")
    entry = client.entry(COMMAND)
    if servers.get(SERVER_KEY) == entry:
        return Installed(agent, path, entry, changed=False)
    servers[SERVER_KEY] = entry
    fileio.atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return Installed(agent, path, entry, changed=True)


def installed(agent: str, *, user: bool = False, project: Path, home: Path | None = None) -> bool:
    """Is our entry in that file? (False when the file is absent or unreadable.)"""
    try:
        path = config_file(agent, user=user, project=project, home=home)
        servers = _read_object(path).get(CLIENTS[agent].servers_key)
    except SkillctlError:
        return False
    return isinstance(servers, dict) and SERVER_KEY in servers


def _read_object(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise _invalid(path, f"not readable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise _invalid(path, "not a JSON object")
    return data


def _invalid(path: Path, why: str) -> SkillctlError:
    return SkillctlError(
        f"{path}: {why}",
        hint="Fix the file by hand (comments and trailing commas are not JSON), then install again.",
        code="mcp.config_invalid",
    )
