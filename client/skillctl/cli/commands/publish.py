"""``skillctl publish PATH|ARCHIVE``: validate, pack (for a folder) and upload to a registry.

The same checks the registry applies run here first (``skillctl.format``), so most refusals
come before any upload. A folder is packed reproducibly into a temporary archive.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app
from skillctl.cli.commands.account import REGISTRY_OPTION
from skillctl.errors import IntegrityError, SkillctlError, UsageError

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


@click.command()
@click.argument("source", metavar="PATH|ARCHIVE", type=click.Path(path_type=Path))
@REGISTRY_OPTION
@click.option("--version", "version", metavar="X.Y.Z", help="The version (default: the frontmatter `version`).")
@click.option("--owner", metavar="NAME", help="A user or organisation to own the skill (first publish only).")
@click.option("--private", is_flag=True, help="Only the owner's members (and their tokens) can see it.")
@json_option
@pass_app
def publish(
    app: App,
    source: Path,
    registry_name: str | None,
    version: str | None,
    owner: str | None,
    private: bool,
    as_json: bool,
) -> int:
    """Publish a skill folder or archive (.zip, .tar.gz) to a registry.

    Published versions are immutable: the same bytes again change nothing, other bytes under
    the same version are refused. Needs `skillctl login` (or SKILLYARD_TOKEN).
    """
    from skillctl.registry_client import RegistryClient

    if not source.exists():
        raise UsageError(
            f"{source} does not exist",
            hint="Give a skill folder or a .zip/.tar.gz archive.",
            code="publish.source_missing",
        )
    if source.is_file() and not source.name.endswith(ARCHIVE_SUFFIXES):
        raise UsageError(
            f"{source} is neither a folder nor an archive",
            hint="Give the skill's folder, or a .zip/.tar.gz made by `skillctl pack`.",
            code="publish.source_kind",
        )
    report = _validated(source)
    name, version = report.name, _version(report, version)
    reg = app.config.registry(registry_name)
    reg.require_token()
    with tempfile.TemporaryDirectory(prefix="skillctl-publish-") as tmp:
        archive = _archive_for(source, Path(tmp), name)
        sha256, size = _digest(archive)
        console.info(f"Publishing {name} {version} ({size} bytes, sha256 {sha256[:12]}) to {reg.name} ({reg.url})")
        with RegistryClient(reg) as client:
            result = client.publish(
                name, archive, version=version, owner=owner, visibility="private" if private else None
            )
    _check_sha(result, sha256)
    data = {
        "registry": reg.name,
        "url": reg.url,
        "name": name,
        "version": version,
        "sha256": sha256,
        "size": size,
        "created": bool(result.get("created")),
        "result": result,
    }
    if as_json:
        console.out_json(data)
    elif data["created"]:
        console.success(f"Published {name} {version} to {reg.name}.")
    else:
        console.info(f"{name} {version} was already published with these exact bytes; nothing changed.")
    return 0


def _digest(path: Path) -> tuple[str, int]:
    import hashlib

    digest, size = hashlib.sha256(), 0
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _check_sha(result: dict, sha256: str) -> None:
    """The registry must have stored exactly the bytes we sent."""
    stored = str(result.get("sha256") or result.get("archive_sha256") or "").lower()
    if stored and stored != sha256:
        raise IntegrityError(
            f"the registry stored sha256 {stored}, but the uploaded archive is {sha256}",
            hint="Something between you and the registry changed the bytes; report it.",
            code="integrity.publish_sha256",
        )
