"""Every client error carries a stable ``area.problem`` code from ``skillctl.errors.CODES``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import skillctl
from skillctl.errors import CODES, SkillctlError

SOURCE = Path(skillctl.__file__).parent
CODE_STYLE = re.compile(r"^[a-z]+\.[a-z0-9_]+$")
ERROR_CLASSES = {"SkillctlError", "UsageError", "NetworkError", "IntegrityError", "RegistryError", "VersionSpecError"}
FINDING_PASS_THROUGH = {"skill.unreadable", "frontmatter.missing", "frontmatter.unclosed"}  # migrate's, format codes


def _literal_codes() -> dict[str, list[str]]:
    """code -> where, for every ``code="..."`` keyword and ``code = "..."`` class attribute."""
    found: dict[str, list[str]] = {}
    for path in SOURCE.rglob("*.py"):
        if "format" in path.relative_to(SOURCE).parts[:1] and path.name not in (
            "archive.py",
            "versions.py",
            "errors.py",
        ):
            continue  # finding codes: format.findings.CODES
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            value = None
            if isinstance(node, ast.keyword) and node.arg == "code" and isinstance(node.value, ast.Constant):
                value = node.value.value
            elif isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["code"]:
                value = getattr(node.value, "value", None)
            if isinstance(value, str):
                found.setdefault(value, []).append(f"{path.relative_to(SOURCE)}:{node.lineno}")
    return found


def test_codes_are_area_dot_problem():
    assert [c for c in CODES if not CODE_STYLE.match(c)] == []


def test_every_code_raised_is_listed():
    unlisted = {c: w for c, w in _literal_codes().items() if c not in CODES and c not in FINDING_PASS_THROUGH}
    assert unlisted == {}


def test_every_raise_passes_a_code():
    bare = []
    for path in SOURCE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                func = node.exc.func
                name = getattr(func, "id", getattr(func, "attr", ""))
                if name in ERROR_CLASSES and not any(k.arg in ("code", None) for k in node.exc.keywords):
                    bare.append(f"{path.relative_to(SOURCE)}:{node.lineno}")
    assert bare == []


def test_the_base_default_is_a_listed_code():
    assert SkillctlError("x").code in CODES


def test_every_listed_code_is_used():
    strings = {
        node.value
        for path in SOURCE.rglob("*.py")
        if path != SOURCE / "errors.py"  # the list itself
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    used = strings | set(_literal_codes())  # the generic kinds' class attributes in errors.py
    assert sorted(set(CODES) - used) == []
