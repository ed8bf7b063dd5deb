"""Every read of the registry. Visibility is ``Skill.objects.visible_to`` and nothing else."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Sum

from registry.access import Actor, owner_role
from registry.errors import BadRequest, NotFound, Unauthenticated, not_found
from registry.models import (
    Advisory,
    AuditEvent,
    DistTag,
    Membership,
    Owner,
    Skill,
    SkillVersion,
    Token,
    VersionCheck,
    member_owner_ids,
)
from registry.names import canonical_name, name_edits
from registry.osv import advisory_osv
from registry.trust import MALICIOUS
from skillctl.format.names import MAX_NAME
from skillctl.format.versions import Version, VersionSpecError, parse_spec, resolve, sort_key

# Columns no version listing shows; deferred so a listing does not load and decode them per row.
VERSION_LISTING_DEFERRED = ("body", "manifest", "files", "warnings", "changelog")


def skill_list_visible(*, actor: Actor, owner: str = "", category: str = "", tag: str = "") -> QuerySet[Skill]:
    """The skills the actor may see, filtered, most downloaded first (the skill_popular index
    serves that order). A query ranks them in registry/search.py, the one search."""
    skills = Skill.objects.visible_to(actor.user, actor.token).select_related("owner")
    if owner:
        skills = skills.filter(owner__name=owner)
    if category:
        skills = skills.filter(category__iexact=category)
    if tag:
        skills = skills.filter(tags_index__contains=f",{tag.lower()},")
    return skills.order_by("-downloads", "name")


def skill_latest_versions(*, skill_ids: Iterable[int]) -> dict[int, str | None]:
    """Each skill's default version (see ``default_version``), from one narrow query.

    The pick needs semantic-version order (``skillctl.format.versions``), which SQL cannot sort by,
    so the rows are few narrow columns and the choice is made here.
    """
    skill_ids = list(skill_ids)
    pinned = DistTag.objects.filter(skill_id=OuterRef("skill_id"), tag="latest", version_id=OuterRef("pk"))
    rows = (
        SkillVersion.objects.live()
        .filter(skill_id__in=skill_ids)
        .annotate(tagged_latest=Exists(pinned))
        .values_list("skill_id", "version", "yanked", "scan_verdict", "tagged_latest")
    )
    by_skill: dict[int, list[dict]] = {}
    tags: dict[int, dict[str, str]] = {}
    for skill_id, version, yanked, verdict, tagged_latest in rows:
        by_skill.setdefault(skill_id, []).append({"version": version, "yanked": yanked, "scan_verdict": verdict})
        if tagged_latest:
            tags[skill_id] = {"latest": version}
    return {skill_id: default_version(by_skill.get(skill_id, []), tags.get(skill_id, {})) for skill_id in skill_ids}


def default_version(rows: list[dict], dist_tags: dict[str, str]) -> str | None:
    """A skill's default version, everywhere one is shown or served: its explicit ``latest`` tag,
    else the highest non-yanked stable version, else the highest non-yanked prerelease — never
    a version the scan found malicious while another is left (an older clean version then
    stands in). Only when every version is blocked is the newest of them the default: only the
    owner's members see such a skill at all."""
    clean = [row for row in rows if row.get("scan_verdict") != MALICIOUS]
    if not clean:
        return resolve("latest", rows, dist_tags=dist_tags)
    shown = {row["version"] for row in clean}
    return resolve("latest", clean, dist_tags={tag: v for tag, v in dist_tags.items() if v in shown})


def skill_default_deprecations(*, latest: dict[int, str | None]) -> dict[int, str]:
    """skill id -> its default version's deprecation message, for the skills ``latest`` (from
    :func:`skill_latest_versions`) names whose default is deprecated; one narrow query."""
    wanted = {(skill_id, version) for skill_id, version in latest.items() if version}
    if not wanted:
        return {}
    rows = (
        SkillVersion.objects.live()
        .filter(skill_id__in={skill_id for skill_id, _ in wanted}, version__in={v for _, v in wanted})
        .exclude(deprecated="")
        .values_list("skill_id", "version", "deprecated")
    )
    return {skill_id: message for skill_id, version, message in rows if (skill_id, version) in wanted}


