"""``skillctl scan``: the registry's security scanner, run locally (docs/scanner.md)."""

from __future__ import annotations

from pathlib import Path

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app
from skillctl.errors import UsageError

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz")


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--rules", "list_rules", is_flag=True, help="List the rules (id, severity, title) and exit.")
@json_option
@pass_app
def scan(app: App, paths: tuple[Path, ...], list_rules: bool, as_json: bool) -> int:
    """Scan skills (folders, SKILL.md files or archives) for what they would make an agent do.

    A folder without a SKILL.md of its own that holds several skills (a team's skills/ folder)
    is scanned skill by skill, as `install DIR --list` finds them.

    Verdicts: pass, review (a medium finding), warn (high), malicious (critical). Exit 1 when any
    verdict is warn or malicious. --json prints JSON Lines: one object per skill.
    """
    from skillctl.format.scanner import RULES, scan_archive, scan_folder

    if list_rules:
        for rule in RULES.values():
            if as_json:
                console.out_json({"rule": rule.id, "severity": rule.severity, "title": rule.title}, compact=True)
            else:
                console.out(f"{rule.id}\t{rule.severity}\t{rule.title}")
        return 0
    if not paths:
        raise UsageError(
            "give one or more skill folders, SKILL.md files or archives",
            hint="skillctl scan ./my-skill",
            code="scan.no_path",
        )
    worst = 0
    for path in paths:
        if not path.exists():
            raise UsageError(
                f"{path} does not exist",
                hint="Pass a skill folder, a SKILL.md or an archive.",
                code="scan.path_missing",
            )
        archive = path.is_file() and path.name.lower().endswith(ARCHIVE_SUFFIXES)
        for skill in [path] if archive else _skill_folders(path):
            report = scan_archive(skill) if archive else scan_folder(skill)
            worst = max(worst, 1 if report.verdict in ("warn", "malicious") else 0)
            _print(skill, report, as_json)
    return worst


def _skill_folders(path: Path) -> list[Path]:
    """The skills a folder holds, or the path itself when it is one skill (or holds none)."""
    from skillctl.installer.arguments import Source, SourceKind
    from skillctl.installer.collections import is_collection, skills_in

    source = Source(SourceKind.FOLDER, location=str(path))
    if path.is_file() or not is_collection(source):
        return [path]
    return [path / found.subdir for found in skills_in(source)] or [path]


def _print(path: Path, report, as_json: bool) -> None:  # noqa: ANN001
    if as_json:
        console.out_json({"path": str(path), **report.to_dict()}, compact=True)
        return
    console.out(f"{path}: {report.verdict}")
    for f in report.findings:
        where = f"{f.path}:{f.line}" if f.line else f.path
        console.out(f"  {f.severity:8} {f.rule:26} {where}  {f.message}")
        if f.excerpt:
            console.out(f"           {f.excerpt}")
