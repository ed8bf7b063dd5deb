"""Registry manifests are stored outside skill folders and win over the offline one."""

from __future__ import annotations

from skillctl.routing.index import index_path
from skillctl.routing.manifests import (
    load_registry_manifest,
    registry_manifest_path,
    save_registry_manifest,
)
from skillctl.skillset import SkillSet


def test_registry_manifest_is_saved_under_state_dir_and_used_for_routing(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    skill = tmp_path / "skills" / "weather"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: weather\ndescription: Forecasts.\n---\n")
    assert SkillSet.from_dir(tmp_path / "skills", semantic=False).route("will it rain umbrella tomorrow") == []
    save_registry_manifest(
        "weather",
        "ab" * 32,
        {
            "keywords": ["rain", "umbrella", "forecast"],
            "phrases": ["rain tomorrow"],
            "queries": ["Do I need an umbrella?"],
            "negative": "climate science",
        },
    )
    assert registry_manifest_path("weather").is_relative_to(tmp_path / "home" / "state")
    assert load_registry_manifest("weather")["keywords"][0] == "rain"
    assert not any(p.name.endswith(".json") for p in skill.iterdir())
    [match] = SkillSet.from_dir(tmp_path / "skills", semantic=False).route("will it rain tomorrow, umbrella?")
    assert match.name == "weather"


def test_reindex_rebuilds_the_index_file(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    (tmp_path / "s" / "a").mkdir(parents=True)
    (tmp_path / "s" / "a" / "SKILL.md").write_text("---\nname: a\ndescription: Alpha beta gamma.\n---\n")
    SkillSet.from_dir(tmp_path / "s", semantic=False)
    path = index_path([("dir", tmp_path / "s")])
    path.write_text('{"version": 2, "entries": []}')
    assert SkillSet.from_dir(tmp_path / "s", semantic=False, reindex=True).names == ["a"]


def _write_skill(root, name: str, description: str, version: str = "") -> None:
    (root / name).mkdir(parents=True, exist_ok=True)
    extra = f"version: {version}\n" if version else ""
    (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n")


def test_entries_carry_the_version_and_the_digest_of_skill_md(tmp_path, monkeypatch):
    import hashlib

    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    _write_skill(tmp_path / "s", "a", "Alpha beta gamma.", version="1.2.0")
    [entry] = SkillSet.from_dir(tmp_path / "s", semantic=False).index.entries
    assert entry.version == "1.2.0"
    assert entry.digest == hashlib.sha256((tmp_path / "s" / "a" / "SKILL.md").read_bytes()).hexdigest()


def test_an_edit_keeping_size_and_mtime_is_seen_by_its_digest(tmp_path, monkeypatch):
    """Two writes within one tick of the file system's clock leave (mtime, size) alike."""
    import os

    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    _write_skill(tmp_path / "s", "a", "Bake sourdough bread.")
    skill_md = tmp_path / "s" / "a" / "SKILL.md"
    before = os.stat(skill_md)
    assert [m.name for m in SkillSet.from_dir(tmp_path / "s", semantic=False).route("bake sourdough bread")] == ["a"]
    skill_md.write_text(skill_md.read_text().replace("Bake sourdough bread.", "Tuning guitar strings"))
    os.utime(skill_md, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(skill_md).st_size == before.st_size
    skills = SkillSet.from_dir(tmp_path / "s", semantic=False)
    assert [m.name for m in skills.route("tuning guitar strings")] == ["a"]
    assert skills.route("bake sourdough bread") == []


def test_an_old_skill_md_is_trusted_by_its_fingerprint(tmp_path, monkeypatch):
    """The fast path: a SKILL.md older than the racy window is not read again to route."""
    import os

    from skillctl.routing.index import RACY_WINDOW_NS

    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    _write_skill(tmp_path / "s", "a", "Bake sourdough bread.")
    skill_md = tmp_path / "s" / "a" / "SKILL.md"
    old = os.stat(skill_md).st_mtime_ns - 10 * RACY_WINDOW_NS
    os.utime(skill_md, ns=(old, old))
    SkillSet.from_dir(tmp_path / "s", semantic=False)
    skill_md.write_text(skill_md.read_text().replace("Bake sourdough bread.", "Tuning guitar strings"))
    os.utime(skill_md, ns=(old, old))  # same size, same mtime: only a digest would tell
    assert [m.name for m in SkillSet.from_dir(tmp_path / "s", semantic=False).route("bake sourdough bread")] == ["a"]


def _aged(skill_md, by_ns: int) -> None:
    import os

    old = os.stat(skill_md).st_mtime_ns - by_ns
    os.utime(skill_md, ns=(old, old))


def test_reload_of_unchanged_settled_folders_does_not_read_the_index(tmp_path, monkeypatch):
    """The hook's helper reloads before every prompt: with nothing changed that is a stat per
    skill, not a read of the index file."""
    from skillctl.routing import index as routing_index
    from skillctl.routing.index import RACY_WINDOW_NS

    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    for name in ("a", "b"):
        _write_skill(tmp_path / "s", name, f"Skill {name} bakes sourdough bread.")
        _aged(tmp_path / "s" / name / "SKILL.md", 10 * RACY_WINDOW_NS)
    skills = SkillSet.from_dir(tmp_path / "s", semantic=False)
    router = skills.router()
    reads = []
    monkeypatch.setattr(routing_index, "_read", lambda path: reads.append(path) or ({}, 0))
    assert skills.reload() is False and reads == [] and skills.router() is router


def test_reload_sees_an_edit_a_new_and_a_removed_skill_and_a_fresh_edit_is_read(tmp_path, monkeypatch):
    import shutil

    from skillctl.routing.index import RACY_WINDOW_NS

    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    root = tmp_path / "s"
    _write_skill(root, "a", "Bake sourdough bread.")
    _aged(root / "a" / "SKILL.md", 10 * RACY_WINDOW_NS)
    skills = SkillSet.from_dir(root, semantic=False)
    located = [("dir", root / "a")]
    assert skills.index.still_current(located)
    _write_skill(root, "a", "Tune guitar strings by ear.")  # edited now: a new mtime and size
    assert not skills.index.still_current(located)
    assert skills.reload() and [m.name for m in skills.route("tune guitar strings by ear")] == ["a"]
    assert not skills.index.still_current(located)  # edited within the racy window: never trusted
    _write_skill(root, "b", "Plan hiking trips in the alps.")
    assert skills.reload() and skills.names == ["a", "b"]
    shutil.rmtree(root / "b")
    assert skills.reload() and skills.names == ["a"]


def test_a_long_lived_skill_set_picks_up_a_registry_manifest_saved_after_it_loaded(tmp_path, monkeypatch):
    """The registry's manifest check can finish after the install; `skillctl update` then saves
    its manifest for the same SKILL.md. A kept set (the hook's helper) must route with it."""
    from skillctl.routing.index import RACY_WINDOW_NS

    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    _write_skill(tmp_path / "s", "weather", "Forecasts.")
    _aged(tmp_path / "s" / "weather" / "SKILL.md", 10 * RACY_WINDOW_NS)
    skills = SkillSet.from_dir(tmp_path / "s", semantic=False)
    assert skills.route("will it rain tomorrow, umbrella?") == []
    save_registry_manifest("weather", "ab" * 32, {"keywords": ["rain", "umbrella"], "phrases": ["rain tomorrow"]})
    assert skills.reload() is True
    assert [m.name for m in skills.route("will it rain tomorrow, umbrella?")] == ["weather"]


def test_body_passages_live_in_the_sidecar_and_survive_a_lexical_first_load(tmp_path, monkeypatch):
    """The lexical path never parses the passages; the first semantic load after it reads them
    from the skill again (they are not in the main index), later loads from the sidecar."""
    import json

    import pytest

    from skillctl.routing import semantic
    from skillctl.routing.index import vectors_path

    if not semantic.available():
        pytest.skip("the semantic extra is not installed")
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    (tmp_path / "s" / "tasks").mkdir(parents=True)
    (tmp_path / "s" / "tasks" / "SKILL.md").write_text(
        "---\nname: tasks\ndescription: Track tasks.\n---\n# Tasks\n\n- Pull action items from meeting notes\n"
    )
    SkillSet.from_dir(tmp_path / "s", semantic=False)  # builds the main index
    assert SkillSet.from_dir(tmp_path / "s", semantic=False).index.entries[0].manifest.passages == []
    path = index_path([("dir", tmp_path / "s")])
    assert "passages" not in json.loads(path.read_text())["entries"][0]["manifest"]

    wanted = ["Tasks Pull action items from meeting notes", "Pull action items from meeting notes"]
    for _ in range(2):  # built (the skill read again), then loaded from the sidecar
        skills = SkillSet.from_dir(tmp_path / "s", semantic=True)
        assert skills.index.entries[0].manifest.passages == wanted
        assert skills.router().vectors.passages is not None
    assert (
        json.loads(vectors_path(path).read_text())["vectors"][str(tmp_path / "s" / "tasks")]["passage_texts"] == wanted
    )
    assert "passages" not in json.loads(path.read_text())["entries"][0]["manifest"]
