"""Publisher and team commands against a live registry: publish --all, dry runs, tags, yank and
deprecate round trips, tokens and organisations (issue 18, items 2 and 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import _manage

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SKILLCTL = Path(sys.executable).with_name("skillctl")


def skill(root: Path, name: str, version: str = "1.0.0", body: str = "Say hi.") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {name} helps with {name} tasks when asked.\nversion: {version}\n---\n# {name}\n{body}\n"
    )
    return folder


@pytest.fixture
def cli(live_registry, tmp_path):
    env = {
        **os.environ,
        "SKILLYARD_HOME": str(tmp_path / "home"),
        "SKILLYARD_REGISTRY": live_registry.url,
        "SKILLYARD_TOKEN": live_registry.token,
        "NO_COLOR": "1",
    }

    def run(*args: str, token: str | None = None, ok: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [str(SKILLCTL), *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env={**env, "SKILLYARD_TOKEN": token or env["SKILLYARD_TOKEN"]},
        )
        if ok:
            assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
        return done

    return run


def manage_env(live_registry) -> dict[str, str]:
    env = {
        **os.environ,
        "SKILLYARD_DATA_DIR": str(live_registry.data_dir),
        "DJANGO_SETTINGS_MODULE": "skillyard.settings",
    }
    env.pop("DATABASE_URL", None)
    return env


def test_publish_all_publishes_what_changed_and_reports_what_cannot_be(cli, live_registry, tmp_path):
    skills = tmp_path / "skills"
    skill(skills, "alpha"), skill(skills / "nested", "beta")
    first = json.loads(cli("publish", "--all", str(skills), "--json").stdout)
    assert sorted((s["name"], s["action"]) for s in first["skills"]) == [("alpha", "published"), ("beta", "published")]

    skill(skills, "alpha", body="Say hello, now politely.")  # changed, same version
    again = cli("publish", "--all", str(skills), "--json", ok=False)
    result = {s["name"]: s for s in json.loads(again.stdout)["skills"]}
    assert again.returncode == 1
    assert result["beta"]["action"] == "unchanged" and result["alpha"]["action"] == "failed"
    assert "--bump" in result["alpha"]["reason"]

    dry = json.loads(cli("publish", "--all", str(skills), "--bump", "patch", "--dry-run", "--json").stdout)
    assert {s["name"]: s["action"] for s in dry["skills"]} == {"alpha": "would-publish", "beta": "unchanged"}
    assert "version: 1.0.0" in (skills / "alpha" / "SKILL.md").read_text()  # a dry run writes nothing

    bumped = json.loads(cli("publish", "--all", str(skills), "--bump", "patch", "--json").stdout)
    alpha = next(s for s in bumped["skills"] if s["name"] == "alpha")
    assert (alpha["action"], alpha["version"], alpha["bumped_from"]) == ("published", "1.0.1", "1.0.0")
    listed = [v["version"] for v in httpx.get(f"{live_registry.url}/api/v1/skills/alpha").json()["versions"]]
    assert sorted(listed) == ["1.0.0", "1.0.1"]


def test_dry_run_needs_no_token_and_sends_nothing(cli, live_registry, tmp_path):
    folder = skill(tmp_path, "gamma")
    done = cli("publish", str(folder), "--dry-run", "--json", token="")
    plan = json.loads(done.stdout)
    assert plan["dry_run"] and plan["skills"][0]["name"] == "gamma" and len(plan["skills"][0]["sha256"]) == 64
    assert httpx.get(f"{live_registry.url}/api/v1/skills/gamma").status_code == 404


def test_yank_deprecate_and_dist_tags_round_trip(cli, live_registry, tmp_path):
    folder = skill(tmp_path, "delta")
    cli("publish", str(folder))
    cli("publish", str(folder), "--bump", "major", "--tag", "next")
    api = f"{live_registry.url}/api/v1/skills/delta"
    assert httpx.get(f"{api}/dist-tags").json()["next"] == "2.0.0"

    cli("yank", "delta@2.0.0", "--reason", "broken")
    assert next(v for v in httpx.get(api).json()["versions"] if v["version"] == "2.0.0")["yanked"]
    cli("unyank", "delta@2.0.0")
    cli("deprecate", "delta@1.0.0", "-m", "use 2.x")
    cli("deprecate", "delta@1.0.0", "--undo")
    versions = {v["version"]: v for v in httpx.get(api).json()["versions"]}
    assert not versions["2.0.0"]["yanked"] and versions["1.0.0"]["deprecated"] == ""

    cli("dist-tag", "add", "delta@1.0.0", "stable")
    assert json.loads(cli("dist-tag", "ls", "delta", "--json").stdout)["stable"] == "1.0.0"
    cli("dist-tag", "rm", "delta", "stable")
    assert "stable" not in httpx.get(f"{api}/dist-tags").json()

    bad = cli("yank", "delta", "--json", ok=False)
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"] == "cli.name_version"
    missing = cli("yank", "delta@9.9.9", "--json", ok=False)
    assert missing.returncode == 1 and json.loads(missing.stdout)["error"] == "registry.not_found"


def test_tokens_and_organisations(cli, live_registry):
    env = manage_env(live_registry)
    admin = _manage(["issue_token", "alice", "--scope", "admin", "--name", "admin"], env).strip().splitlines()[-1]
    _manage(["issue_token", "bob", "--scope", "read", "--create-user"], env)

    created = json.loads(cli("token", "create", "--scope", "read", "--name", "ci", "--json", token=admin).stdout)
    assert created["token"].startswith("sky_") and created["scope"] == "read"
    listed = json.loads(cli("token", "list", "--json", token=admin).stdout)
    assert any(t["id"] == created["id"] and "token" not in t for t in listed)
    cli("token", "revoke", str(created["id"]), token=admin)
    assert (
        httpx.get(f"{live_registry.url}/api/v1/me", headers={"Authorization": f"Bearer {created['token']}"}).status_code
        == 401
    )

    cli("org", "create", "acme", token=admin)
    cli("org", "add", "acme", "bob", "--role", "publisher", token=admin)
    members = json.loads(cli("org", "members", "acme", "--json", token=admin).stdout)
    assert {m["username"]: m["role"] for m in members} == {"alice": "owner", "bob": "publisher"}
    cli("org", "remove", "acme", "bob", token=admin)
    members = json.loads(cli("org", "members", "acme", "--json", token=admin).stdout)
    assert [m["username"] for m in members] == ["alice"]

    refused = cli("org", "create", "other", "--json", ok=False)  # the publish token may not
    assert refused.returncode == 1 and json.loads(refused.stdout)["error"] == "registry.forbidden"


def test_use_prints_instructions_with_readable_files_and_installs_nothing(cli, live_registry, tmp_path):
    folder = skill(tmp_path / "src", "epsilon", body="Run `{baseDir}/scripts/go.py` to start.")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "go.py").write_text("print('go')\n")
    live_registry.publish(folder)

    data = json.loads(cli("use", "epsilon", "--json").stdout)
    unpacked = Path(data["path"])
    assert data["version"] == "1.0.0" and (unpacked / "scripts" / "go.py").read_text() == "print('go')\n"
    assert f"{unpacked}/scripts/go.py" in data["instructions"] and "scripts/go.py" in data["resources"]
    text = cli("use", "epsilon@1.0.0").stdout
    assert "epsilon" in text and "to start" in text
    assert not (tmp_path / "skills.toml").exists() and not (tmp_path / ".agents").exists()
    missing = cli("use", "nope", "--json", ok=False)
    assert missing.returncode == 1 and json.loads(missing.stdout)["error"] == "registry.not_found"
