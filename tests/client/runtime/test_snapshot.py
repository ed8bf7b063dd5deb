"""A session keeps the skills it started with: reloads change the SkillSet, never the snapshot."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from skillctl.runtime.snapshot import SkillRecord
from skillctl.skillset import SkillSet
from tests.client.runtime.conftest import write_skill


def skill_md(name: str, description: str, body: str, version: str = "1.0.0") -> str:
    return f"---\nname: {name}\ndescription: {description}\nversion: {version}\n---\n{body}\n"


@pytest.fixture
def skills_dir(tmp_path, home):
    root = tmp_path / "skills"
    write_skill(root / "bread", skill_md("bread", "Bake sourdough bread at home.", "Feed the starter."))
    write_skill(root / "guitar", skill_md("guitar", "Tune guitar strings and learn chords.", "Tune to E."))
    return root


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_session_records_names_versions_and_digests(skills_dir):
    session = SkillSet.from_dir(skills_dir, semantic=False).session()
    assert sorted(session.snapshot.records(), key=lambda r: r.name) == [
        SkillRecord("bread", "1.0.0", digest(skills_dir / "bread" / "SKILL.md"), str(skills_dir / "bread")),
        SkillRecord("guitar", "1.0.0", digest(skills_dir / "guitar" / "SKILL.md"), str(skills_dir / "guitar")),
    ]


def test_the_session_is_the_same_until_closed_then_a_new_one_starts(skills_dir):
    skills = SkillSet.from_dir(skills_dir, semantic=False)
    first = skills.session()
    assert skills.session() is first
    skills.close()
    assert first.closed and skills.session() is not first


def test_a_reload_changes_the_skillset_and_not_a_running_session(skills_dir):
    skills = SkillSet.from_dir(skills_dir, semantic=False)
    session = skills.session()
    before = session.snapshot.records()
    assert "Feed the starter." in session.handle_tool_call("load_skill", {"name": "bread"})
    (skills_dir / "bread" / "SKILL.md").write_text(skill_md("bread", "Bake rye bread.", "Soak the rye.", "2.0.0"))
    write_skill(skills_dir / "chess", skill_md("chess", "Play chess openings like the sicilian.", "e4 c5."))
    shutil.rmtree(skills_dir / "guitar")
    assert skills.reload() is True
    assert sorted(skills.names) == ["bread", "chess"] and skills.entry("bread").version == "2.0.0"
    assert session.snapshot.records() == before
    assert "Feed the starter." in session.handle_tool_call("load_skill", {"name": "bread"})  # as loaded
    assert json.loads(session.handle_tool_call("load_skill", {"name": "chess"}))["error"] == "tool.unknown_skill"
    assert json.loads(session.handle_tool_call("load_skill", {"name": "guitar"}))["error"] == "session.skill_changed"
    assert session.begin("play the sicilian chess opening") == []
    assert [m.name for m in skills.route("play the sicilian chess opening")] == ["chess"]


def test_a_skill_changed_before_its_first_load_is_refused_and_a_new_session_sees_it(skills_dir):
    skills = SkillSet.from_dir(skills_dir, semantic=False)
    session = skills.session()
    (skills_dir / "bread" / "SKILL.md").write_text(skill_md("bread", "Bake rye bread.", "Soak the rye.", "2.0.0"))
    reply = json.loads(session.handle_tool_call("load_skill", {"name": "bread"}))
    assert reply["error"] == "session.skill_changed" and "new session" in reply["hint"]
    skills.close()
    skills.reload()
    assert "Soak the rye." in skills.session().handle_tool_call("load_skill", {"name": "bread"})


def test_reload_without_changes_says_so(skills_dir):
    skills = SkillSet.from_dir(skills_dir, semantic=False)
    assert skills.reload() is False


def test_a_saved_snapshot_resumes_with_its_skills_and_loaded_skill(skills_dir, tmp_path):
    """Seed 002 keeps a session's skill snapshot with the session: a conversation continued in
    another process is offered the same skills, and what it had loaded is loaded again."""
    skills = SkillSet.from_dir(skills_dir, semantic=False)
    session = skills.session()
    session.handle_tool_call("load_skill", {"name": "bread"})
    saved = session.snapshot().save(tmp_path / "session.json")
    skills.close()
    write_skill(skills_dir / "added", skill_md("added", "Added after the session.", "New."))

    resumed = SkillSet.resume(saved, semantic=False)
    again = resumed.session()
    assert sorted(again.snapshot.names) == ["bread", "guitar"]  # the skill added since is not offered
    assert again.loaded == ["bread"] and again.active_skill == "bread"
    assert "tool.unknown_skill" in again.handle_tool_call("load_skill", {"name": "added"})
    assert "Tune to E." in again.handle_tool_call("load_skill", {"name": "guitar"})
    assert "added" in resumed.names  # the SkillSet itself sees the folders as they are now


def test_a_skill_changed_since_the_save_is_refused_after_resume(skills_dir, tmp_path):
    saved = SkillSet.from_dir(skills_dir, semantic=False).session().snapshot().save(tmp_path / "s.json")
    (skills_dir / "guitar" / "SKILL.md").write_text(skill_md("guitar", "Tune guitars.", "Changed."))
    session = SkillSet.resume(saved, semantic=False).session()
    assert "session.skill_changed" in session.handle_tool_call("load_skill", {"name": "guitar"})


def test_a_file_that_is_not_a_snapshot_is_refused_with_a_code(tmp_path):
    from skillctl.errors import SkillctlError

    (tmp_path / "bad.json").write_text(json.dumps({"format": 99}))
    with pytest.raises(SkillctlError) as err:
        SkillSet.resume(tmp_path / "bad.json")
    assert err.value.code == "session.snapshot_invalid"
