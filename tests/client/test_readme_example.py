"""The README's SkillSet example runs as written (docs/skillset_example.py is the README copy)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_FILE = ROOT / "docs" / "skillset_example.py"

README = ROOT / "README.md"


def test_readme_shows_the_example_that_runs():
    """The README's Python block is docs/skillset_example.py verbatim, so what readers copy runs."""
    readme = README.read_text("utf-8")
    assert "```python\n" + EXAMPLE_FILE.read_text("utf-8") + "```" in readme


def test_example_runs(tmp_path):
    skill = tmp_path / "project" / ".agents" / "skills" / "k8s-deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: k8s-deploy\ndescription: Deploy services to Kubernetes clusters with helm.\n---\n"
        "# Deploying\nRun helm upgrade.\n"
    )
    env = {**os.environ, "SKILLYARD_HOME": str(tmp_path / "home"), "SKILLYARD_USER_SKILLS": str(tmp_path / "user")}
    result = subprocess.run(
        [sys.executable, str(EXAMPLE_FILE)], cwd=tmp_path / "project", env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("k8s-deploy ")
    assert "## Skill: k8s-deploy" in result.stdout
    assert "tool.path_refused" in result.stdout