def skill_get_visible(*, actor: Actor, name: str) -> Skill:
    # get(), not first(): a unique key needs no ORDER BY, which costs Django ~1 ms to compile.
    try:
        return Skill.objects.visible_to(actor.user, actor.token).select_related("owner").get(name=name)
    except Skill.DoesNotExist:
        raise not_found("skill") from None


# "Did you mean" on a skill 404: names this many edits from the asked one on their confusable
# forms (registry/names.py). Two catch nearly every typo of a 5-64 letter name (a dropped, doubled
# or swapped letter and one more); a name of four letters or fewer gets one, or every short
# name would be suggested for every other.
SUGGESTION_EDITS, SHORT_NAME_EDITS, SHORT_NAME = 2, 1, 4
MAX_SUGGESTIONS = 3  # a hint's worth


def skill_name_suggestions(*, actor: Actor, name: str, limit: int = MAX_SUGGESTIONS) -> list[str]:
    """The visible skill names nearest ``name`` (a 404's "did you mean"): look-alikes (case,
    separators, 1/i/l, 0/o), then by edits, then names holding it as a word (``pdf`` ->
    ``pdf-tools``); more downloaded first among equals. Only what ``visible_to`` shows the actor:
    never another owner's private skill, never a blocked one."""
    wanted = canonical_name(name[:MAX_NAME])
    most = SHORT_NAME_EDITS if len(wanted) <= SHORT_NAME else SUGGESTION_EDITS
    rows = Skill.objects.visible_to(actor.user, actor.token).values_list("name", "canonical_name", "downloads")
    near = []
    for found, canonical, downloads in rows:
        edits = name_edits(wanted, canonical, most)
        if edits > most and wanted in canonical.split("-"):
            edits = most + 1  # a word of the name: after every near spelling
        elif edits > most:
            continue
        near.append((edits, -downloads, found))
    return [found for _, _, found in sorted(near) if found != name][:limit]


def actor_sees_blocked(*, actor: Actor, owner: Owner) -> bool:
    """May the actor see this owner's versions the scan found malicious? Its members may (to
    inspect and fix them); to everyone else such a version does not exist (DESIGN §13)."""
    owners = member_owner_ids(actor.user, actor.token)
    return owners is not None and owners.filter(owner_id=owner.id).exists()


def skill_versions(*, skill: Skill, actor: Actor | None = None) -> list[SkillVersion]:
    """Live versions the actor may see, highest first (semantic order, not publication order),
    for listings. Without an actor: every live version (the services' own bookkeeping)."""
    versions = list(skill.versions.live().defer(*VERSION_LISTING_DEFERRED))
    blocked = any(v.scan_verdict == MALICIOUS for v in versions)  # asks who the actor is only then
    if blocked and actor is not None and not actor_sees_blocked(actor=actor, owner=skill.owner):
        versions = [v for v in versions if v.scan_verdict != MALICIOUS]
    return sorted(versions, key=lambda v: sort_key(v.version), reverse=True)


def _version_rows(versions) -> list[dict]:  # noqa: ANN001
    return [{"version": v.version, "yanked": v.yanked, "scan_verdict": v.scan_verdict} for v in versions]


def latest_version(versions) -> str | None:
    """The computed default, ignoring tags (see ``default_version``)."""
    return default_version(_version_rows(versions), {})


def skill_dist_tags(*, skill: Skill, versions: list[SkillVersion] | None = None) -> dict[str, str]:
    """Explicit tags, plus ``latest`` (``default_version``) unless set explicitly; a tag on a
    version not in ``versions`` (one the actor may not see) is left out, and ``latest`` is
    never a blocked version while a clean one is left."""
    if versions is None:
        versions = list(skill.versions.live())
    shown = {v.version for v in versions}
    tags = {
        tag: version
        for tag, version in DistTag.objects.filter(skill=skill).values_list("tag", "version__version")
        if version in shown
    }
    top = default_version(_version_rows(versions), tags)
    if top:
        tags["latest"] = top
    else:
        tags.pop("latest", None)
    return tags


def skill_version_get_visible(*, actor: Actor, name: str, version: str) -> SkillVersion:
    """One query on the way that succeeds; a miss asks again only to tell skill from version 404."""
    visible = Skill.objects.visible_to(actor.user, actor.token).filter(name=name)
    try:
        found = (
            SkillVersion.objects.live()
            .select_related("skill__owner", "published_by")
            .get(skill__in=visible, version=version)
        )
    except SkillVersion.DoesNotExist:
        skill_get_visible(actor=actor, name=name)
        raise not_found("version") from None
    if found.scan_verdict == MALICIOUS and not actor_sees_blocked(actor=actor, owner=found.skill.owner):
        raise not_found("version")
    return found


