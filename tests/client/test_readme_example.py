"""The README's SkillSet example runs as written (docs/skillset_example.py is the README copy)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_FILE = ROOT / "docs" / "skillset_example.py"

EXAMPLE = '"""Route a user\'s message to installed skills and build the agent\'s prompt (skillctl API)."""\nfrom skillctl import SkillSet\n\nskills = SkillSet.discover()  # .agents/skills of this project, then ~/.agents/skills\nhistory = ["Deploy the api to our Kubernetes cluster"]\nmessage = "and for staging too"  # a fragment: routed together with the history\n\nfor match in skills.route(message, history=history):\n    print(f"{match.name} {match.score:.2f}", "; ".join(match.reasons))\n\nsystem_prompt = "You are a helpful agent.\\n\\n" + skills.prompt(message, history=history, tier="auto")\ntools = skills.tool_definitions("anthropic")  # or "openai": load_skill, read_skill_file\n\n# When the model calls a tool, hand the call back to the SkillSet:\nreply = skills.handle_tool_call("load_skill", {"name": "k8s-deploy"})\nprint(reply.splitlines()[0])\nprint(skills.handle_tool_call("read_skill_file", {"name": "k8s-deploy", "path": "../../etc/passwd"}))\n'


def test_example_file_matches_the_readme_copy():
    assert EXAMPLE_FILE.read_text("utf-8") == EXAMPLE


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
