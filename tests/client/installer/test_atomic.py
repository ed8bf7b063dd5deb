"""Acceptance 3: SIGKILL `install`/`update` at every step; old or new stays whole, never a mix.

The real `skillctl` runs as a subprocess; ``SKILLYARD_TEST_CRASH_AT`` (a test-only hook in
skillctl.installer) makes it SIGKILL itself at a named point. Afterwards the skill folder must
be exactly the old or the new version, and the next command must leave folder and lock in
agreement.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import tests.client.installer.fakes as F  # noqa: E402
from skillctl.installer.project import read_lock

UPDATE_POINTS = ["after_extract", "after_journal", "after_swap", "after_delete_old", "after_lock"]
FALLBACK_POINTS = ["after_rename_old", "after_swap", "after_delete_old"]


@pytest.fixture
def registry(tmp_path):
    reg = F.FakeRegistry(tmp_path / "reg")
    reg.publish("hello", "1.0.0", files={"old.txt": "old\n", "scripts/run.py": "print('old')\n"})
    yield reg
    reg.close()


def run(proj: Path, registry, *args: str, **extra_env: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "SKILLYARD_HOME": str(proj.parent / "home"),
        "SKILLYARD_USER_SKILLS": str(proj.parent / "user"),
        "SKILLYARD_REGISTRY": registry.url,
        "NO_COLOR": "1",
        **extra_env,
    }
    env.pop("SKILLYARD_TOKEN", None)
    return subprocess.run(
        [sys.executable, "-m", "skillctl", *args], cwd=proj, env=env, capture_output=True, text=True, timeout=60
    )


def folder_state(folder: Path) -> dict[str, str]:
    from skillctl.format import folder_files

    return {f.path: f.sha256 for f in folder_files(folder)} if folder.is_dir() else {}


@pytest.fixture
def proj(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    return root


def _versions(proj, registry):
    assert run(proj, registry, "install", "hello@^1.0").returncode == 0
    old = folder_state(proj / ".agents/skills/hello")
    registry.publish("hello", "1.1.0", files={"new.txt": "new\n", "scripts/run.py": "print('new')\n"})
    return old


def _new_state(tmp_path, registry) -> dict[str, str]:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    assert run(scratch, registry, "install", "hello@1.1.0").returncode == 0
    return folder_state(scratch / ".agents/skills/hello")


def _check_recovers(proj, registry, old, new, *, allow_absent=False):
    skill = proj / ".agents/skills/hello"
    state = folder_state(skill)
    assert state in ((old, new, {}) if allow_absent else (old, new)), "a mix of two versions"
    follow = run(proj, registry, "install")
    assert follow.returncode == 0, follow.stderr
    state = folder_state(skill)
    assert state in (old, new)
    lock = read_lock(proj / "skills.lock")["hello"]
    assert lock.files == state, "skills.lock disagrees with the folder"
    assert run(proj, registry, "verify").returncode == 0
    assert not [p for p in (proj / ".agents/.skillyard-tmp").iterdir() if p.name != "lock"]


@pytest.mark.parametrize("point", UPDATE_POINTS)
def test_update_killed_leaves_old_or_new_whole(proj, registry, tmp_path, point):
    old = _versions(proj, registry)
    new = _new_state(tmp_path, registry)
    proc = run(proj, registry, "update", "hello", SKILLYARD_TEST_CRASH_AT=point)
    assert proc.returncode == -signal.SIGKILL
    _check_recovers(proj, registry, old, new)


@pytest.mark.parametrize("point", FALLBACK_POINTS)
def test_update_killed_without_exchange_recovers(proj, registry, tmp_path, point):
    old = _versions(proj, registry)
    new = _new_state(tmp_path, registry)
    proc = run(proj, registry, "update", "hello", SKILLYARD_TEST_CRASH_AT=point, SKILLYARD_TEST_NO_EXCHANGE="1")
    assert proc.returncode == -signal.SIGKILL
    # Between the two renames the folder is briefly absent (the old one waits aside whole).
    _check_recovers(proj, registry, old, new, allow_absent=True)


@pytest.mark.parametrize("point", ["after_extract", "after_journal", "after_swap", "after_lock"])
def test_first_install_killed_leaves_nothing_or_the_whole_skill(proj, registry, point):
    proc = run(proj, registry, "install", "hello@^1.0", SKILLYARD_TEST_CRASH_AT=point)
    assert proc.returncode == -signal.SIGKILL
    skill = proj / ".agents/skills/hello"
    assert not skill.exists() or folder_state(skill) == read_lock_or_fresh(proj, registry)
    follow = run(proj, registry, "install", "hello@^1.0")
    assert follow.returncode == 0, follow.stderr
    assert run(proj, registry, "verify").returncode == 0


def read_lock_or_fresh(proj, registry) -> dict[str, str]:
    lock = read_lock(proj / "skills.lock").get("hello")
    if lock:
        return lock.files
    journal = proj / ".agents/.skillyard-tmp/journal-hello.json"
    import json

    return json.loads(journal.read_text())["lock"]["files"]


def test_uninstall_killed_is_finished_by_the_next_run(proj, registry):
    assert run(proj, registry, "install", "hello").returncode == 0
    proc = run(proj, registry, "uninstall", "hello", SKILLYARD_TEST_CRASH_AT="uninstall_after_rename")
    assert proc.returncode == -signal.SIGKILL
    assert not (proj / ".agents/skills/hello").exists()
    assert run(proj, registry, "verify").returncode == 0  # any locked run finishes the removal
    assert "hello" not in read_lock(proj / "skills.lock")


def test_concurrent_installs_serialise_through_the_file_lock(proj, registry):
    registry.publish("other", "1.0.0")
    env = {
        **os.environ,
        "SKILLYARD_HOME": str(proj.parent / "home"),
        "SKILLYARD_USER_SKILLS": str(proj.parent / "user"),
        "SKILLYARD_REGISTRY": registry.url,
    }
    cmd = [sys.executable, "-m", "skillctl", "install"]
    first = subprocess.Popen(
        [*cmd, "hello"],
        cwd=proj,
        stderr=subprocess.PIPE,
        text=True,
        env={**env, "SKILLYARD_TEST_PAUSE_AT": "after_extract"},
    )
    # The first holds the lock for a second after extracting; the second must wait for it.
    import time

    deadline = time.monotonic() + 10
    while not list((proj / ".agents/.skillyard-tmp").glob("new-*")) and time.monotonic() < deadline:
        time.sleep(0.02)
    second = subprocess.run([*cmd, "other"], cwd=proj, capture_output=True, text=True, env=env)
    assert first.wait(timeout=30) == 0 and second.returncode == 0, second.stderr
    assert "waiting for another skillctl" in second.stderr
    assert set(read_lock(proj / "skills.lock")) == {"hello", "other"}


def test_downloads_are_cached_by_sha256(proj, registry):
    assert run(proj, registry, "install", "hello").returncode == 0
    sha = read_lock(proj / "skills.lock")["hello"].sha256
    cached = list((proj.parent / "home/cache/archives").rglob(f"{sha}.*"))
    assert len(cached) == 1
    registry.requests.clear()
    import shutil

    shutil.rmtree(proj / ".agents")
    assert run(proj, registry, "install", "--frozen").returncode == 0
    assert not [r for r in registry.requests if r.endswith("/download")]
