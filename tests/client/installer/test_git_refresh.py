"""Seed 002's git sources that refresh on a schedule: `refresh = "24h"` in skills.toml and
`skillctl update --due`, which a cron entry runs."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from skillctl.errors import UsageError
from skillctl.installer import refresh
from tests.client.installer.test_local_sources import _bump, git_repo, installed_version, ops, proj  # noqa: F401


def skillctl(project, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "skillctl", *args], capture_output=True, text=True, timeout=120, cwd=project
    )


def with_refresh(project, interval: str) -> None:
    manifest = project / "skills.toml"
    manifest.write_text(
        manifest.read_text().replace('subdir = "skills/review"', f'subdir = "skills/review"\nrefresh = "{interval}"')
    )
    assert f'refresh = "{interval}"' in manifest.read_text()


def test_update_due_refreshes_a_git_source_once_its_interval_passed(proj, git_repo):  # noqa: F811
    ops(proj).install([f"git+file://{git_repo}#main:skills/review"])
    with_refresh(proj, "1h")
    _bump(git_repo, "1.1.0")
    first = skillctl(proj, "update", "--due", "--json")
    assert [c["to"] for c in json.loads(first.stdout)["changes"]] == ["1.1.0"], first.stderr
    _bump(git_repo, "1.2.0")
    second = skillctl(proj, "update", "--due", "--json")
    assert json.loads(second.stdout)["changes"] == [] and installed_version(proj, "review") == "1.1.0"
    wanted = {"review": {"git": "x", "refresh": "1h"}}
    assert refresh.due(wanted, proj / "skills.lock", now=time.time() + 3601) == ["review"]


def test_sources_without_refresh_are_never_due_and_a_bad_interval_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    lock = tmp_path / "skills.lock"
    assert refresh.due({"a": {"git": "x"}, "b": {"path": "p", "refresh": "1h"}}, lock) == []
    with pytest.raises(UsageError) as err:
        refresh.due({"a": {"git": "x", "refresh": "soon"}}, lock)
    assert err.value.code == "update.bad_refresh"
    assert refresh.interval_seconds("90s") == 90 and refresh.interval_seconds("2d") == 172800
