"""Commands for skill authors: ``init``, ``validate``, ``pack`` and ``migrate``.

Thin callers of :mod:`skillctl.format`: they parse arguments, call the library, print through
:mod:`skillctl.console` and raise :class:`SkillctlError` for failures.
"""

from __future__ import annotations

from pathlib import Path

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app
from skillctl.console import plural
from skillctl.errors import ExitCode, SkillctlError, UsageError


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--strict", is_flag=True, help="Apply the Agent Skills specification literally.")
@click.option("--codes", is_flag=True, help="List every finding code with its meaning.")
@json_option
@pass_app
def validate(app: App, paths: tuple[str, ...], strict: bool, codes: bool, as_json: bool) -> int:
    """Validate skills: folders, SKILL.md files, .zip or .tar.gz archives.

    Exit 0 when every PATH is valid, 1 when any is invalid, 2 on usage errors. With --json,
    the output is JSON Lines: one JSON object per PATH, in order, one per line.
    """
    if codes:
        return _print_codes(as_json)
    if not paths:
        raise UsageError(
            "no PATH given", hint="skillctl validate PATH... (a skill folder, SKILL.md or archive)", code="cli.no_path"
        )
    from skillctl.format.load import load_skill

    invalid = 0
    for path in paths:
        report = load_skill(path, strict=strict)
        _add_machine_findings(report)
        invalid += not report.valid
        if as_json:
            console.out_json(report.to_json(), compact=True)
        else:
            _print_report(report)
    if not as_json:
        console.info(f"{len(paths) - invalid} valid, {invalid} invalid" + (" (strict)" if strict else ""))
    return int(ExitCode.FAILURE if invalid else ExitCode.OK)


def _add_machine_findings(report) -> None:  # noqa: ANN001 (SkillReport, imported lazily)
    """What only this machine can tell (the format's verdict never depends on the host): an mcp
    command that is not on this PATH."""
    from skillctl.format.mcp_block import missing_command

    found = missing_command(report.manifest.mcp if report.manifest else None)
    if found is not None:
        report.findings.append(found)


def _print_report(report) -> None:  # noqa: ANN001 (SkillReport, imported lazily)
    label = f"{report.name or '?'}" + (f" {report.version}" if report.version else "")
    verdict = "valid" if report.valid else "invalid"
    counts = f"{plural(len(report.errors), 'error')}, {plural(len(report.warnings), 'warning')}"
    console.out(f"{report.path}: {verdict} ({label}, {counts})")
    for finding in report.errors + report.warnings:
        kind = "error" if finding.is_error else "warning"
        where = f" [{finding.location}]" if finding.location else ""
        console.out(f"  {kind:7} {finding.code}{where}: {finding.message}")


def _print_codes(as_json: bool) -> int:
    from skillctl.format.findings import CODES

    if as_json:
        console.out_json(CODES)
    else:
        console.table(["code", "meaning"], [[code, meaning] for code, meaning in CODES.items()])
    return int(ExitCode.OK)


@click.command()
@click.argument("directory", type=click.Path())
@click.option(
    "-o", "--output", type=click.Path(), help="The archive to write (.zip or .tar.gz); default NAME-VERSION.zip here."
)
@json_option
@pass_app
def pack(app: App, directory: str, output: str | None, as_json: bool) -> int:
    """Pack a skill folder into a reproducible archive (same folder, same sha256)."""
    if not Path(directory).is_dir():
        raise UsageError(
            f"{directory} is not a folder", hint="skillctl pack SKILL_FOLDER -o FILE.zip", code="pack.not_a_folder"
        )
    from skillctl.format.archive import InvalidSkillError, pack_skill

    output = output or default_archive_name(directory)
    try:
        result = pack_skill(directory, output)
    except InvalidSkillError as exc:
        report = getattr(exc, "report", None)
        for finding in report.errors if report is not None else []:
            console.error(f"{finding.code} [{finding.location}]: {finding.message}")
        raise SkillctlError(
            f"{directory} is not a valid skill; nothing was written",
            hint=f"run `skillctl validate {directory}` and fix the errors",
            code="pack.invalid_skill",
        ) from exc
    except OSError as exc:
        raise SkillctlError(
            f"cannot write {output}: {exc.strerror or exc}", hint="check the output path", code="pack.write_failed"
        ) from exc
    if as_json:
        console.out_json(
            {"path": str(result.path), "sha256": result.sha256, "size": result.size, "files": len(result.files)},
            compact=True,
        )
    else:
        console.out(f"{result.sha256}  {result.path}")
        console.success(f"packed {plural(len(result.files), 'file')}, {plural(result.size, 'byte')}")
    return int(ExitCode.OK)