def skill_version_routing_manifest(*, version: SkillVersion) -> dict | None:
    """The routing manifest the manifest check made for a version (None until it is done).

    The one place that says whether a version has one, so the version detail's
    ``routing_manifest`` and the listings' ``has_routing_manifest`` cannot disagree.
    """
    return version.routing_manifest or None


def routing_manifests_visible(*, actor: Actor, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], dict | None]:
    """The routing manifests of many versions in one query (an installer placing many skills):
    (name, version) -> manifest, or None when there is none yet (the same rule as
    :func:`skill_version_routing_manifest`); versions the actor may not see, or that do not
    exist, are left out."""
    wanted = set(pairs)
    if not wanted:
        return {}
    skills = Skill.objects.visible_to(actor.user, actor.token).filter(name__in={n for n, _ in wanted})
    rows = (
        SkillVersion.objects.live()
        .filter(skill__in=skills, version__in={v for _, v in wanted})
        .exclude(_blocked_for(actor))
        .values_list("skill__name", "version", "routing_manifest")
    )
    return {(n, v): manifest or None for n, v, manifest in rows if (n, v) in wanted}


def _blocked_for(actor: Actor) -> Q:
    """Versions hidden from ``actor``: malicious ones of owners it is not a member of."""
    owners = member_owner_ids(actor.user, actor.token)
    blocked = Q(scan_verdict=MALICIOUS)
    return blocked & ~Q(skill__owner_id__in=owners) if owners is not None else blocked


def skill_version_checks(*, version: SkillVersion) -> dict[str, dict]:
    """``checks`` of the version detail: every check with its state and what it found; a check
    not created yet (versions published before checks existed) reads as pending."""
    pending = {"status": VersionCheck.Status.PENDING, "started_at": None, "finished_at": None}
    return {name: version.checks_state.get(name, pending) for name in VersionCheck.Name.values}


def check_out(check: VersionCheck) -> dict:
    """A check as the API shows it (kept on the version by services.checks on every change)."""
    out = {"status": check.status, "started_at": _iso(check.started_at), "finished_at": _iso(check.finished_at)}
    if check.error:
        out["error"] = check.error
    if check.status == VersionCheck.Status.DONE:
        out.update(check.result)
    return out


def _iso(moment) -> str | None:  # noqa: ANN001
    return moment.isoformat().replace("+00:00", "Z") if moment is not None else None


def skill_version_download_allowed(*, actor: Actor, version: SkillVersion) -> bool:
    """A version the scan found malicious is served only to members of its owner (to inspect it)."""
    if version.scan_verdict != "malicious":
        return True
    return owner_role(user=actor.user, owner=version.skill.owner) is not None


def skill_version_resolve(*, actor: Actor, name: str, spec: str | None) -> SkillVersion:
    """The version a spec selects, with ``skillctl.format.versions`` — the very rules the client uses."""
    skill = skill_get_visible(actor=actor, name=name)
    versions = skill_versions(skill=skill, actor=actor)
    clean = [v for v in versions if v.scan_verdict != MALICIOUS]
    if clean and not any(v.version == spec for v in versions):
        # A range, a tag or the default never lands on a blocked version while a clean one is
        # left, members included; a member asking for one by its exact number gets it (to
        # inspect it), as does one asking for a skill with nothing else.
        versions = clean
    shown = {v.version for v in versions}
    explicit = {
        tag: v for tag, v in DistTag.objects.filter(skill=skill).values_list("tag", "version__version") if v in shown
    }
    try:
        # No spec means the `latest` tag: an explicit one wins over the computed default.
        rows = _version_rows(versions)
        chosen = resolve(spec, rows, dist_tags=explicit) if spec else default_version(rows, explicit)
    except VersionSpecError as exc:
        raise BadRequest("version.spec_invalid", f"{exc.message}. {exc.hint}") from exc
    if chosen is None:
        raise not_found("version")
    found = next(v for v in versions if v.version == chosen)
    found.skill = skill
    return found


