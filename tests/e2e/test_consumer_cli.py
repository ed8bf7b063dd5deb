"""The commands a team member runs, against a live registry (issue 18, items 8, 9, 14, 15, 17):
outdated and update's note, list with file state and agent links, yanked versions moved off
with update (never restored by install --force), show --files --readme, and network errors."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SKILLCTL = Path(sys.executable).with_name("skillctl")


@pytest.fixture
def team(live_registry, tmp_path):
    """hello 1.0.0, 1.1.0 and 2.0.0 published; a runner in a fresh project."""
    env = {
        **os.environ,
        "SKILLYARD_HOME": str(tmp_path / "home"),
        "SKILLYARD_USER_SKILLS": str(tmp_path / "user-skills"),
        "SKILLYARD_REGISTRY": live_registry.url,
        "SKILLYARD_TOKEN": live_registry.token,
        "SKILLYARD_SEMANTIC": "0",
        "NO_COLOR": "1",
    }
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)

    def run(*args: str, ok: bool = True, **extra: str) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [str(SKILLCTL), *args], cwd=project, env={**env, **extra}, capture_output=True, text=True, timeout=120
        )
        if ok:
            assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
        return done

    folder = tmp_path / "src" / "hello"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "hi.py").write_text("print('hi')\n")
    for version in ("1.0.0", "1.1.0", "2.0.0"):
        (folder / "SKILL.md").write_text(
            f"---\nname: hello\ndescription: Greets people by name when asked to say hello.\n"
            f'license: MIT\nmetadata:\n  version: "{version}"\n---\n# Hello\nRun scripts/hi.py.\n'
        )
        run("publish", str(folder))
    run.project = project
    return run


def test_outdated_list_and_update_of_a_team_project(team):
    team("install", "hello@^1.0", "--agent", "claude")
    [row] = json.loads(team("outdated", "--json").stdout)["skills"]
    assert (row["current"], row["wanted"], row["latest"]) == ("1.1.0", "1.1.0", "2.0.0")
    update = team("update")
    assert "newer outside your ranges: hello 2.0.0" in update.stdout + update.stderr

    [listed] = json.loads(team("list", "--json").stdout)["skills"]
    assert (listed["name"], listed["version"], listed["state"], listed["agents"]) == (
        "hello",
        "1.1.0",
        "ok",
        ["claude"],
    )
    (team.project / ".agents/skills/hello/SKILL.md").write_text("edited\n")
    [listed] = json.loads(team("list", "--json").stdout)["skills"]
    assert listed["state"] == "changed"


def test_a_yanked_version_is_left_by_update_and_never_restored(team):
    team("install", "hello@^1.0")
    team("yank", "hello@1.1.0", "--reason", "leaks tokens")
    verify = team("verify", ok=False)
    assert verify.returncode == 1
    assert "skillctl update hello" in verify.stdout + verify.stderr
    assert "--force" not in verify.stdout + verify.stderr
    [dry] = json.loads(team("update", "--dry-run", "--json").stdout)["changes"]
    assert (dry["action"], dry["from"], dry["to"]) == ("would-replace-yanked", "1.1.0", "1.0.0")
    [done] = json.loads(team("update", "--json").stdout)["changes"]
    assert (done["action"], done["to"]) == ("replaced-yanked", "1.0.0")
    assert json.loads(team("verify", "--json").stdout)["ok"] is True


def test_show_files_and_readme_and_a_refused_connection_in_words(team):
    shown = team("show", "hello", "--files", "--readme")
    assert "scripts/hi.py" in shown.stdout and "Run scripts/hi.py." in shown.stdout
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    refused = team("show", "hello", ok=False, SKILLYARD_REGISTRY=closed)
    assert refused.returncode == 3
    assert closed in refused.stderr and "connection refused" in refused.stderr


def test_a_skill_installed_in_a_second_project_comes_from_the_cache(team, live_registry, tmp_path):
    import httpx

    def downloads() -> int:
        # Asked with the token: an anonymous answer may come from the answer cache, whose download
        # counts may be up to SKILLYARD_API_CACHE_SECONDS old (docs/operations.md).
        auth = {"Authorization": f"Bearer {live_registry.token}"}
        return httpx.get(f"{live_registry.url}/api/v1/skills/hello", headers=auth, timeout=10).json()["downloads"]

    before = downloads()
    team("install", "hello@^1")
    assert downloads() == before + 1
    second = tmp_path / "second"
    second.mkdir()
    env = {**os.environ, "SKILLYARD_HOME": str(tmp_path / "home"), "SKILLYARD_REGISTRY": live_registry.url}
    env.update(SKILLYARD_USER_SKILLS=str(tmp_path / "user-skills"), SKILLYARD_SEMANTIC="0", NO_COLOR="1")
    done = subprocess.run(
        [str(SKILLCTL), "install", "hello@^1"], cwd=second, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert (second / ".agents/skills/hello/SKILL.md").read_text() == (
        team.project / ".agents/skills/hello/SKILL.md"
    ).read_text()
    assert downloads() == before + 1
    # The registry answered the second project's download with 304 (the cached digest offered):
    # no archive bytes crossed the network.
    served = [line for line in live_registry.log.read_text().splitlines() if "/api/v1/skills/hello/download" in line]
    assert [" 200 " in line for line in served][-2:] == [True, False] and " 304 " in served[-1], served[-2:]


def test_outdated_and_update_dry_run_print_the_registrys_diff(team, tmp_path):
    team("install", "hello@^1.0")
    outdated = team("outdated", "--diff")
    assert "diff hello 1.1.0 → 2.0.0" in outdated.stdout
    assert '-  version: "1.1.0"\n+  version: "2.0.0"' in outdated.stdout
    folder = tmp_path / "next" / "hello"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "hi.py").write_text("print('hello there')\n")
    (folder / "SKILL.md").write_text(
        "---\nname: hello\ndescription: Greets people by name when asked to say hello.\nlicense: MIT\n"
        'requires:\n  bins: [curl]\nmetadata:\n  version: "1.2.0"\n---\n# Hello\nRun scripts/hi.py.\n'
    )
    team("publish", str(folder))
    dry = team("update", "--dry-run", "--diff")
    assert "diff hello 1.1.0 → 1.2.0" in dry.stdout
    assert "-print('hi')\n+print('hello there')" in dry.stdout
    assert "! requires.bins: (none) → curl  (requirements)" in dry.stdout
    document = json.loads(team("update", "--dry-run", "--diff", "--json").stdout)
    assert document["changes"][0]["to"] == "1.2.0"
    [diff] = document["diffs"]
    assert {f["path"]: f["status"] for f in diff["files"]} == {"SKILL.md": "changed", "scripts/hi.py": "changed"}
    assert json.loads(team("list", "--json").stdout)["skills"][0]["version"] == "1.1.0"  # a dry run
