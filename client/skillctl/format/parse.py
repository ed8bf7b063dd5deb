"""Parse one SKILL.md (bytes or text) into a :class:`SkillReport`. Never raises for bad input.

The steps: size and encoding (DESIGN section 4 limits), the byte order mark, the frontmatter
block and its YAML (:mod:`skillctl.format.frontmatter`), then the fields and the policy on them
(:mod:`skillctl.format.fields`). ``normalise`` is re-exported from there.
"""

from __future__ import annotations

import json
from typing import Any

from skillctl.format import frontmatter
from skillctl.format.fields import PLACEHOLDER_INSTRUCTIONS, normalise
from skillctl.format.findings import Finding, error, warning
from skillctl.format.limits import DEFAULT_LIMITS
from skillctl.format.report import SkillReport

# Agents load SKILL.md whole; past 500 lines the specification recommends moving detail to
# references/ (a warning, never an error).
MAX_BODY_LINES = 500

__all__ = ["normalise", "parse_skill_md", "read_skill_json"]


def parse_skill_md(
    data: bytes | str,
    *,
    folder_name: str | None = None,
    skill_json: dict | bytes | None = None,
    strict: bool = False,
    location: str = "SKILL.md",
    max_bytes: int = DEFAULT_LIMITS.max_skill_md_bytes,
) -> SkillReport:
    """The verdict on one SKILL.md: manifest, body and findings."""
    report = SkillReport(path=location, strict=strict)
    text = _decode(data, location, max_bytes, report.findings)
    if text is None:
        return report
    if text.startswith("\ufeff"):
        report.findings.append(warning("skill.bom", "SKILL.md starts with a byte order mark", f"{location}:1"))
        text = text[1:]
    json_data = _skill_json(skill_json, report.findings)
    block = frontmatter.split(text, location)
    report.body = block.body
    if block.findings:  # no frontmatter block at all: nothing to load
        report.findings += block.findings
        return report
    frontmatter.load(block, location)
    report.findings += block.findings
    if block.data is None:
        return report
    manifest, findings = normalise(
        block.data,
        folder_name=folder_name,
        skill_json=json_data,
        strict=strict,
        location=location,
        key_lines=block.key_lines,
    )
    report.manifest = manifest
    report.findings += findings
    if PLACEHOLDER_INSTRUCTIONS in " ".join(block.body.split()):
        report.findings.append(
            error("body.placeholder", "the instructions are still the placeholder `skillctl init` wrote", location)
        )
    body_lines = block.body.count("\n") + (0 if block.body.endswith("\n") or not block.body else 1)
    if body_lines > MAX_BODY_LINES:
        report.findings.append(
            warning(
                "skill.too_long",
                f"the body is {body_lines} lines; keep SKILL.md under {MAX_BODY_LINES} and move detail to references/",
                location,
            )
        )
    return report


def read_skill_json(data: bytes | str | dict | None, findings: list[Finding]) -> dict:
    """skill.json as a dict; invalid JSON or a non-object is an error finding."""
    return _skill_json(data, findings)


def _decode(data: Any, location: str, max_bytes: int, findings: list[Finding]) -> str | None:
    if isinstance(data, str):
        size = len(data.encode("utf-8", "surrogatepass"))
        raw = None
    elif isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        size = len(raw)
    else:
        findings.append(error("skill.unreadable", f"cannot read a {type(data).__name__} as SKILL.md", location))
        return None
    if size > max_bytes:
        findings.append(error("skill.too_large", f"SKILL.md is {size} bytes (max {max_bytes})", location))
        return None
    if raw is None:
        try:
            data.encode("utf-8")
        except UnicodeEncodeError:
            findings.append(error("skill.not_utf8", "SKILL.md holds characters UTF-8 cannot encode", location))
            return None
        return data.replace("\r\n", "\n")
    try:
        return raw.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        findings.append(error("skill.not_utf8", f"SKILL.md is not valid UTF-8 (byte {exc.start})", location))
        return None


def _skill_json(data: Any, findings: list[Finding]) -> dict:
    if data is None:
        return {}
    if isinstance(data, dict):
        return data
    try:
        value = json.loads(data)
    except (ValueError, TypeError, RecursionError) as exc:
        findings.append(error("skill.json_invalid", f"skill.json is not valid JSON: {exc}", "skill.json"))
        return {}
    if not isinstance(value, dict):
        findings.append(error("skill.json_invalid", "skill.json must hold a JSON object", "skill.json"))
        return {}
    return value
