"""The Agent Skills specification's fields and the policy on them (DESIGN section 3).

:func:`normalise` turns a frontmatter mapping into a :class:`Manifest` plus findings. The
specification's six fields are checked here; the extension fields are read in
:mod:`skillctl.format.extensions`. ``strict`` applies the specification literally.
"""

from __future__ import annotations

import re
from typing import Any

from skillctl.format.coerce import Reader, jsonable
from skillctl.format.extensions import GATING_BLOCKS, KNOWN_KEYS, METADATA_KEYS, read_extensions
from skillctl.format.findings import Finding, error, warning
from skillctl.format.manifest import SPEC_FIELDS, Manifest
from skillctl.format.names import MAX_NAME, NAME_RE

MAX_DESCRIPTION = 1024  # the specification's limit; descriptions go into every prompt
MAX_COMPATIBILITY = 500  # the specification's limit
# `Bash(git add:*)` holds a space; split the allowed-tools string on spaces/commas outside (...).
# The description `skillctl init` writes: left unchanged, the skill tells agents nothing.
PLACEHOLDER_DESCRIPTION = re.compile(r"^Describe what \S+ does and when an agent should use it\b")
# The sentence of the body `skillctl init` writes: while it is there, the skill has no instructions.
PLACEHOLDER_INSTRUCTIONS = "Step-by-step instructions for the agent go here."
_TOOL_RE = re.compile(r"[^\s,(]+(?:\([^)]*\))?")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`])")


def normalise(
    frontmatter: dict,
    *,
    folder_name: str | None = None,
    skill_json: dict | None = None,
    strict: bool = False,
    location: str = "SKILL.md",
    key_lines: dict[str, int] | None = None,
) -> tuple[Manifest, list[Finding]]:
    """Build the normalised manifest; type problems become findings, never exceptions."""
    reader = Reader(location=location, key_lines=dict(key_lines or {}))
    fm = {str(k): v for k, v in frontmatter.items()}
    manifest = Manifest()
    _read_spec_fields(fm, manifest, reader, folder_name=folder_name, strict=strict)
    read_extensions(fm, manifest, reader, skill_json=skill_json or {})
    _check_keys(fm, reader, strict=strict)
    if not manifest.brief_description:
        manifest.brief_description = first_sentence(manifest.description)
    return manifest, reader.findings


def first_sentence(text: str) -> str:
    text = " ".join(text.split())
    return _SENTENCE_END.split(text, maxsplit=1)[0] if text else ""


def _read_spec_fields(fm: dict, m: Manifest, r: Reader, *, folder_name: str | None, strict: bool) -> None:
    m.name = r.text(fm.get("name"), "name", numbers=False)
    if not _name_from_folder(m, fm.get("name"), r, folder_name, strict):
        _check_name(m.name, fm.get("name"), r, folder_name, strict)
    m.description = r.text(fm.get("description"), "description", numbers=False)
    _check_description(m.description, fm.get("description"), r)
    m.license = r.text(fm.get("license"), "license", numbers=False)
    if "license" not in fm:
        r.findings.append(warning("license.missing", "no license field", r.location))
    m.compatibility = r.text(fm.get("compatibility"), "compatibility", numbers=False)
    if len(m.compatibility) > MAX_COMPATIBILITY:
        r.findings.append(
            error(
                "compatibility.too_long",
                f"compatibility is {len(m.compatibility)} characters (max {MAX_COMPATIBILITY})",
                r.where("compatibility"),
            )
        )
    m.allowed_tools = _allowed_tools(fm.get("allowed-tools"), r)
    m.metadata = _metadata(fm.get("metadata"), r, strict=strict)


def _name_from_folder(m: Manifest, raw: Any, r: Reader, folder_name: str | None, strict: bool) -> bool:
    """Seed 003: a skill without a name goes by its folder's (``skills/code-review/SKILL.md``),
    when that folder's name is a valid one; ``--strict`` keeps the specification's error."""
    if m.name or raw not in (None, "") or strict or not folder_name or not NAME_RE.match(folder_name):
        return False
    m.name = folder_name
    r.findings.append(warning("name.from_folder", f"no name field; named {folder_name!r} after its folder", r.location))
    return True


def _check_name(name: str, raw: Any, r: Reader, folder_name: str | None, strict: bool) -> None:
    where = r.where("name")
    if not name:
        if raw is None or isinstance(raw, str):  # other types already got a field.type error
            r.findings.append(error("name.missing", "the name field is missing or empty", where))
        return
    if len(name) > MAX_NAME:
        r.findings.append(error("name.too_long", f"the name is {len(name)} characters (max {MAX_NAME})", where))
    if not NAME_RE.match(name):
        r.findings.append(
            error("name.pattern", f"name {name!r} must be lowercase letters, digits and single hyphens", where)
        )
    if folder_name and folder_name != name:
        make = error if strict else warning
        r.findings.append(make("name.folder_mismatch", f"name {name!r} differs from its folder {folder_name!r}", where))


def _check_description(text: str, raw: Any, r: Reader) -> None:
    where = r.where("description")
    if not text:
        if raw is None or isinstance(raw, str):
            r.findings.append(error("description.missing", "the description is missing or empty", where))
        return
    if PLACEHOLDER_DESCRIPTION.match(text):
        r.findings.append(
            error("description.placeholder", "the description is still the placeholder `skillctl init` wrote", where)
        )
    if len(text) > MAX_DESCRIPTION:
        r.findings.append(
            error(
                "description.too_long",
                f"the description is {len(text)} characters (max {MAX_DESCRIPTION})",
                where,
            )
        )


def _allowed_tools(value: Any, r: Reader) -> list[str]:
    if isinstance(value, str):
        return _TOOL_RE.findall(value)
    return r.strings(value, "allowed-tools", split="")


def _metadata(value: Any, r: Reader, *, strict: bool) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        r.type_error("metadata", "a mapping of strings to strings", value)
        return {}
    make = error if strict else warning
    for key, item in value.items():
        # The gating blocks of OpenClaw and its forks, and seed 002's gating fields, are not
        # strings by design, read by skillctl and by those agents (docs/skill-fields.md);
        # --strict still reports them.
        if not isinstance(item, str) and (strict or (key not in GATING_BLOCKS and key not in METADATA_KEYS)):
            r.findings.append(
                make(
                    "metadata.value_type",
                    f"metadata.{key} is a {type(item).__name__}; the specification wants strings",
                    r.where("metadata"),
                )
            )
    return jsonable(value)


def _check_keys(fm: dict, r: Reader, *, strict: bool) -> None:
    for key in fm:
        if key in SPEC_FIELDS:
            continue
        if strict:
            r.findings.append(
                error(
                    "spec.extension_field",
                    f"{key!r} is not one of the specification's fields {', '.join(SPEC_FIELDS)}",
                    r.where(key),
                )
            )
        elif key not in KNOWN_KEYS:
            r.findings.append(
                warning("frontmatter.unknown_key", f"{key!r} is not a field any known system defines", r.where(key))
            )
