"""Seed 000's `skills` settings in config.toml: keyword_threshold, autoload, show_matches,
docker_enabled, python_base_image."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from skillctl.config import load_config
from skillctl.errors import SkillctlError
from skillctl.skillset import SkillSet


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SKILLYARD_USER_SKILLS", str(tmp_path / "user"))
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def config(home, text: str):
    (home / "config").mkdir(exist_ok=True)
    from skillctl.config import config_path

    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(text)
    return load_config()


def skills_dir(tmp_path):
    folder = tmp_path / "skills" / "otel"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: otel\ndescription: Analyze otel spans.\n---\n# Otel\n")
    return tmp_path / "skills"


def test_keyword_threshold_sets_the_routing_threshold(home, tmp_path):
    root = skills_dir(tmp_path)
    assert SkillSet.from_dir(root, semantic=False).route("spans") == []  # 1 point < 3
    lenient = config(home, "[skills]\nkeyword_threshold = 1\n[skills.otel]\nenabled = true\n")
    assert lenient.skill_settings("otel") == {"enabled": True}  # a skill's table stays one
    assert [m.name for m in SkillSet.from_dir(root, semantic=False, config=lenient).route("spans")] == ["otel"]


def test_a_setting_of_the_wrong_type_is_a_config_error(home):
    with pytest.raises(SkillctlError) as err:
        config(home, '[skills]\nautoload = "yes"\n').setting("autoload")
    assert err.value.code == "config.invalid"


def test_autoload_and_show_matches_load_without_asking(home, tmp_path):
    project = tmp_path / "proj"
    (project / ".agents").mkdir(parents=True)
    skills_dir(tmp_path).rename(project / ".agents" / "skills")
    config(home, "[skills]\nautoload = true\nshow_matches = true\nkeyword_threshold = 1\n")
    argv = [sys.executable, "-m", "skillctl", "route", "--ask", "--json", "--no-semantic", "spans"]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=project)
    assert json.loads(result.stdout)["loaded"] == ["otel"], result.stderr
    assert "'otel' matched:" in result.stderr and "Load 'otel'" not in result.stderr


def test_docker_enabled_false_runs_under_bubblewrap(home, tmp_path):
    folder = tmp_path / "calc"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: calc\ndescription: Add.\nruntime:\n  entrypoint: main.py\n  timeout_seconds: 20\n---\nAdd.\n"
    )
    (folder / "main.py").write_text("print(2)\n")
    config(home, "[skills]\ndocker_enabled = false\n")
    result = subprocess.run(
        [sys.executable, "-m", "skillctl", "run", str(folder), "--json"], capture_output=True, text=True, timeout=120
    )
    if result.stdout.strip():
        assert json.loads(result.stdout)["backend"] == "bwrap"
    else:  # no bubblewrap on this machine: it never tried Docker, and says bubblewrap is missing
        assert "bwrap" in result.stderr and "docker" not in result.stderr.split("tried", 1)[-1].split(")")[0]