def wellknown_index(*, actor: Actor) -> list[tuple[Skill, SkillVersion]]:
    """Each visible skill with its default version, for the .well-known indexes."""
    skills = Skill.objects.visible_to(actor.user, actor.token).select_related("owner").order_by("name")
    by_skill: dict[int, list[SkillVersion]] = {}
    for sv in (
        SkillVersion.objects.live()
        .filter(skill__in=skills)
        .exclude(scan_verdict="malicious")
        .defer("body", "manifest", "warnings")
    ):
        by_skill.setdefault(sv.skill_id, []).append(sv)
    defaults = skill_latest_versions(skill_ids=[skill.id for skill in skills])
    entries = []
    for skill in skills:
        top = defaults.get(skill.id)
        chosen = next((v for v in by_skill.get(skill.id, []) if v.version == top), None)
        if chosen is not None:  # a blocked default version leaves the skill out of the index
            entries.append((skill, chosen))
    return entries


def owner_members(*, owner: Owner) -> QuerySet[Membership]:
    return owner.memberships.select_related("user").order_by("user__username")


def owner_members_visible(*, actor: Actor, owner: Owner) -> QuerySet[Membership] | None:
    """The members of ``owner`` if the actor may see them (a member, through a session or a
    token not limited to another owner); None otherwise. The one rule for API and catalog."""
    token = actor.token
    if token is not None and token.owner_id is not None and token.owner_id != owner.id:
        return None
    if owner_role(user=actor.user, owner=owner) is None:
        return None
    return owner_members(owner=owner)


def owner_list_publishing(*, actor: Actor) -> QuerySet:
    """The owners with skills the actor may see, each with how many and their downloads in all,
    most downloaded first (one query: the counts are of visible skills only)."""
    skills = Skill.objects.visible_to(actor.user, actor.token)
    return (
        skills.values("owner__name", "owner__kind", "owner__description")
        .annotate(skills=Count("id"), downloads=Sum("downloads"))
        .order_by("-downloads", "owner__name")
    )


def owner_stats(*, actor: Actor, owner: Owner) -> dict:
    """What an owner's page sums up: the skills the actor may see and their downloads, and the
    number of members (an organisation's size is public, who they are is not)."""
    skills = Skill.objects.visible_to(actor.user, actor.token).filter(owner=owner)
    totals = skills.aggregate(skills=Count("id"), downloads=Sum("downloads"))
    return {**totals, "downloads": totals["downloads"] or 0, "members": owner.memberships.count()}


def user_memberships(*, user) -> QuerySet[Membership]:
    return Membership.objects.filter(user=user).select_related("owner").order_by("owner__name")


def token_list(*, user) -> QuerySet[Token]:
    return Token.objects.filter(user=user).select_related("owner").order_by("-created_at")


def token_list_visible(*, actor: Actor) -> QuerySet[Token]:
    """The actor's tokens; a token limited to one owner sees only the tokens limited to it
    (it must not reveal, or reach, the user's wider tokens)."""
    tokens = token_list(user=actor.user)
    if actor.token is not None and actor.token.owner_id is not None:
        tokens = tokens.filter(owner_id=actor.token.owner_id)
    return tokens


def audit_list(*, skill: str = "", owner: str = "") -> QuerySet[AuditEvent]:
    events = AuditEvent.objects.all()
    if skill:
        events = events.filter(skill=skill)
    if owner:
        events = events.filter(owner=owner)
    return events


def owner_get(*, name: str) -> Owner:
    owner = Owner.objects.filter(name=name).first()
    if owner is None:
        raise NotFound("owner.not_found", f"No owner named {name!r}.")
    return owner


def token_get_live(*, secret: str) -> Token:
    """The token for ``secret`` when it may be used now; Unauthenticated with the reason's code."""
    from django.utils import timezone

    from registry.services.accounts import token_digest

    token = Token.objects.select_related("user", "owner").filter(digest=token_digest(secret)).first()
    if token is None or not token.user.is_active:
        raise Unauthenticated("token.invalid", "The token is not valid.")
    if token.revoked_at is not None:
        raise Unauthenticated("token.revoked", "The token was revoked.")
    if token.expires_at is not None and token.expires_at <= timezone.now():
        raise Unauthenticated("token.expired", "The token has expired.")
    return token


