"""skillctl: the thin client of Skillyard.

Importable without Django, Celery, boto3 or docker. Heavy parts load lazily so that
``import skillctl`` and short commands stay fast.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "SkillSet"]


def __getattr__(name: str):
    # `from skillctl import SkillSet` without paying for routing imports on every start.
    if name == "SkillSet":
        from skillctl.skillset import SkillSet

        return SkillSet
    raise AttributeError(f"module 'skillctl' has no attribute {name!r}")
