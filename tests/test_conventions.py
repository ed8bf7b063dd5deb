"""House rules that a reader cannot see break: checked over the source, not by review."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "client" / "skillctl"
# Code that writes to the terminal on the CLI's behalf; everything else reports through a
# skillctl.reporting.Reporter (issue 17: a SkillSet user gets no stray output).
MAY_PRINT = ("cli/", "console.py", "reporting.py", "__main__.py")
PRINTING_CALLS = {"print", "sys.stdout.write", "sys.stderr.write", "click.echo", "click.secho", "Console"}


def calls(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            yield node.lineno, ast.unparse(node.func)


def test_library_code_does_not_print():
    offenders = []
    for path in CLIENT.rglob("*.py"):
        rel = path.relative_to(CLIENT).as_posix()
        if rel.startswith(MAY_PRINT):
            continue
        offenders += [f"{rel}:{line}: {name}(...)" for line, name in calls(path) if name in PRINTING_CALLS]
        text = path.read_text(encoding="utf-8")
        if "from skillctl import console" in text or "import skillctl.console" in text:
            offenders.append(f"{rel}: imports skillctl.console")
    assert offenders == []


def test_tests_import_their_helpers_one_way():
    """Absolutely, from the repository root (pytest's pythonpath): no relative imports, no
    sys.path edits, no loading files by path."""
    offenders = []
    for path in (ROOT / "tests").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                offenders.append(f"{rel}:{node.lineno}: relative import")
        offenders += [
            f"{rel}:{line}: {name}"
            for line, name in calls(path)
            if name.endswith(("sys.path.insert", "sys.path.append", "spec_from_file_location"))
        ]
    assert offenders == []