# --- advisories ---
# Reads of advisories (registry/services/advisories.py writes them; registry/audit_report.py
# answers `skillctl audit` with them). An advisory is visible to whoever sees its
# skill; its OSV ``versions`` are the published versions its range matches now, so ``modified``
# moves when a newly published version joins them (a feed reader polling ``since`` sees it).


def advisory_get_visible(*, actor: Actor, osv_id: str) -> Advisory:
    visible = Skill.objects.visible_to(actor.user, actor.token)
    found = Advisory.objects.select_related("skill__owner").filter(osv_id=osv_id, skill__in=visible).first()
    if found is None:
        raise not_found("advisory")
    return found


def advisory_list_for_skill(*, skill: Skill) -> list[Advisory]:
    """Newest first, withdrawn ones included (OSV keeps them, marked)."""
    advisories = list(skill.advisories.order_by("-published_at", "-id"))
    for advisory in advisories:
        advisory.skill = skill
    return advisories


def advisory_feed(*, actor: Actor, since: datetime | None = None) -> list[tuple[Advisory, dict]]:
    """Every visible advisory modified at or after ``since`` (all without it), oldest change first,
    each with its OSV object: a reader keeps the newest ``modified`` it saw and asks from there."""
    advisories = Advisory.objects.filter(skill__in=Skill.objects.visible_to(actor.user, actor.token))
    if since is not None:
        newer = SkillVersion.objects.live().filter(skill_id=OuterRef("skill_id"), published_at__gte=since)
        advisories = advisories.filter(Q(modified_at__gte=since) | Exists(newer))
    found = list(advisories.select_related("skill"))
    pairs = list(zip(found, advisories_osv(advisories=found), strict=True))
    if since is not None:
        pairs = [(a, osv) for a, osv in pairs if _osv_modified(osv) >= since]
    return sorted(pairs, key=lambda pair: (pair[1]["modified"], pair[0].id))


def _osv_modified(osv: dict) -> datetime:
    return datetime.strptime(osv["modified"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def advisories_osv(
    *, advisories: list[Advisory], rows: list[dict] | None = None, url: Callable[[Advisory], str] | None = None
) -> list[dict]:
    """The OSV objects of ``advisories`` (their ``skill`` loaded), from one query of their skills'
    versions, or from ``rows`` (``skill_id``, ``version``, ``published_at``, ``scan_verdict``)."""
    if rows is None:
        found = SkillVersion.objects.live().filter(skill_id__in={a.skill_id for a in advisories})
        rows = [dict(row) for row in found.values("skill_id", "version", "published_at", "scan_verdict")]
    by_skill: dict[int, list[dict]] = {}
    for row in rows:
        if row["scan_verdict"] != "malicious":  # hidden from listings (only the audit names them)
            by_skill.setdefault(row["skill_id"], []).append(row)
    return [_advisory_osv(a, by_skill.get(a.skill_id, []), url(a) if url else "") for a in advisories]


def _advisory_osv(advisory: Advisory, rows: list[dict], url: str) -> dict:
    matched = sorted(advisory_affected_rows(advisory.affected, rows), key=lambda r: sort_key(r["version"]))
    modified = max([advisory.modified_at, *(r["published_at"] for r in matched)])
    versions = [r["version"] for r in matched]
    return advisory_osv(advisory, skill=advisory.skill.name, versions=versions, modified=modified, url=url)


def advisory_affected_rows(spec: str, rows: list[dict]) -> list[dict]:
    """The rows (dicts with ``version``) whose version the range ``spec`` holds."""
    parsed = parse_spec(spec)
    return [r for r in rows if (v := Version.parse(r["version"])) is not None and parsed.matches(v)]


def advisories_for_version(*, version: SkillVersion) -> tuple[list[Advisory], list[Advisory]]:
    """A version's open advisories: those whose range holds it, and the skill's other ones."""
    open_ones = list(version.skill.advisories.filter(withdrawn_at__isnull=True).order_by("-published_at", "-id"))
    row = [{"version": version.version}]
    affecting = [a for a in open_ones if advisory_affected_rows(a.affected, row)]
    return affecting, [a for a in open_ones if a not in affecting]


def advisory_list_public() -> QuerySet[Advisory]:
    """The catalog's advisory list: public skills only, newest first."""
    public = Skill.objects.visible_to(None)
    return Advisory.objects.filter(skill__in=public).select_related("skill").order_by("-published_at", "-id")
