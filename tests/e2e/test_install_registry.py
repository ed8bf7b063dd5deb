"""Issue 4 acceptance 1 (and 2, 5) against a live registry with the real `skillctl` binary."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SKILLCTL = Path(sys.executable).with_name("skillctl")
SKILL_MD = """---
name: {name}
description: {name} greets people politely when they ask for a greeting.
version: {version}
---

# {name}

Greeting instructions, version {version}.
"""


def make(root: Path, name: str, version: str, extra: dict[str, str] | None = None) -> Path:
    folder = root / f"{name}-{version}"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD.format(name=name, version=version))
    for rel, text in (extra or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


class Cli:
    def __init__(self, tmp: Path, registry_url: str, config: str = "") -> None:
        self.project = tmp / "project"
        self.project.mkdir()
        self.env = {
            **os.environ,
            "SKILLYARD_HOME": str(tmp / "home"),
            "SKILLYARD_USER_SKILLS": str(tmp / "user-skills"),
            "NO_COLOR": "1",
        }
        self.env.pop("SKILLYARD_TOKEN", None)
        if registry_url:
            self.env["SKILLYARD_REGISTRY"] = registry_url
        else:
            self.env.pop("SKILLYARD_REGISTRY", None)
        if config:
            (tmp / "home/config").mkdir(parents=True)
            (tmp / "home/config/config.toml").write_text(config)

    def __call__(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(SKILLCTL), *args], cwd=self.project, env=self.env, capture_output=True, text=True, timeout=120
        )

    def lock(self) -> dict:
        return tomllib.loads((self.project / "skills.lock").read_text())["skills"]


def test_acceptance_1_install_verify_frozen_update_list_uninstall(live_registry, tmp_path):
    src = tmp_path / "src"
    for version in ("1.0.0", "1.1.0", "2.0.0"):
        live_registry.publish(make(src, "hello", version, {"scripts/hi.py": f"print('{version}')\n"}))
    cli = Cli(tmp_path, live_registry.url)
    skill = cli.project / ".agents/skills/hello"

    r = cli("install", "hello@^1.0")
    assert r.returncode == 0, r.stderr
    assert "version 1.1.0" in (skill / "SKILL.md").read_text()
    listed = httpx.get(f"{live_registry.url}/api/v1/skills/hello").json()["versions"]
    sha_110 = next(v["sha256"] for v in listed if v["version"] == "1.1.0")
    assert cli.lock()["hello"]["version"] == "1.1.0" and cli.lock()["hello"]["sha256"] == sha_110

    assert cli("verify").returncode == 0
    (skill / "scripts/hi.py").write_text("print('tampered')\n")
    r = cli("verify")
    assert r.returncode == 1 and "scripts/hi.py" in r.stdout

    shutil.rmtree(cli.project / ".agents")
    r = cli("install", "--frozen")
    assert r.returncode == 0, r.stderr
    assert "version 1.1.0" in (skill / "SKILL.md").read_text()
    assert cli("verify").returncode == 0

    live_registry.publish(make(src, "hello", "1.2.0"))
    r = cli("update", "hello")
    assert r.returncode == 0, r.stderr
    assert "hello 1.1.0 → 1.2.0" in r.stderr
    assert cli.lock()["hello"]["version"] == "1.2.0"
    assert "local changes" not in r.stderr
    assert cli("update", "hello").returncode == 0 and cli.lock()["hello"]["version"] == "1.2.0"

    r = cli("list", "--json")
    assert r.returncode == 0
    [row] = json.loads(r.stdout)["skills"]
    assert (row["name"], row["version"], row["scope"]) == ("hello", "1.2.0", "project")

    r = cli("uninstall", "hello")
    assert r.returncode == 0, r.stderr
    assert not skill.exists()
    assert "hello" not in tomllib.loads((cli.project / "skills.lock").read_text()).get("skills", {})


def test_acceptance_2_yanked_version_is_reported_by_verify(live_registry, tmp_path):
    live_registry.publish(make(tmp_path / "src", "hello", "1.0.0"))
    cli = Cli(tmp_path, live_registry.url)
    assert cli("install", "hello").returncode == 0
    response = httpx.post(
        f"{live_registry.url}/api/v1/skills/hello/versions/1.0.0/yank",
        headers={"Authorization": f"Bearer {live_registry.token}"},
        json={"reason": "leaks tokens"},
    )
    assert response.status_code == 200, response.text
    r = cli("verify", "--json")
    assert r.returncode == 1
    problems = json.loads(r.stdout)["skills"][0]["problems"]
    assert [p["code"] for p in problems] == ["yanked"] and "leaks tokens" in problems[0]["message"]


def test_acceptance_2_lock_sha_mismatch_is_exit_4_and_installs_nothing(live_registry, tmp_path):
    live_registry.publish(make(tmp_path / "src", "hello", "1.0.0"))
    cli = Cli(tmp_path, live_registry.url)
    assert cli("install", "hello").returncode == 0
    lock_path = cli.project / "skills.lock"
    lock_path.write_text(lock_path.read_text().replace(cli.lock()["hello"]["sha256"], "ab" * 32))
    shutil.rmtree(cli.project / ".agents")
    r = cli("install", "--frozen")
    assert r.returncode == 4, r.stderr
    assert "sha256" in r.stderr and "hint:" in r.stderr
    assert not (cli.project / ".agents/skills/hello").exists()


def test_acceptance_5_same_name_on_two_registries(registry_factory, tmp_path):
    corp, public = registry_factory("corp"), registry_factory("public")
    corp.publish(make(tmp_path / "corp", "hello", "1.0.0", {"origin.txt": "corp\n"}))
    public.publish(make(tmp_path / "public", "hello", "9.0.0", {"origin.txt": "public\n"}))
    config = (
        f'default_registry = "corp"\n[registries.corp]\nurl = "{corp.url}"\n[registries.public]\nurl = "{public.url}"\n'
    )
    cli = Cli(tmp_path, "", config)
    assert cli("install", "hello").returncode == 0
    origin = cli.project / ".agents/skills/hello/origin.txt"
    assert origin.read_text() == "corp\n" and cli.lock()["hello"]["registry_url"] == corp.url
    # The default registry becomes the public one: nothing switches.
    config_path = tmp_path / "home/config/config.toml"
    config_path.write_text(config.replace('default_registry = "corp"', 'default_registry = "public"'))
    for args in (("install", "hello"), ("update",), ("install",)):
        assert cli(*args).returncode == 0
        assert origin.read_text() == "corp\n"
    r = cli("install", "public:hello")
    assert r.returncode == 1 and "never switched silently" in r.stderr
    assert origin.read_text() == "corp\n"


def test_cold_install_is_one_request_when_no_routing_manifest_is_listed(tmp_path):
    from tests.e2e.conftest import start_registry

    # Checks off: the manifest check would otherwise list a routing manifest within a second.
    live_registry = start_registry(tmp_path / "reg", env_extra={"SKILLYARD_CHECKS_ENABLED": "0"})
    try:
        _cold_install(live_registry, tmp_path)
    finally:
        live_registry.stop()


def _cold_install(live_registry, tmp_path) -> None:
    live_registry.publish(make(tmp_path / "src", "terse", "1.0.0"))
    [listed] = httpx.get(f"{live_registry.url}/api/v1/skills/terse").json()["versions"]
    assert listed["has_routing_manifest"] is False
    cli = Cli(tmp_path, live_registry.url)
    r = cli("install", "terse")
    assert r.returncode == 0, r.stderr
    requests = [line for line in live_registry.log.read_text().splitlines() if '"GET /api/v1/skills/terse' in line]
    # One request: the registry resolves the spec in the download and says in its headers that
    # there is no manifest to fetch (the listing below is this test's own, above).
    assert sum('"GET /api/v1/skills/terse/download' in line for line in requests) == 1
    assert sum('"GET /api/v1/skills/terse HTTP' in line for line in requests) == 1
    assert not any("/versions/1.0.0" in line for line in requests)
