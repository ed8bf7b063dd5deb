"""Load a skill from wherever it is: a folder, a SKILL.md, a .zip or a .tar.gz.

:func:`load_skill` never raises for bad input: a missing path, an unreadable file or a broken
archive all become findings on the report, and ``report.path`` is the path exactly as given.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

from skillctl.format.findings import Finding, error, warning
from skillctl.format.limits import DEFAULT_LIMITS, Limits
from skillctl.format.links import missing_links
from skillctl.format.parse import parse_skill_md
from skillctl.format.report import SkillReport

SKILL_MD = "SKILL.md"
# The reference validator also accepts a lower-case skill.md; so do we, with a warning.
SKILL_MD_NAMES = (SKILL_MD, "skill.md")
SKILL_JSON = "skill.json"
ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz")


def load_skill(
    path: str | os.PathLike, *, strict: bool = False, limits: Limits = DEFAULT_LIMITS, folder_name: str | None = None
) -> SkillReport:
    """The verdict on the skill at ``path`` (folder, SKILL.md, .zip or .tar.gz).

    ``folder_name`` is the name the skill's folder goes by when ``path`` is a copy of it (an
    installer's staging folder): what the name rules compare with, and what a skill without a
    ``name`` is called; ``""`` says no folder name is known."""
    given = os.fspath(path)
    target = Path(given)
    try:
        if target.is_dir():
            report = _load_folder(target, strict, limits, folder_name)
        elif not target.exists():
            report = _failed("skill.not_found", f"{given} does not exist")
        elif target.name.lower() == SKILL_MD.lower():
            report = _load_skill_md(target, target.parent, strict, limits, folder_name)
        elif target.name.lower().endswith(ARCHIVE_SUFFIXES):
            report = load_archive(target, strict=strict, limits=limits)
        else:
            report = _failed("skill.unsupported_input", f"{given} is not a folder, a SKILL.md, a .zip or a .tar.gz")
    except OSError as exc:
        report = _failed("skill.unreadable", f"{given}: {exc.strerror or exc}")
    report.path = given
    report.strict = strict
    return report


def _failed(code: str, message: str) -> SkillReport:
    return SkillReport(path="", findings=[error(code, message)])


def _load_folder(folder: Path, strict: bool, limits: Limits, folder_name: str | None) -> SkillReport:
    skill_md = _find_skill_md(folder)
    if skill_md is None:
        return _failed("skill.missing", f"no {SKILL_MD} in {folder}")
    report = _load_skill_md(skill_md, folder, strict, limits, folder_name)
    if report.manifest is not None:
        report.files = _folder_files(folder, report.findings)
        if report.files:
            rel = skill_md.parent.relative_to(folder).as_posix()
            prefix = "" if rel == "." else rel + "/"
            names = [f.path[len(prefix) :] for f in report.files if f.path.startswith(prefix)]
            report.findings += missing_links(report.body, names)
    return report


def _find_skill_md(folder: Path) -> Path | None:
    names = set(os.listdir(folder))
    for name in SKILL_MD_NAMES:
        if name in names:
            return folder / name
    lower = [n for n in names if n.lower() == SKILL_MD.lower()]
    return folder / lower[0] if lower else None


def _load_skill_md(
    skill_md: Path, folder: Path, strict: bool, limits: Limits, folder_name: str | None = None
) -> SkillReport:
    location = skill_md.name
    findings: list[Finding] = []
    if skill_md.name != SKILL_MD:
        findings.append(warning("skill.filename_case", f"rename {skill_md.name} to {SKILL_MD}", location))
    size = skill_md.stat().st_size
    if size > limits.max_skill_md_bytes:  # refuse before reading a huge file into memory
        return SkillReport(
            path="",
            findings=[
                error("skill.too_large", f"{location} is {size} bytes (max {limits.max_skill_md_bytes})", location)
            ],
        )
    data = skill_md.read_bytes()
    skill_json_path = folder / SKILL_JSON
    skill_json = skill_json_path.read_bytes() if skill_json_path.is_file() else None
    if folder_name is None:
        folder_name = folder.resolve().name
    report = parse_skill_md(
        data,
        folder_name=folder_name or None,
        skill_json=skill_json,
        strict=strict,
        location=location,
        max_bytes=limits.max_skill_md_bytes,
    )
    report.findings[:0] = findings
    return report


def _folder_files(folder: Path, findings: list[Finding]) -> list:
    """The folder's files with digests (the archive module owns that walk, so pack agrees)."""
    from skillctl.format.archive import ArchiveError, folder_files

    try:
        return folder_files(folder)
    except ArchiveError as exc:  # a symlink or special file: the folder cannot be packed
        findings.extend(exc.findings)
    except OSError as exc:
        findings.append(error("skill.unreadable", f"cannot list the skill's files: {exc}", str(folder)))
    return []


def load_archive(
    source: str | os.PathLike | bytes | IO[bytes],
    *,
    strict: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> SkillReport:
    """The verdict on an archive given as a path, bytes or a binary file object.

    The one place archive checks and SKILL.md checks are combined: the registry calls it on
    every upload and the client on every install, so both apply exactly the same policy.
    """
    from skillctl.format.archive import inspect_archive

    inspection = inspect_archive(source, limits=limits)
    findings = list(inspection.findings)
    if inspection.skill_md is not None:
        location = f"{inspection.root}/{SKILL_MD}" if inspection.root else SKILL_MD
        report = parse_skill_md(
            inspection.skill_md,
            folder_name=inspection.root or None,
            skill_json=inspection.skill_json,
            strict=strict,
            location=location,
            max_bytes=limits.max_skill_md_bytes,
        )
        findings += report.findings
        prefix = f"{inspection.root}/" if inspection.root else ""
        names = [f.path[len(prefix) :] for f in inspection.files if f.path.startswith(prefix)]
        findings += missing_links(report.body, names, location=location)
    else:
        report = SkillReport(path="")
        if not any(f.is_error for f in findings):
            findings.append(error("archive.no_skill_md", f"no {SKILL_MD} in the archive"))
    report.findings = findings
    report.files = list(inspection.files)
    report.archive_sha256 = inspection.sha256
    report.archive_size = inspection.size
    report.archive_kind = inspection.kind
    report.root = inspection.root
    return report
