"""Seed 000: a runnable Python skill is told from an instructions-only one without a `runtime:`
block, and without Docker, install and run say so before bubblewrap is used."""

from __future__ import annotations

import subprocess
import sys

import pytest

from skillctl.config import Config
from skillctl.format import load_skill
from skillctl.installer import Operations
from skillctl.installer.project import Scope
from skillctl.reporting import Reporter
from skillctl.sandbox.skill_kind import SkillKind, skill_kind

NO_DOCKER = "unix:///nonexistent/skillyard-test-docker.sock"


def make(folder, frontmatter: str = "", files: dict | None = None):
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {folder.name}\ndescription: A skill.\n{frontmatter}---\nDo it.\n")
    for path, text in (files or {}).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    return folder


def kind(folder) -> SkillKind:
    return skill_kind(load_skill(folder).manifest, folder)


def test_a_main_py_makes_a_python_skill_without_a_runtime_block(tmp_path):
    assert kind(make(tmp_path / "trace", files={"main.py": "print(1)\n"})) is SkillKind.PYTHON
    assert kind(make(tmp_path / "nested", files={"scripts/main.py": "print(1)\n"})) is SkillKind.PYTHON
    assert kind(make(tmp_path / "docx", files={"references/guide.md": "# x\n"})) is SkillKind.INSTRUCTIONS
    shell = make(tmp_path / "shell", "runtime:\n  runtime: bash\n  entrypoint: run.sh\n", {"run.sh": "echo\n"})
    assert kind(shell) is SkillKind.PROGRAM


@pytest.fixture
def no_docker(tmp_path, monkeypatch):
    from skillctl.sandbox.docker_backend import docker_client

    monkeypatch.setenv("DOCKER_HOST", NO_DOCKER)
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SKILLYARD_USER_SKILLS", str(tmp_path / "user"))
    (tmp_path / "proj").mkdir()
    monkeypatch.chdir(tmp_path / "proj")
    docker_client.cache_clear()  # a client an earlier test of this process made knows another daemon
    yield tmp_path / "proj"
    docker_client.cache_clear()


def test_install_warns_that_a_python_skill_has_no_docker_here(no_docker, tmp_path):
    source = make(tmp_path / "src" / "trace", files={"main.py": "print('hi')\n"})
    plain = make(tmp_path / "src" / "docx")
    reporter = Reporter()
    Operations.for_scope(Scope.project(no_docker), config=Config(), reporter=reporter).install(
        [str(source), str(plain)]
    )
    [warning] = reporter.warnings
    assert "trace is a Python skill and Docker is not available" in warning and "bubblewrap" in warning


def test_run_warns_before_falling_back_to_bubblewrap(no_docker, tmp_path):
    source = make(
        tmp_path / "src" / "trace",
        "runtime:\n  entrypoint: main.py\n  timeout_seconds: 20\n",
        {"main.py": "print(1)\n"},
    )
    result = subprocess.run(
        [sys.executable, "-m", "skillctl", "run", str(source)], capture_output=True, text=True, timeout=120
    )
    assert "trace is a Python skill and Docker is not available" in result.stderr
