"""Where skillctl keeps things: the project root never climbs into the user scope."""

from __future__ import annotations

from pathlib import Path

from skillctl import paths


def test_project_root_is_the_nearest_folder_with_project_files(tmp_path: Path) -> None:
    (tmp_path / "skills.toml").write_text("")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert paths.project_root(deep) == tmp_path.resolve()


def test_project_root_never_resolves_to_home_from_below(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    (home / ".agents" / "skills").mkdir(parents=True)  # the user scope exists
    work = home / "code" / "app"
    work.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    assert paths.project_root(work) == work.resolve()
    assert paths.project_skills_dir(paths.project_root(work)) != paths.user_skills_dir()


def test_home_override_moves_config_state_and_cache(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path))
    assert {paths.config_dir(), paths.state_dir(), paths.cache_dir()} == {
        tmp_path / "config",
        tmp_path / "state",
        tmp_path / "cache",
    }
