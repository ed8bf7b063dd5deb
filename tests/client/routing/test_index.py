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
