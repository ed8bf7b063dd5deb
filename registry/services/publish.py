"""Publishing a version: the strictest path in the registry.

Order of checks (each refusal stores nothing, in the database or in storage):
declared size, before the body is read (413, :func:`skill_version_upload_check`) → size (413) → authentication (401) → visibility of an existing skill (404) and rights (403) →
archive and manifest via ``skillctl.format`` (422, every finding) → URL name = manifest name
(422) → version (422) → name rules for a new skill (409) → under a row lock on the skill: the
same version with the same bytes (200) or other bytes (409), else store the archive and the row.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import IO

from django.conf import settings
from django.db import IntegrityError, transaction

from registry.access import Actor, owner_role, require
from registry.errors import Conflict, Invalid, TooLarge, Unauthenticated
from registry.models import Owner, Role, Skill, SkillVersion, TokenScope, Visibility
from registry.names import canonical_name
from registry.selectors import owner_get
from registry.services.accounts import user_owner_ensure
from registry.services.audit import audit_record
from registry.services.checks import checks_create
from registry.services.summary import skill_summary_refresh
from registry.storage import archive_delete, archive_key, archive_put
from skillctl.format import Limits, Manifest, SkillReport, load_archive
from skillctl.format.limits import MAX_CHANGELOG_CHARS
from skillctl.format.semver import semver_problem
from skillyard.metrics import publish_counted


@dataclass(frozen=True)
class PublishResult:
    version: SkillVersion
    created: bool  # False: the identical archive was already published (idempotent retry)


@dataclass(frozen=True)
class Origin:
    """Where a mirrored version came from (registry/mirrors.py): its upstream, the archive's URL
    there and the sha256 the upstream announced. Recorded on the skill and the version."""

    upstream_url: str
    archive_url: str
    sha256: str


@dataclass(frozen=True)
class _Checked:
    report: SkillReport  # body, files and the archive's sha256/size/kind
    manifest: Manifest  # the report's, known to be there once the archive passed the checks
    version: str
    changelog: str = ""  # the author's release notes for this version (Markdown)
    origin: Origin | None = None  # a mirrored version's upstream; None: published here


def skill_version_publish(
    *,
    actor: Actor,
    name: str,
    archive: IO[bytes],
    version: str | None = None,
    owner: str | None = None,
    visibility: str | None = None,
    changelog: str = "",
    origin: Origin | None = None,
) -> PublishResult:
    _check_size(archive)
    if len(changelog) > MAX_CHANGELOG_CHARS:
        raise Invalid("changelog.too_long", f"The changelog is limited to {MAX_CHANGELOG_CHARS} characters.")
    if not actor.is_authenticated:
        raise Unauthenticated("auth.required", "Publishing needs `Authorization: Bearer <token>`.")
    _check_target(actor=actor, name=name, owner=owner, visibility=visibility, lock=False)
    checked = _check_archive(archive=archive, name=name, version=version)
    checked = replace(checked, changelog=changelog.strip(), origin=origin)
    for _ in range(3):  # a concurrent first publish of the same name makes us look again
        try:
            return _store(actor=actor, name=name, owner=owner, visibility=visibility, archive=archive, checked=checked)
        except _SkillCreatedConcurrently:
            continue
    raise Conflict("skill.busy", "The skill is being published concurrently; try again.")


def skill_version_upload_check(*, declared_bytes: int | None) -> None:
    """Refuse an upload whose declared length (``Content-Length``) cannot hold an archive within
    the limit, before its body is received; the exact size is checked again on the archive."""
    limit = settings.SKILLYARD_MAX_UPLOAD_BYTES
    if declared_bytes is not None and declared_bytes > limit + settings.SKILLYARD_UPLOAD_OVERHEAD_BYTES:
        raise TooLarge("archive.too_large", f"The upload is {declared_bytes} bytes; the archive limit is {limit}.")


def _check_size(archive: IO[bytes]) -> None:
    size = getattr(archive, "size", None)
    if size is None:
        archive.seek(0, 2)
        size = archive.tell()
    if size > settings.SKILLYARD_MAX_UPLOAD_BYTES:
        raise TooLarge(
            "archive.too_large", f"The archive is {size} bytes; the limit is {settings.SKILLYARD_MAX_UPLOAD_BYTES}."
        )


def _check_target(
    *, actor: Actor, name: str, owner: str | None, visibility: str | None, lock: bool
) -> tuple[Skill | None, Owner]:
    """The existing skill (or None) and the owner to publish under, once rights are checked."""
    query = Skill.objects.select_related("owner")
    skill = (query.select_for_update() if lock else query).filter(name=name).first()
    if visibility not in (None, "", *Visibility.values):
        raise Invalid("skill.visibility_invalid", "visibility must be public or private.")
    if skill is None:
        target = owner_get(name=owner) if owner else _default_owner(actor)
        require(actor, owner=target, role=Role.PUBLISHER, scope=TokenScope.PUBLISH)
        return None, target
    visible = Skill.objects.visible_to(actor.user, actor.token).filter(id=skill.id).exists()
    if not visible or owner_role(user=actor.user, owner=skill.owner) is None:
        raise name_unavailable(name)  # private, deleted or someone else's: the same answer
    require(actor, owner=skill.owner, role=Role.PUBLISHER, scope=TokenScope.PUBLISH)
    if owner and owner != skill.owner.name:
        raise Invalid(
            "skill.owner_mismatch", f"{name} belongs to {skill.owner.name}; owner is set on first publish only."
        )
    if visibility and visibility != skill.visibility:
        raise Invalid(
            "skill.visibility_mismatch", f"{name} is {skill.visibility}; visibility is set on first publish only."
        )
    return skill, skill.owner


def name_unavailable(name: str) -> Conflict:
    """One answer for a name that is taken, private, deleted or confusable with another: which
    one it is would tell an outsider that a private skill exists (it once did: 404 vs 409)."""
    return Conflict(
        "name.unavailable",
        f"The name {name!r} is not available (taken, reserved, or too similar to another skill's); choose another.",
    )


def _default_owner(actor: Actor) -> Owner:
    token = actor.token
    if token is not None and token.owner is not None:
        return token.owner
    return user_owner_ensure(user=actor.account)


def _check_archive(*, archive: IO[bytes], name: str, version: str | None) -> _Checked:
    archive.seek(0)
    report = load_archive(archive, limits=Limits(max_archive_bytes=settings.SKILLYARD_MAX_UPLOAD_BYTES))
    manifest = report.manifest
    if manifest is None or not report.valid:  # a valid report always has a manifest
        raise Invalid(
            "skill.invalid",
            "The archive or its SKILL.md is not valid.",
            errors=[_problem(f) for f in report.errors],
        )
    if report.name != name:
        raise Invalid(
            "name.url_mismatch",
            f"The URL names {name!r} but SKILL.md names {report.name!r}.",
            errors=[{"code": "name.url_mismatch", "message": "name differs from the URL", "path": "frontmatter.name"}],
        )
    return _Checked(report, manifest, _version(version, report.version))


def _version(given: str | None, declared: str | None) -> str:
    version = (given or "").strip() or declared
    if not version:
        raise Invalid("version.missing", "Send a `version` field or set `version` (or metadata.version) in SKILL.md.")
    if problem := semver_problem(version):
        raise Invalid("version.invalid", f"{problem[:200]}.")
    if "+" in version:
        # Build metadata does not order versions: 1.0.0+a and 1.0.0+b would be two "equal" versions.
        raise Invalid("version.build_metadata", "Build metadata (+...) is not accepted in a published version.")
    if given and declared and given.strip() != declared:
        raise Invalid("version.mismatch", f"The version field says {given!r} but SKILL.md says {declared!r}.")
    return version


class _SkillCreatedConcurrently(Exception):
    pass


def _store(
    *, actor: Actor, name: str, owner: str | None, visibility: str | None, archive: IO[bytes], checked: _Checked
) -> PublishResult:
    sha256, kind = checked.report.archive_sha256, checked.report.archive_kind
    key = archive_key(sha256, kind)
    wrote = False
    try:
        with transaction.atomic():
            skill, target = _check_target(actor=actor, name=name, owner=owner, visibility=visibility, lock=True)
            if skill is None:
                upstream = checked.origin.upstream_url if checked.origin else ""
                skill = _skill_create(
                    name=name, owner=target, visibility=visibility or Visibility.PUBLIC, upstream_url=upstream
                )
            existing = SkillVersion.objects.filter(skill=skill, version=checked.version).first()
            if existing is not None:
                return PublishResult(_same_or_conflict(existing, sha256), created=False)
            wrote = archive_put(key, archive, sha256=sha256, size=checked.report.archive_size)
            created = _version_create(actor=actor, skill=skill, checked=checked, key=key)
            return PublishResult(created, created=True)
    except BaseException:
        if wrote and not SkillVersion.objects.filter(archive_key=key).exists():
            archive_delete(key)
        raise


def _skill_create(*, name: str, owner: Owner, visibility: str, upstream_url: str = "") -> Skill:
    canonical = canonical_name(name)
    clash = Skill.objects.filter(canonical_name=canonical).first()
    if clash is not None and clash.name == name:
        # Created by a concurrent first publish after our locked look found nothing: look again
        # (identical bytes then answer 200, whatever the interleaving).
        raise _SkillCreatedConcurrently()
    if clash is not None:
        raise name_unavailable(name)
    try:
        with transaction.atomic():
            return Skill.objects.create(
                name=name, canonical_name=canonical, owner=owner, visibility=visibility, upstream_url=upstream_url
            )
    except IntegrityError as exc:
        raise _SkillCreatedConcurrently() from exc


def _same_or_conflict(existing: SkillVersion, sha256: str) -> SkillVersion:
    if existing.deleted_at is not None:
        raise Conflict("version.deleted", f"{existing.version} was deleted; a version is never reused.")
    if existing.sha256 != sha256:
        raise Conflict(
            "version.exists", f"{existing.version} is already published with other bytes; versions are immutable."
        )
    return existing


def _version_create(*, actor: Actor, skill: Skill, checked: _Checked, key: str) -> SkillVersion:
    report, manifest, origin = checked.report, checked.manifest, checked.origin
    version = SkillVersion.objects.create(
        skill=skill,
        version=checked.version,
        sha256=report.archive_sha256,
        size=report.archive_size,
        archive_key=key,
        archive_kind=report.archive_kind,
        manifest=manifest.to_dict(),
        body=report.body,
        files=[f.to_dict() for f in report.files],
        warnings=[_problem(f) for f in report.warnings],
        changelog=checked.changelog,
        published_by=actor.account,
        upstream_url=origin.archive_url if origin else "",
        upstream_sha256=origin.sha256 if origin else "",
    )
    skill_summary_refresh(skill=skill)
    checks_create(version=version)
    publish_counted()
    audit_record(
        actor=actor,
        action="version.publish",
        owner=skill.owner.name,
        skill=skill.name,
        version=version.version,
        sha256=version.sha256,
        **({"upstream": origin.archive_url} if origin else {}),
    )
    return version


def _problem(finding) -> dict:
    return {"code": finding.code, "message": finding.message, "path": finding.location}
