"""``skillctl publish PATH|ARCHIVE|DIR``: validate, pack (for a folder) and upload to a registry.

The same checks the registry applies run here first (``skillctl.format``), and so does the
version check, so most refusals come before any upload. A folder is packed reproducibly into a
temporary archive. ``--bump`` writes the next version into SKILL.md; ``--all DIR`` publishes
every skill under DIR whose content is not on the registry yet.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app
from skillctl.cli.commands.account import REGISTRY_OPTION
from skillctl.errors import IntegrityError, SkillctlError, UsageError
from skillctl.format.versions import BUMPS

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz")


def _validated(path: Path):
    """The report of a valid skill folder or archive; invalid -> SkillctlError listing codes."""
    from skillctl.format import load_skill

    report = load_skill(path)
    if report.valid:
        return report
    lines = "\n".join(f"  - {f.code}: {f.message}" for f in report.errors)
    raise SkillctlError(
        f"{path} is not a valid skill; nothing was uploaded\n{lines}",
        hint=f"Run `skillctl validate {path}` for details and fix the errors.",
        code="install.invalid_skill",
    )


def _version(report, override: str | None) -> str:
    from skillctl.format.versions import Version

    version = override or report.version
    if not version:
        raise UsageError(
            "the skill has no version",
            hint="Add `version: 1.0.0` to the SKILL.md frontmatter or pass --version 1.0.0.",
            code="publish.no_version",
        )
    if Version.parse(version) is None:
        raise UsageError(
            f"{version!r} is not a semantic version",
            hint="Use MAJOR.MINOR.PATCH, e.g. 1.0.0 or 1.1.0-beta.1.",
            code="publish.bad_version",
        )
    return version


def _archive_for(source: Path, workdir: Path, name: str) -> Path:
    if source.is_dir():
        from skillctl.format import pack_skill

        return pack_skill(source, workdir / f"{name}.zip").path
    return source


@dataclass
class Prepared:
    """One skill ready to upload: what it is and the archive that would be sent."""

    source: Path
    name: str
    version: str
    archive: Path
    sha256: str
    size: int
    files: int
    bumped_from: str = ""

    def to_dict(self) -> dict:
        out = {
            "source": str(self.source),
            "name": self.name,
            "version": self.version,
            "sha256": self.sha256,
            "size": self.size,
            "files": self.files,
        }
        return {**out, "bumped_from": self.bumped_from} if self.bumped_from else out


def _checked_version(report, given: str | None) -> str:
    """The version to publish, checked against SKILL.md before anything is sent."""
    declared = report.version or ""
    if given and declared and given != declared:
        raise UsageError(
            f"--version {given} but SKILL.md says {declared}",
            hint="Pass --bump patch|minor|major to write the next version into SKILL.md, or edit its version.",
            code="publish.version_mismatch",
        )
    return _version(report, given)


def _bumped(folder: Path, part: str, *, write: bool) -> tuple[str, str]:
    """(old, new) version; SKILL.md is rewritten when ``write``."""
    from skillctl.format import load_skill
    from skillctl.format.edit import EditError, set_version
    from skillctl.format.versions import bump

    old = _version(load_skill(folder), None)
    new = bump(old, part)
    skill_md = folder / "SKILL.md"
    try:
        text = set_version(skill_md.read_text("utf-8"), new)
    except EditError as exc:
        raise SkillctlError(f"cannot write the version into {skill_md}: {exc}", code="publish.bump_failed") from exc
    if write:
        from skillctl.fileio import atomic_write

        atomic_write(skill_md, text.encode("utf-8"), mode=skill_md.stat().st_mode & 0o7777)
    else:
        skill_md.write_text(text, encoding="utf-8")  # a scratch copy (--dry-run)
    return old, new


def _prepare(source: Path, workdir: Path, *, version: str | None, bump: str | None, dry_run: bool) -> Prepared:
    """Validate, bump (a scratch copy when dry-running), pack: nothing is sent."""
    if bump and source.is_file():
        raise UsageError("--bump needs the skill's folder, not an archive", code="publish.bump_archive")
    workdir.mkdir(parents=True, exist_ok=True)
    bumped_from = ""
    if bump:
        if dry_run:
            scratch = workdir / "scratch" / source.name
            shutil.copytree(source, scratch, symlinks=True)
            source_for_pack = scratch
        else:
            source_for_pack = source
        bumped_from, _ = _bumped(source_for_pack, bump, write=not dry_run)
    else:
        source_for_pack = source
    report = _validated(source_for_pack)
    name, version = report.name, _checked_version(report, None if bump else version)
    archive = _archive_for(source_for_pack, workdir, name)
    from skillctl.installer.cache import sha256_file

    sha256, size = sha256_file(archive), archive.stat().st_size
    return Prepared(source, name, version, archive, sha256, size, len(report.files), bumped_from)


def _changelog(text: str | None) -> str:
    if not text:
        return ""
    if text.startswith("@"):
        try:
            return Path(text[1:]).read_text("utf-8")
        except OSError as exc:
            raise UsageError(
                f"cannot read {text[1:]}: {exc.strerror or exc}", code="publish.changelog_unreadable"
            ) from None
    return text


def _upload(
    client, prepared: Prepared, *, owner: str | None, private: bool, changelog: str, tags: tuple[str, ...]
) -> dict:
    result = client.publish(
        prepared.name,
        prepared.archive,
        version=prepared.version,
        owner=owner,
        visibility="private" if private else None,
        changelog=changelog or None,
    )
    _check_sha(result, prepared.sha256)
    for tag in tags:
        client.dist_tag_set(prepared.name, tag, prepared.version)
    return result


@click.command()
@click.argument("source", metavar="PATH|ARCHIVE|DIR", type=click.Path(path_type=Path))
@REGISTRY_OPTION
@click.option("--version", "version", metavar="X.Y.Z", help="The version (must match SKILL.md's when it has one).")
@click.option("--bump", type=click.Choice(BUMPS), help="Write the next version into SKILL.md, then publish it.")
@click.option(
    "--changelog", metavar="TEXT|@FILE", help="Release notes for this version (Markdown), shown in the catalog."
)
@click.option(
    "--tag", "tags", metavar="NAME", multiple=True, help="Point this dist-tag at the new version (repeatable)."
)
@click.option("--dry-run", is_flag=True, help="Validate and pack, show what would be sent; send nothing.")
@click.option(
    "--all", "all_", is_flag=True, help="Publish every skill under DIR whose content is not on the registry yet."
)
@click.option("--owner", metavar="NAME", help="A user or organisation to own the skill (first publish only).")
@click.option("--private", is_flag=True, help="Only the owner's members (and their tokens) can see it.")
@json_option
@pass_app
def publish(
    app: App,
    source: Path,
    registry_name: str | None,
    version: str | None,
    bump: str | None,
    changelog: str | None,
    tags: tuple[str, ...],
    dry_run: bool,
    all_: bool,
    owner: str | None,
    private: bool,
    as_json: bool,
) -> int:
    """Publish a skill folder or archive (.zip, .tar.gz) to a registry.

    Published versions are immutable: the same bytes again change nothing, other bytes under
    the same version are refused. Needs `skillctl login` (or SKILLYARD_TOKEN), except --dry-run.
    """
    from skillctl.registry_client import RegistryClient

    if not source.exists():
        raise UsageError(
            f"{source} does not exist",
            hint="Give a skill folder or a .zip/.tar.gz archive.",
            code="publish.source_missing",
        )
    if all_:
        if version:
            raise UsageError(
                "--version names one version; with --all each skill's SKILL.md says", code="publish.all_version"
            )
        options = BatchOptions(bump, _changelog(changelog), tags, dry_run, owner, private)
        return _publish_all(app, source, registry_name, options, as_json=as_json)
    if source.is_file() and not source.name.endswith(ARCHIVE_SUFFIXES):
        raise UsageError(
            f"{source} is neither a folder nor an archive",
            hint="Give the skill's folder, or a .zip/.tar.gz made by `skillctl pack`.",
            code="publish.source_kind",
        )
    notes = _changelog(changelog)
    reg = app.config.registry(registry_name)
    if not dry_run:
        reg.require_token()
    with tempfile.TemporaryDirectory(prefix="skillctl-publish-") as tmp:
        prepared = _prepare(source, Path(tmp), version=version, bump=bump, dry_run=dry_run)
        if dry_run:
            return _report_dry_run([prepared], reg, as_json)
        if prepared.bumped_from:
            console.info(f"{prepared.name}: version {prepared.bumped_from} -> {prepared.version} written to SKILL.md")
        console.info(
            f"Publishing {prepared.name} {prepared.version} ({prepared.size} bytes, sha256 {prepared.sha256[:12]}) "
            f"to {reg.name} ({reg.url})"
        )
        with RegistryClient(reg) as client:
            result = _upload(client, prepared, owner=owner, private=private, changelog=notes, tags=tags)
    data = {
        "registry": reg.name,
        "url": reg.url,
        "name": prepared.name,
        "version": prepared.version,
        "sha256": prepared.sha256,
        "size": prepared.size,
        "created": bool(result.get("created")),
        "tags": list(tags),
        "result": result,
    }
    if as_json:
        console.out_json(data)
    elif data["created"]:
        console.success(
            f"Published {prepared.name} {prepared.version} to {reg.name}"
            + (f" (tagged {', '.join(tags)})" if tags else "")
            + "."
        )
    else:
        console.info(
            f"{prepared.name} {prepared.version} was already published with these exact bytes; nothing changed."
        )
    return 0


def _report_dry_run(prepared: list[Prepared], reg, as_json: bool) -> int:
    if as_json:
        console.out_json(
            {"dry_run": True, "registry": reg.name, "url": reg.url, "skills": [p.to_dict() for p in prepared]}
        )
        return 0
    for p in prepared:
        bumped = f" (bumped from {p.bumped_from})" if p.bumped_from else ""
        console.out(f"would publish {p.name} {p.version}{bumped}: {p.files} files, {p.size} bytes, sha256 {p.sha256}")
    console.info(f"dry run: nothing was sent to {reg.name} ({reg.url})")
    return 0


# --- publish --all --------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchOptions:
    """What `publish --all` does with each skill it finds."""

    bump: str | None
    changelog: str
    tags: tuple[str, ...]
    dry_run: bool
    owner: str | None
    private: bool


def _publish_all(app: App, root: Path, registry_name: str | None, options: BatchOptions, *, as_json: bool) -> int:
    """Every skill under ``root``: unchanged ones are skipped, changed ones published (bumped
    with --bump when their version is already taken), each failure reported, none stopping the rest."""
    from skillctl.discovery import scan_tree
    from skillctl.registry_client import RegistryClient

    if not root.is_dir():
        raise UsageError(
            f"{root} is not a folder", hint="--all publishes the skills under a folder.", code="publish.source_kind"
        )
    folders = scan_tree(root)
    if not folders:
        raise UsageError(
            f"no SKILL.md under {root}",
            hint="Point --all at the folder that holds your skills.",
            code="publish.no_skills",
        )
    reg = app.config.registry(registry_name)
    reg.require_token()  # reading a private skill's versions needs it too
    results = []
    with RegistryClient(reg) as client, tempfile.TemporaryDirectory(prefix="skillctl-publish-") as tmp:
        for i, folder in enumerate(folders):
            work = Path(tmp) / str(i)
            work.mkdir()
            results.append(_publish_one(client, folder, work, options))
    failed = [r for r in results if r["action"] == "failed"]
    if as_json:
        console.out_json({"registry": reg.name, "dry_run": options.dry_run, "skills": results})
    else:
        rows = [[r["name"] or r["source"], r.get("version") or "", r["action"], r.get("reason", "")] for r in results]
        console.table(["skill", "version", "action", "why"], rows)
        counts = {
            a: sum(r["action"] == a for r in results) for a in ("published", "would-publish", "unchanged", "failed")
        }
        console.info(", ".join(f"{n} {a}" for a, n in counts.items() if n))
    return 1 if failed else 0


def _publish_one(client, folder: Path, work: Path, options: BatchOptions) -> dict:  # noqa: ANN001
    from skillctl.registry_client import RegistryError

    out = {"source": str(folder), "name": "", "version": ""}
    try:
        prepared = _prepare(folder, work, version=None, bump=None, dry_run=True)
        out.update(name=prepared.name, version=prepared.version)
        try:
            listed = {v.get("version"): v for v in client.skill(prepared.name).get("versions") or []}
        except RegistryError as exc:
            if exc.status != 404:
                raise
            listed = {}
        same = listed.get(prepared.version)
        if same is not None and same.get("sha256") == prepared.sha256:
            return {**out, "action": "unchanged"}
        if same is not None:
            if not options.bump:
                return {
                    **out,
                    "action": "failed",
                    "reason": f"changed since {prepared.version} was published; pass --bump",
                }
            prepared = _prepare(folder, work / "bumped", version=None, bump=options.bump, dry_run=options.dry_run)
            out.update(version=prepared.version, bumped_from=prepared.bumped_from)
        if options.dry_run:
            return {**out, "action": "would-publish", "sha256": prepared.sha256}
        result = _upload(
            client,
            prepared,
            owner=options.owner,
            private=options.private,
            changelog=options.changelog,
            tags=options.tags,
        )
        return {**out, "action": "published" if result.get("created", True) else "unchanged", "sha256": prepared.sha256}
    except SkillctlError as exc:
        return {**out, "action": "failed", "reason": exc.message.splitlines()[0], "error": exc.code}


def _check_sha(result: dict, sha256: str) -> None:
    """The registry must have stored exactly the bytes we sent."""
    stored = str(result.get("sha256") or result.get("archive_sha256") or "").lower()
    if stored and stored != sha256:
        raise IntegrityError(
            f"the registry stored sha256 {stored}, but the uploaded archive is {sha256}",
            hint="Something between you and the registry changed the bytes; report it.",
            code="integrity.publish_sha256",
        )
