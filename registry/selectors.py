"""Every read of the registry. Visibility is ``Skill.objects.visible_to`` and nothing else."""

from __future__ import annotations

from django.db.models import Case, IntegerField, Q, QuerySet, Value, When

from registry.access import Actor
from registry.errors import BadRequest, not_found
from registry.models import AuditEvent, DistTag, Membership, Owner, Skill, SkillVersion, Token
from skillctl.errors import UsageError
from skillctl.versions import resolve, sort_key


def skill_list_visible(
    *, actor: Actor, q: str = "", owner: str = "", category: str = "", tag: str = ""
) -> QuerySet[Skill]:
    """Search and filter; an exact name match ranks first, then downloads, then name."""
    skills = Skill.objects.visible_to(actor.user, actor.token).select_related("owner")
    q = q.strip()
    if q:
        skills = skills.filter(Q(name__icontains=q) | Q(description__icontains=q))
    if owner:
        skills = skills.filter(owner__name=owner)
    if category:
        skills = skills.filter(category__iexact=category)
    if tag:
        skills = skills.filter(tags_index__contains=f",{tag.lower()},")
    exact = Case(When(name=q.lower(), then=Value(0)), default=Value(1), output_field=IntegerField())
    return skills.annotate(exact_rank=exact).order_by("exact_rank", "-downloads", "name")


def skill_get_visible(*, actor: Actor, name: str) -> Skill:
    skill = Skill.objects.visible_to(actor.user, actor.token).select_related("owner").filter(name=name).first()
    if skill is None:
        raise not_found("skill")
    return skill


def skill_versions(*, skill: Skill) -> list[SkillVersion]:
    """Live versions, highest first (semantic order, not publication order)."""
    return sorted(skill.versions.live(), key=lambda v: sort_key(v.version), reverse=True)


def latest_version(versions) -> str | None:
    """The default pick: highest non-yanked stable version, else highest non-yanked prerelease."""
    return resolve("", [{"version": v.version, "yanked": v.yanked} for v in versions])


def skill_dist_tags(*, skill: Skill, versions: list[SkillVersion] | None = None) -> dict[str, str]:
    """Explicit tags, plus ``latest`` (the highest non-yanked stable version) unless set explicitly."""
    tags = dict(DistTag.objects.filter(skill=skill).values_list("tag", "version__version"))
    if "latest" not in tags:
        top = latest_version(versions if versions is not None else skill.versions.live())
        if top:
            tags["latest"] = top
    return tags


def skill_version_get_visible(*, actor: Actor, name: str, version: str) -> SkillVersion:
    skill = skill_get_visible(actor=actor, name=name)
    found = skill.versions.live().filter(version=version).first()
    if found is None:
        raise not_found("version")
    found.skill = skill
    return found


def skill_version_resolve(*, actor: Actor, name: str, spec: str | None) -> SkillVersion:
    """The version a spec selects, with ``skillctl.versions`` — the very rules the client uses."""
    skill = skill_get_visible(actor=actor, name=name)
    versions = list(skill.versions.live())
    explicit = dict(DistTag.objects.filter(skill=skill).values_list("tag", "version__version"))
    try:
        # No spec means the `latest` tag: an explicit one wins over the computed default.
        chosen = resolve(spec or "latest", [{"version": v.version, "yanked": v.yanked} for v in versions], dist_tags=explicit)
    except UsageError as exc:
        raise BadRequest("version.spec_invalid", f"{exc.message}. {exc.hint}") from exc
    if chosen is None:
        raise not_found("version")
    found = next(v for v in versions if v.version == chosen)
    found.skill = skill
    return found


def wellknown_index(*, actor: Actor) -> list[tuple[Skill, SkillVersion]]:
    """Each visible skill with its latest version, for the .well-known indexes."""
    skills = Skill.objects.visible_to(actor.user, actor.token).select_related("owner").order_by("name")
    by_skill: dict[int, list[SkillVersion]] = {}
    for sv in SkillVersion.objects.live().filter(skill__in=skills):
        by_skill.setdefault(sv.skill_id, []).append(sv)
    entries = []
    for skill in skills:
        versions = by_skill.get(skill.id, [])
        top = latest_version(versions)
        if top:
            entries.append((skill, next(v for v in versions if v.version == top)))
    return entries


def owner_members(*, owner: Owner) -> QuerySet[Membership]:
    return owner.memberships.select_related("user").order_by("user__username")


def user_memberships(*, user) -> QuerySet[Membership]:
    return Membership.objects.filter(user=user).select_related("owner").order_by("owner__name")


def token_list(*, user) -> QuerySet[Token]:
    return Token.objects.filter(user=user).select_related("owner").order_by("-created_at")


def audit_list(*, skill: str = "", owner: str = "") -> QuerySet[AuditEvent]:
    events = AuditEvent.objects.all()
    if skill:
        events = events.filter(skill=skill)
    if owner:
        events = events.filter(owner=owner)
    return events
