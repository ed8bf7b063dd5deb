"""``skillctl mcp install AGENT``: each client's MCP config file, merged, idempotent."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from skillctl.errors import SkillctlError
from skillctl.runtime import mcp_config
from tests.client.runtime.conftest import skillctl_argv

EXPECTED = {
    "claude": (".mcp.json", "mcpServers", {"type": "stdio", "command": "skillctl", "args": ["mcp"]}),
    "cursor": (".cursor/mcp.json", "mcpServers", {"command": "skillctl", "args": ["mcp"]}),
    "vscode": (".vscode/mcp.json", "servers", {"type": "stdio", "command": "skillctl", "args": ["mcp"]}),
    "gemini": (".gemini/settings.json", "mcpServers", {"command": "skillctl", "args": ["mcp"]}),
    "opencode": ("opencode.json", "mcp", {"type": "local", "command": ["skillctl", "mcp"], "enabled": True}),
}


@pytest.mark.parametrize("agent", sorted(EXPECTED))
def test_install_writes_the_clients_file_with_a_portable_command(agent, tmp_path):
    relative, key, entry = EXPECTED[agent]
    done = mcp_config.install(agent, project=tmp_path)
    assert done.changed and done.file == tmp_path / relative
    assert json.loads(done.file.read_text()) == {key: {"skillyard": entry}}
    assert mcp_config.installed(agent, project=tmp_path)


def test_install_keeps_other_servers_and_settings_and_is_idempotent(tmp_path):
    path = tmp_path / ".cursor" / "mcp.json"
    path.parent.mkdir()
    theirs = {"mcpServers": {"github": {"command": "gh-mcp"}}, "other": [1, 2]}
    path.write_text(json.dumps(theirs))
    assert mcp_config.install("cursor", project=tmp_path).changed
    data = json.loads(path.read_text())
    assert data["mcpServers"]["github"] == {"command": "gh-mcp"} and data["other"] == [1, 2]
    before = path.read_bytes()
    assert not mcp_config.install("cursor", project=tmp_path).changed
    assert path.read_bytes() == before


def test_a_stale_entry_of_ours_is_updated(tmp_path):
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"skillyard": {"command": "/old/venv/bin/skillctl"}}})
    )
    assert mcp_config.install("claude", project=tmp_path).changed
    assert json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["skillyard"]["command"] == "skillctl"


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"mcpServers": []}', '{"a": 1, // comment\n}'])
def test_a_file_that_is_not_a_json_object_is_refused_untouched(tmp_path, text):
    (tmp_path / ".mcp.json").write_text(text)
    with pytest.raises(SkillctlError) as err:
        mcp_config.install("claude", project=tmp_path)
    assert err.value.code == "mcp.config_invalid"
    assert (tmp_path / ".mcp.json").read_text() == text
    assert not mcp_config.installed("claude", project=tmp_path)


def test_user_scope_goes_to_the_home_folder(tmp_path):
    done = mcp_config.install("claude", user=True, project=tmp_path / "p", home=tmp_path / "h")
    assert done.file == tmp_path / "h" / ".claude.json"
    with pytest.raises(SkillctlError) as err:
        mcp_config.install("vscode", user=True, project=tmp_path, home=tmp_path / "h")
    assert err.value.code == "mcp.no_user_config"


def test_cli_install_json_and_again(project, tmp_path):
    env_home = {"HOME": str(tmp_path / "userhome")}
    first = subprocess.run(
        skillctl_argv("mcp", "install", "claude", "--json"), cwd=project, capture_output=True, text=True, timeout=30
    )
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    assert out["changed"] and out["file"] == str(project / ".mcp.json") and out["entry"]["command"] == "skillctl"
    again = subprocess.run(
        skillctl_argv("mcp", "install", "claude"), cwd=project, capture_output=True, text=True, timeout=30
    )
    assert again.returncode == 0 and "already installed" in again.stderr
    bad = subprocess.run(
        skillctl_argv("mcp", "install", "vscode", "-g", "--json"),
        cwd=project,
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **env_home},
    )
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"] == "mcp.no_user_config"
