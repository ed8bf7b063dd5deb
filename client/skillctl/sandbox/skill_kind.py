"""What kind of skill a folder holds, and what this machine can run of it (seed 000).

A skill is ``python`` when its ``runtime`` block runs Python (a ``.py`` entrypoint, or
``runtime: python3.11``), or, with no ``runtime`` block, when it ships seed 000's entrypoint
(``main.py``, or ``scripts/main.py``); ``program`` when its runtime runs something else; and
``instructions`` otherwise: only its SKILL.md reaches a model, nothing of it runs.

A Python skill is safest in Docker; without a Docker daemon ``skillctl run`` falls back to
bubblewrap, and :func:`docker_missing_notice` is what ``install`` and ``run`` say about it first.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

PYTHON_ENTRYPOINTS = ("main.py", "scripts/main.py")  # seed 000 runs `python /skill/main.py`


class SkillKind(Enum):
    PYTHON = "python"
    PROGRAM = "program"
    INSTRUCTIONS = "instructions"


def skill_kind(manifest, folder: Path) -> SkillKind:
    """The kind of the parsed skill (``skillctl.format.Manifest``) in ``folder``."""
    runtime = manifest.runtime
    if runtime is not None:
        entry = (runtime.entrypoint or "").lower()
        python = entry.endswith(".py") or (runtime.runtime or "").lower().startswith("python")
        return SkillKind.PYTHON if python else SkillKind.PROGRAM
    if python_entrypoint(folder):
        return SkillKind.PYTHON
    return SkillKind.INSTRUCTIONS


def python_entrypoint(folder: Path) -> str | None:
    """Seed 000's entrypoint a skill without a ``runtime`` block ships, if any."""
    return next((p for p in PYTHON_ENTRYPOINTS if (Path(folder) / p).is_file()), None)


def docker_missing_notice(name: str, kind: SkillKind) -> str | None:
    """What to tell the user about a Python skill when no Docker daemon answers (None: nothing)."""
    if kind is not SkillKind.PYTHON:
        return None
    from skillctl.sandbox.docker_backend import DockerBackend

    if DockerBackend().available():
        return None
    return (
        f"{name} is a Python skill and Docker is not available here: its code runs under bubblewrap "
        "instead (weaker isolation: the host's kernel and Python); start a Docker daemon to run it in a container"
    )
