"""Advisories: filed and withdrawn by a skill's publishers (their publish or admin token) or by
staff, for any skill. The shared order of the services: visibility (404) → rights (403) → write →
audit. Nothing is deleted: a withdrawn advisory keeps its id (OSV's ``withdrawn``)."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from registry.access import SCOPE_RANK, Actor, require
from registry.errors import Forbidden, Invalid, Unauthenticated
from registry.models import Advisory, AdvisorySeverity, Role, Skill, TokenScope
from registry.osv import advisory_id, range_check
from registry.selectors import advisory_get_visible, skill_get_visible
from registry.services.audit import audit_record
from skillctl.format.versions import VersionSpecError

# A summary is one line (OSV's own advice); details take the rest, in Markdown.
MAX_SUMMARY_CHARS = 200
MAX_DETAILS_CHARS = 20_000  # a long write-up with a proof of concept fits; a pasted log does not
MAX_ALIASES = 20  # CVE/GHSA ids of the same issue: a handful in practice
MAX_RANGE_CHARS = 200  # the model's column; a real range is a few comparators
# Two filings at once may pick the same next number (the unique constraint refuses the second):
# it takes the next one. Three tries cover any plausible race.
ID_TRIES = 3


@transaction.atomic
def advisory_create(
    *,
    actor: Actor,
    name: str,
    summary: str,
    severity: str,
    affected: str,
    details: str = "",
    aliases: list[str] | None = None,
) -> Advisory:
    skill = skill_get_visible(actor=actor, name=name)
    _require_filer(actor, skill)
    aliases = _validated(summary=summary, severity=severity, affected=affected, details=details, aliases=aliases)
    advisory = _insert(
        skill=skill,
        filed_by=actor.account,
        summary=summary.strip(),
        severity=severity,
        affected=affected.strip(),
        details=details,
        aliases=aliases,
    )
    _audit(actor, "advisory.create", advisory, severity=severity, affected=advisory.affected)
    return advisory


@transaction.atomic
def advisory_withdraw(*, actor: Actor, osv_id: str) -> Advisory:
    """Withdraw an advisory (again: no change). It stays listed, with ``withdrawn`` set."""
    advisory = advisory_get_visible(actor=actor, osv_id=osv_id)
    _require_filer(actor, advisory.skill)
    if advisory.withdrawn_at is None:
        advisory.withdrawn_at = advisory.modified_at = timezone.now()
        advisory.save(update_fields=["withdrawn_at", "modified_at"])
        _audit(actor, "advisory.withdraw", advisory)
    return advisory


def advisory_may_file(*, actor: Actor, skill: Skill) -> bool:
    """Whether the actor may file and withdraw advisories on ``skill`` (the catalog shows the form)."""
    try:
        _require_filer(actor, skill)
    except (Unauthenticated, Forbidden):
        return False
    return True


def _require_filer(actor: Actor, skill: Skill) -> None:
    """The skill's publishers (publish scope), or staff on any skill (not with a read token)."""
    if actor.is_authenticated and actor.account.is_staff:
        if actor.token is not None and SCOPE_RANK[actor.token.scope] < SCOPE_RANK[TokenScope.PUBLISH]:
            raise Forbidden("token.scope", f"This token's scope is {actor.token.scope}; publish is needed.")
        return
    if not actor.is_authenticated:
        raise Unauthenticated("auth.required", "Sign in or send `Authorization: Bearer <token>`.")
    require(actor, owner=skill.owner, role=Role.PUBLISHER, scope=TokenScope.PUBLISH)


def _validated(*, summary: str, severity: str, affected: str, details: str, aliases: list[str] | None) -> list[str]:
    if not summary.strip() or len(summary) > MAX_SUMMARY_CHARS or "\n" in summary.strip():
        raise Invalid("advisory.summary_invalid", f"A summary is one line of 1 to {MAX_SUMMARY_CHARS} characters.")
    if severity not in AdvisorySeverity.values:
        raise Invalid("advisory.severity_invalid", f"Severity is one of {', '.join(AdvisorySeverity.values)}.")
    if len(details) > MAX_DETAILS_CHARS:
        raise Invalid("advisory.details_too_long", f"Details are limited to {MAX_DETAILS_CHARS} characters.")
    aliases = [a.strip() for a in aliases or [] if a.strip()]
    if len(aliases) > MAX_ALIASES or any(len(a) > 100 for a in aliases):
        raise Invalid("advisory.aliases_invalid", f"At most {MAX_ALIASES} aliases of up to 100 characters each.")
    try:
        if len(affected) > MAX_RANGE_CHARS:
            raise VersionSpecError(affected[:MAX_RANGE_CHARS])
        range_check(affected.strip())
    except VersionSpecError:
        raise Invalid(
            "advisory.affected_invalid",
            "`affected` is a version or a range that matches something: 1.2.3, ^1.2, ~1.2, >=1.0,<1.4, 1.x, *.",
        ) from None
    return aliases


def _insert(*, skill: Skill, **fields) -> Advisory:
    now = timezone.now()
    for attempt in range(ID_TRIES):
        top = Advisory.objects.filter(year=now.year).aggregate(top=Max("sequence"))["top"] or 0
        sequence = top + 1
        try:
            with transaction.atomic():  # a savepoint: a lost race leaves the outer transaction usable
                return Advisory.objects.create(
                    osv_id=advisory_id(now.year, sequence),
                    year=now.year,
                    sequence=sequence,
                    skill=skill,
                    published_at=now,
                    modified_at=now,
                    **fields,
                )
        except IntegrityError:
            if attempt == ID_TRIES - 1:
                raise
    raise AssertionError("unreachable")


def _audit(actor: Actor, action: str, advisory: Advisory, **data) -> None:
    skill = advisory.skill
    audit_record(actor=actor, action=action, owner=skill.owner.name, skill=skill.name, advisory=advisory.osv_id, **data)