def default_archive_name(directory: str | Path) -> str:
    """``NAME-VERSION.zip`` (``NAME.zip`` without a version) from the skill's own SKILL.md, in
    the current folder, or beside the skill when run inside it (never packed into itself)."""
    from skillctl.format.load import load_skill

    folder = Path(directory).resolve()
    report = load_skill(folder)
    name = report.name or folder.name
    filename = f"{name}-{report.version}.zip" if report.version else f"{name}.zip"
    here = Path.cwd().resolve()
    return str((folder.parent if here == folder or folder in here.parents else Path(".")) / filename)


@click.command()
@click.argument("name")
@click.option("--path", "parent", type=click.Path(), default=".", help="The folder to create NAME/ in.")
@click.option(
    "--description", default=None, help="What the skill does and when to use it (else a placeholder to replace)."
)
@click.option(
    "--instructions",
    default=None,
    metavar="TEXT|@FILE",
    help="The body of SKILL.md (Markdown); @FILE reads a file (else a placeholder to replace).",
)
@json_option
@pass_app
def init(app: App, name: str, parent: str, description: str | None, instructions: str | None, as_json: bool) -> int:
    """Create a new skill skeleton in NAME/ (SKILL.md, scripts/, references/)."""
    from skillctl.authoring import skill_create
    from skillctl.format.load import load_skill

    body = _text_or_file(instructions, code="init.instructions_unreadable")
    target = skill_create(Path(parent), name, description=description, body=body)
    report = load_skill(target)
    if as_json:
        console.out_json({"path": str(target), "valid": report.valid, "name": name}, compact=True)
    else:
        console.out(str(target))
        todo = [what for what, given in (("description", description), ("instructions", body)) if not given]
        next_step = f"write its {' and '.join(todo)} in {target / 'SKILL.md'}, then " if todo else ""
        console.success(f"created skill {name}; {next_step}`skillctl validate {target}`")
    return int(ExitCode.OK)


def _text_or_file(value: str | None, *, code: str) -> str | None:
    """TEXT, or the contents of FILE for @FILE."""
    if not value or not value.startswith("@"):
        return value or None
    try:
        return Path(value[1:]).read_text("utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {value[1:]}: {exc.strerror or exc}", code=code) from None


@click.command()
@click.argument("path", type=click.Path())
@click.option("--dry-run", is_flag=True, help="Print the diff; change nothing.")
@click.option("--flatten", is_flag=True, help="Move metadata.openclaw/clawdbot/moltbot fields directly under metadata.")
@json_option
@pass_app
def migrate(app: App, path: str, dry_run: bool, flatten: bool, as_json: bool) -> int:
    """Rewrite OpenClaw/Clawdbot single-line JSON metadata in SKILL.md as block YAML.

    With --flatten: write the gating fields directly under `metadata:` (the flattened form of
    seed 002, which skillctl reads as well; docs/skill-fields.md)."""
    from skillctl.format.migrate import MigrateError, plan_migration

    try:
        migration = plan_migration(path, flatten=flatten)
    except MigrateError as exc:
        hints = {
            "migrate.nothing_to_do": "the gating fields are already directly under metadata (or there are none)"
            if flatten
            else "the metadata is already block YAML (or there is none)",
            "migrate.unsafe": "edit the metadata by hand; `skillctl validate` shows what is wrong",
        }
        raise SkillctlError(str(exc), hint=hints.get(exc.code, "check PATH"), code=exc.code) from exc
    diff = migration.diff()
    if not dry_run:
        try:
            from skillctl.fileio import atomic_write

            atomic_write(migration.path, migration.migrated, mode=migration.path.stat().st_mode & 0o7777)
        except OSError as exc:
            raise SkillctlError(
                f"cannot write {migration.path}: {exc.strerror or exc}",
                hint="check permissions",
                code="migrate.write_failed",
            ) from exc
    if as_json:
        console.out_json({"path": str(migration.path), "written": not dry_run, "diff": diff}, compact=True)
    elif dry_run:
        console.out(diff.rstrip("\n"))
    else:
        console.success(f"migrated {migration.path}")
    return int(ExitCode.OK)
