"""The work folder and its lock: a run that installs nothing leaves nothing behind, and a run
that waited on a lock whose folder was removed under it takes a fresh one."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from skillctl.installer import worklock
from skillctl.installer.project import Scope
from skillctl.reporting import Reporter


def test_a_failed_first_install_leaves_nothing_behind(tmp_path):
    project = tmp_path / "proj"
    (project / "bad").mkdir(parents=True)
    (project / "bad" / "SKILL.md").write_text("---\nname: bad\n---\nno description\n")
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "skillctl", "install", "./bad"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "description.missing" in done.stderr
    assert sorted(p.name for p in project.iterdir()) == ["bad"]


def test_the_work_folder_stays_when_a_skill_is_installed(tmp_path):
    scope = Scope.project(tmp_path)
    with worklock.held(scope, Reporter()):
        scope.skills_dir.mkdir()
    assert (scope.work_dir / "lock").exists() and (scope.work_dir / ".gitignore").exists()


def test_a_folder_made_before_the_run_is_kept(tmp_path):
    scope = Scope.project(tmp_path)
    scope.skills_dir.parent.mkdir()
    with worklock.held(scope, Reporter()):
        pass
    assert scope.skills_dir.parent.is_dir() and not scope.work_dir.exists()


def test_a_run_waiting_while_the_folder_is_removed_locks_a_file_in_place(tmp_path):
    scope = Scope.project(tmp_path)
    seen: list[bool] = []

    def second_run() -> None:
        with worklock.held(scope, Reporter()):
            seen.append((scope.work_dir / "lock").exists())

    with worklock.held(scope, Reporter()):
        waiting = threading.Thread(target=second_run)
        waiting.start()
        time.sleep(0.5)  # the second run reaches our lock and waits on it
    waiting.join(10)
    assert seen == [True]
