"""After publishing: yank, deprecate, dist-tags, deletion and download counts.

Each finds the skill through the visibility rule first (404 for those who may not see it), then
checks rights (403), then writes and records the change in the audit log.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from registry.access import Actor, require
from registry.errors import Invalid, not_found
from registry.models import DistTag, Role, Skill, SkillVersion, TokenScope
from registry.selectors import skill_get_visible
from registry.services.audit import audit_record
from registry.services.summary import skill_summary_refresh
from skillctl.format.limits import MAX_REASON_CHARS
from skillctl.format.versions import VersionSpecError, parse_spec
from skillyard.metrics import download_counted

TAG_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,63}$")


def _version_for_write(*, actor: Actor, name: str, version: str, role: Role = Role.PUBLISHER) -> SkillVersion:
    skill = skill_get_visible(actor=actor, name=name)
    require(
        actor, owner=skill.owner, role=role, scope=TokenScope.PUBLISH if role == Role.PUBLISHER else TokenScope.ADMIN
    )
    found = SkillVersion.objects.select_for_update().filter(skill=skill, version=version).live().first()
    if found is None:
        raise not_found("version")
    return found


def _audit(actor: Actor, action: str, sv: SkillVersion, **data) -> None:
    audit_record(actor=actor, action=action, owner=sv.skill.owner.name, skill=sv.skill.name, version=sv.version, **data)


@transaction.atomic
def skill_version_yank(*, actor: Actor, name: str, version: str, reason: str = "") -> SkillVersion:
    if len(reason) > MAX_REASON_CHARS:
        raise Invalid("yank.reason_too_long", f"The reason is limited to {MAX_REASON_CHARS} characters.")
    sv = _version_for_write(actor=actor, name=name, version=version)
    sv.yanked, sv.yanked_reason = True, reason
    sv.save(update_fields=["yanked", "yanked_reason"])
    skill_summary_refresh(skill=sv.skill)
    _audit(actor, "version.yank", sv, reason=reason)
    return sv


@transaction.atomic
def skill_version_unyank(*, actor: Actor, name: str, version: str) -> SkillVersion:
    sv = _version_for_write(actor=actor, name=name, version=version)
    sv.yanked, sv.yanked_reason = False, ""
    sv.save(update_fields=["yanked", "yanked_reason"])
    skill_summary_refresh(skill=sv.skill)
    _audit(actor, "version.unyank", sv)
    return sv


@transaction.atomic
def skill_version_deprecate(*, actor: Actor, name: str, version: str, message: str) -> SkillVersion:
    """Set (or, with an empty message, clear) a version's deprecation message."""
    if len(message) > MAX_REASON_CHARS:
        raise Invalid("deprecate.message_too_long", f"The message is limited to {MAX_REASON_CHARS} characters.")
    sv = _version_for_write(actor=actor, name=name, version=version)
    sv.deprecated = message
    sv.save(update_fields=["deprecated"])
    _audit(actor, "version.deprecate" if message else "version.undeprecate", sv, message=message)
    return sv


@transaction.atomic
def skill_dist_tag_set(*, actor: Actor, name: str, tag: str, version: str) -> DistTag:
    if not TAG_NAME.match(tag) or _looks_like_range(tag):
        raise Invalid("tag.invalid", "A tag starts with a letter, is at most 64 characters and is not a version range.")
    sv = _version_for_write(actor=actor, name=name, version=version)
    dist_tag, _ = DistTag.objects.update_or_create(skill=sv.skill, tag=tag, defaults={"version": sv})
    skill_summary_refresh(skill=sv.skill)
    _audit(actor, "tag.set", sv, tag=tag)
    return dist_tag


def _looks_like_range(tag: str) -> bool:
    """A tag must not read as a version or range (``x``, ``v1``), or resolution would be ambiguous."""
    try:
        return parse_spec(tag).kind != "tag"
    except VersionSpecError:
        return False


@transaction.atomic
def skill_dist_tag_remove(*, actor: Actor, name: str, tag: str) -> None:
    skill = skill_get_visible(actor=actor, name=name)
    require(actor, owner=skill.owner, role=Role.PUBLISHER, scope=TokenScope.PUBLISH)
    deleted, _ = DistTag.objects.filter(skill=skill, tag=tag).delete()
    if not deleted:
        raise not_found("tag")
    skill_summary_refresh(skill=skill)
    audit_record(actor=actor, action="tag.remove", owner=skill.owner.name, skill=skill.name, tag=tag)


@transaction.atomic
def skill_version_delete(*, actor: Actor, name: str, version: str) -> SkillVersion:
    """Mark a version deleted. Its number stays taken forever; the archive is kept for audits."""
    sv = _version_for_write(actor=actor, name=name, version=version, role=Role.ADMIN)
    sv.deleted_at, sv.status = timezone.now(), SkillVersion.Status.DELETED
    sv.save(update_fields=["deleted_at", "status"])
    DistTag.objects.filter(version=sv).delete()
    skill_summary_refresh(skill=sv.skill)
    _audit(actor, "version.delete", sv)
    return sv


@transaction.atomic
def skill_delete(*, actor: Actor, name: str) -> Skill:
    """Mark a skill deleted. Its name (and every look-alike) stays reserved forever."""
    skill = skill_get_visible(actor=actor, name=name)
    require(actor, owner=skill.owner, role=Role.ADMIN, scope=TokenScope.ADMIN)
    now = timezone.now()
    skill.deleted_at = now
    skill.save(update_fields=["deleted_at"])
    skill.versions.live().update(deleted_at=now, status=SkillVersion.Status.DELETED)
    audit_record(actor=actor, action="skill.delete", owner=skill.owner.name, skill=skill.name)
    return skill


def skill_version_download_record(*, version: SkillVersion, client: str) -> bool:
    """Count a download once per client (user, else address) per version per window, without
    a read-modify-write race; True when counted. Downloads order the catalog, so a loop of
    fetches (or forged addresses) must not buy a ranking; a CI job counts once an hour. A repeat
    inside the window costs one cache call and no database transaction."""
    download_counted()  # the metric counts every download served
    if not cache.add(f"download:{version.id}:{client}", 1, settings.SKILLYARD_DOWNLOAD_COUNT_WINDOW_SECONDS):
        return False
    _downloads_add(version)
    return True


@transaction.atomic
def _downloads_add(version: SkillVersion) -> None:
    """One more download on the version and its skill, together."""
    SkillVersion.objects.filter(id=version.id).update(downloads=F("downloads") + 1)
    Skill.objects.filter(id=version.skill_id).update(downloads=F("downloads") + 1)
