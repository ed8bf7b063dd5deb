"""SkillSet.watch(): edits, additions and deletions on disk reach the next route within a second;
a session's snapshot taken before them does not change."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillctl.errors import SkillctlError
from skillctl.skillset import SkillSet
from tests.client.runtime.conftest import wait_until, write_skill

SEEN_WITHIN_S = 1.0  # issue 19: the next route sees a change on disk within a second


def skill_md(name: str, description: str, body: str, version: str = "1.0.0") -> str:
    return f"---\nname: {name}\ndescription: {description}\nversion: {version}\n---\n{body}\n"


@pytest.fixture
def skills(tmp_path, home):
    root = tmp_path / "skills"
    write_skill(root / "bread", skill_md("bread", "Bake sourdough bread at home.", "Feed the starter."))
    write_skill(root / "guitar", skill_md("guitar", "Tune guitar strings and learn chords.", "Tune to E."))
    with SkillSet.from_dir(root, semantic=False) as skills:
        yield skills


def routed(skills, message: str) -> list[str]:
    return [m.name for m in skills.route(message, recent=False)]


def test_edit_add_and_delete_reach_the_next_route_within_a_second_and_not_the_session(skills):
    root = skills.roots[0][1]
    session = skills.session()
    before = session.snapshot.records()
    assert "Feed the starter." in session.handle_tool_call("load_skill", {"name": "bread"})
    watcher = skills.watch()
    assert watcher.wait_armed()

    (root / "bread" / "SKILL.md").write_text(
        skill_md("bread", "Bake rye bread with caraway.", "Soak the rye.", "2.0.0")
    )
    wait_until(
        lambda: routed(skills, "bake rye bread with caraway") == ["bread"], timeout=SEEN_WITHIN_S, what="the edit"
    )
    write_skill(root / "chess", skill_md("chess", "Play chess openings like the sicilian defence.", "e4 c5."))
    wait_until(
        lambda: routed(skills, "play the sicilian defence") == ["chess"], timeout=SEEN_WITHIN_S, what="the new skill"
    )
    shutil.rmtree(root / "guitar")
    wait_until(lambda: "guitar" not in skills.names, timeout=SEEN_WITHIN_S, what="the deletion")
    assert routed(skills, "tune guitar strings and learn chords") == []

    assert session.snapshot.records() == before
    assert "Feed the starter." in session.handle_tool_call("load_skill", {"name": "bread"})
    assert json.loads(session.handle_tool_call("load_skill", {"name": "chess"}))["error"] == "tool.unknown_skill"
    assert json.loads(session.handle_tool_call("load_skill", {"name": "guitar"}))["error"] == "session.skill_changed"
    assert session.begin("play the sicilian defence") == []


def test_a_burst_of_writes_is_one_reload(skills):
    root = skills.roots[0][1]
    watcher = skills.watch()
    assert watcher.wait_armed()
    started = time.monotonic()
    for n in range(30):
        (root / "bread" / "SKILL.md").write_text(skill_md("bread", f"Bake loaf number {n} of sourdough.", "Knead."))
    writing = time.monotonic() - started
    last = "Bake loaf number 29 of sourdough."
    wait_until(lambda: skills.entry("bread").manifest.description == last and watcher.reloads, what="the last write")
    # Grouped: 50 ms of quiet ends a burst, so a loaded machine that spreads the writes out may
    # see a few more groups (one per 50 ms of writing at worst); one reload per write is not that.
    assert watcher.reloads <= min(4 + int(writing / 0.05), 10)


def test_stop_ends_the_thread_and_the_watching(skills):
    root = skills.roots[0][1]
    watcher = skills.watch()
    assert watcher.wait_armed() and watcher.running
    watcher.stop()
    assert not watcher.running
    write_skill(root / "chess", skill_md("chess", "Play chess openings.", "e4."))
    assert "chess" not in skills.names and watcher.reloads == 0


def test_close_stops_every_watcher(skills):
    watchers = [skills.watch(), skills.watch()]
    assert all(w.wait_armed() for w in watchers)
    skills.close()
    assert not any(w.running for w in watchers)


def test_a_skills_folder_created_after_the_start_is_watched(tmp_path, home):
    """A fresh project has no .agents/skills yet: the first skill installed there is seen."""
    root = tmp_path / "later" / "skills"
    with SkillSet.from_dir(root, semantic=False) as skills:
        watcher = skills.watch()
        assert watcher.wait_armed(0) and watcher.running and watcher.roots == []
        write_skill(root / "chess", skill_md("chess", "Play chess openings like the sicilian defence.", "e4 c5."))
        wait_until(lambda: routed(skills, "play the sicilian defence") == ["chess"], timeout=SEEN_WITHIN_S)
        assert watcher.roots == [root]
        write_skill(root / "go", skill_md("go", "Play the game of go.", "Take the corners."))  # now watched
        wait_until(lambda: "go" in skills.names, timeout=SEEN_WITHIN_S, what="a second skill in the new folder")
        watcher.stop()
        assert not watcher.running


def test_the_watch_example_runs_in_an_empty_folder(tmp_path, home):
    example = Path(__file__).parents[3] / "docs" / "watch_example.py"
    project = tmp_path / "fresh"
    project.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(example)], cwd=project, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    routed_now, records, begun = done.stdout.splitlines()
    assert routed_now == "['chess']" and records == "[]" and begun == "[]"


def test_a_failed_reload_is_reported_and_watching_goes_on(skills, monkeypatch):
    root = skills.roots[0][1]
    real_reload, failures = skills.reload, []

    def reload_failing_once():
        if not failures:
            failures.append(1)
            raise OSError("disk on fire")
        return real_reload()

    watcher = skills.watch()
    assert watcher.wait_armed()
    monkeypatch.setattr(skills, "reload", reload_failing_once)
    write_skill(root / "chess", skill_md("chess", "Play chess openings.", "e4."))
    wait_until(lambda: failures, what="the failed reload")
    write_skill(root / "go", skill_md("go", "Play the game of go.", "Take the corners."))
    wait_until(lambda: "go" in skills.names, what="the next reload")
    assert any("disk on fire" in w for w in skills.reporter.warnings)


def test_without_watchfiles_the_error_names_the_extra(skills, monkeypatch):
    monkeypatch.setitem(sys.modules, "watchfiles", None)
    with pytest.raises(SkillctlError) as err:
        skills.watch()
    assert err.value.code == "runtime.watchfiles_missing" and "skillyard[agent]" in err.value.hint
