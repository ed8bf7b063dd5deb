"""A new skill folder, for ``skillctl init`` and the agents' ``skill_management`` create."""

from __future__ import annotations

import json
from pathlib import Path

from skillctl.errors import SkillctlError, UsageError
from skillctl.format.fields import PLACEHOLDER_INSTRUCTIONS

PLACEHOLDER_DESCRIPTION = "Describe what {name} does and when an agent should use it (one or two sentences)."
# `validate` refuses the skill while PLACEHOLDER_INSTRUCTIONS is in it (body.placeholder).
PLACEHOLDER_BODY = (
    "# {title}\n\n"
    + PLACEHOLDER_INSTRUCTIONS
    + " Keep this file short: put long reference\n"
    + "material in `references/` and executable helpers in `scripts/`.\n"
)
SKELETON = """\
---
name: {name}
description: {description}
license: MIT
metadata:
  version: "0.1.0"
---

{body}"""


def skill_create(parent: Path, name: str, *, description: str | None = None, body: str | None = None) -> Path:
    """``parent/name/`` with SKILL.md, scripts/ and references/ (placeholders for what is not
    given). Refuses an invalid name (init.invalid_name) and a folder that is not empty (init.exists)."""
    from skillctl.format.names import MAX_NAME, is_valid_name

    if not isinstance(name, str) or not is_valid_name(name):
        raise UsageError(
            f"{name!r} is not a valid skill name",
            code="init.invalid_name",
            hint=f"lowercase letters, digits and single hyphens, at most {MAX_NAME} characters (e.g. pdf-tools)",
        )
    target = Path(parent) / name
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise SkillctlError(
            f"{target} already exists and is not empty", hint="choose another NAME or --path", code="init.exists"
        )
    text = SKELETON.format(
        name=name,
        # JSON's quoting is YAML's double-quoted scalar: any description stays one plain string.
        description=json.dumps(" ".join(description.split()))
        if description
        else PLACEHOLDER_DESCRIPTION.format(name=name),
        body=(body.rstrip() + "\n") if body else PLACEHOLDER_BODY.format(title=name.replace("-", " ").title()),
    )
    try:
        for sub in ("scripts", "references"):
            (target / sub).mkdir(parents=True, exist_ok=True)
        (target / "SKILL.md").write_text(text, encoding="utf-8")
    except OSError as exc:
        raise SkillctlError(
            f"cannot create {target}: {exc.strerror or exc}", hint="check --path", code="init.write_failed"
        ) from exc
    return target
