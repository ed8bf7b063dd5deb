"""`skillctl validate` and `install` meet the same hostile frontmatter as the registry: a
finding with its code, never a memory blow-up or a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BOMB = "\n".join(
    ["---", "name: bomb", "description: d", "metadata:", "  a: &a " + "x" * 100_000]
    + [f"  k{i}: *a" for i in range(300)]
    + ["---", "# bomb", ""]
)
# Three aliases to a 30 KB string: 120 KB expanded, caught by the 64 KiB limit, not the alias count.
FEW_ALIASES = "\n".join(
    ["---", "name: few", "description: d", "metadata:", "  a: &a " + "x" * 30_000]
    + [f"  k{i}: *a" for i in range(3)]
    + ["---", "# few", ""]
)


def skillctl(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "skillctl", *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


@pytest.mark.parametrize("text", [BOMB, "---\nname: loop\ndescription: d\nmetadata: &m {self: *m}\n---\n"])
def test_validate_reports_too_complex_frontmatter(tmp_path, text):
    folder = tmp_path / text.split("\n")[1].split(": ")[1]
    folder.mkdir()
    (folder / "SKILL.md").write_text(text)
    result = skillctl("validate", str(folder), "--json")
    assert result.returncode == 1, result.stderr
    [line] = result.stdout.splitlines()
    assert "frontmatter.too_complex" in {e["code"] for e in json.loads(line)["errors"]}
    assert "Traceback" not in result.stderr


def test_validate_refuses_a_few_aliases_expanding_past_64_kib_like_the_registry(tmp_path):
    folder = tmp_path / "few"
    folder.mkdir()
    (folder / "SKILL.md").write_text(FEW_ALIASES)
    result = skillctl("validate", str(folder), "--json")
    assert result.returncode == 1, result.stderr
    [error] = json.loads(result.stdout)["errors"]
    assert error["code"] == "frontmatter.too_complex" and "64 KiB" in error["message"]


def test_install_refuses_too_complex_frontmatter(tmp_path):
    folder = tmp_path / "bomb"
    folder.mkdir()
    (folder / "SKILL.md").write_text(BOMB)
    project = tmp_path / "project"
    project.mkdir()
    result = skillctl("install", str(folder), cwd=project)
    assert result.returncode != 0 and "too_complex" in result.stderr
    assert "Traceback" not in result.stderr and not (project / ".agents" / "skills" / "bomb").exists()
