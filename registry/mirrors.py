"""Upstream mirrors (DESIGN §14): serving skills this registry does not host from upstreams it
trusts (``settings.SKILLYARD_UPSTREAMS``; docs/mirrors.md).

A read that misses (the API's skill detail and downloads, the catalog's skill page) calls the
``*_or_mirrored`` wrappers below instead of the selector. On a miss, in this order:

1. the name must be a valid skill name and must not exist here in any form: no skill of any
   owner, visibility or state (private, deleted, blocked) has its confusable form
   (registry/names.py). Only then is any upstream asked, so a local name is never shadowed
   (no dependency confusion) and a private name never leaves this registry;
2. the upstreams are tried in the configured order; one whose rules (allow/deny by name and
   ``owner:``) cannot admit the name is not asked; a miss is remembered
   (``SKILLYARD_MIRROR_MISS_SECONDS``) so a 404 does not cost a fetch each time;
3. the first upstream that holds the name and whose rules admit it (owner rules need its
   answer) supplies it; an upstream that fails stops the search (the next one could hold a
   different skill of that name): 502 ``mirror.*``, remembered like a miss;
4. the default version, and the one a spec asks for, are fetched (registry/upstreams.py:
   bounded, same-origin, sha256 against the announced digest) and stored through the publish
   service, with every check a publish gets, under the upstream's own local owner (an
   organisation whose only member is the mirror service, so nobody can publish into it),
   their origin recorded; the scan runs before the answer, so a version it finds malicious is
   blocked before it is ever served.

A skill mirrored earlier gets a version it lacks the same way (its own upstream only).
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import time
from dataclasses import dataclass
from fnmatch import fnmatchcase

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import IntegrityError, transaction

from registry import selectors
from registry.access import Actor
from registry.errors import NotFound, RegistryError
from registry.models import Membership, Owner, Role, Skill, SkillVersion, VersionCheck, Visibility
from registry.names import canonical_name
from registry.services.publish import Origin, skill_version_publish
from registry.upstreams import (
    FetchLimits,
    Upstream,
    UpstreamError,
    UpstreamKind,
    UpstreamSkill,
    UpstreamVersion,
    upstream_client,
)
from skillctl.format.names import MAX_NAME, is_valid_name
from skillctl.format.versions import VersionSpecError, resolve

logger = logging.getLogger(__name__)

# The user the mirror publishes as. '+' is outside owner names, so nobody can sign up as it
# (every sign-up creates an owner of the same name) and take the mirror organisations over.
MIRROR_USERNAME = "skillyard+mirror"
OWNER_RULE = "owner:"
POLL_SECONDS = 0.05  # waiting for the scan, or for another request's fetch


class MirrorFailed(RegistryError):
    """An upstream that should supply a skill could not (codes ``mirror.<upstream code>``,
    ``mirror.invalid``, ``mirror.owner_taken``): a gateway's error, not a missing skill."""

    status = 502


@dataclass(frozen=True)
class UpstreamConfig:
    """One entry of SKILLYARD_UPSTREAMS. ``allow`` omitted: every name; deny wins over allow."""

    url: str
    kind: UpstreamKind
    owner: str  # the local organisation its skills belong to
    allow: tuple[str, ...] = ("*",)
    deny: tuple[str, ...] = ()

    @classmethod
    def from_setting(cls, item: dict) -> UpstreamConfig:
        url = str(item["url"]).rstrip("/")
        return cls(
            url=url,
            kind=UpstreamKind(item.get("kind") or UpstreamKind.SKILLYARD),
            owner=str(item.get("owner") or mirror_owner_default(url)),
            allow=tuple(str(p) for p in item.get("allow", ["*"])),
            deny=tuple(str(p) for p in item.get("deny", [])),
        )

    def permits(self, *, name: str, owner: str) -> bool:
        """May ``name``, held upstream by ``owner`` ("" when the upstream has no owners), come from here?"""
        return not _matches(self.deny, name, owner) and _matches(self.allow, name, owner)

    def may_permit(self, name: str) -> bool:
        """Could ``name`` be permitted once its owner is known? (Else the upstream is not asked.)"""
        by_name = tuple(p for p in self.deny if not p.startswith(OWNER_RULE))
        if _matches(by_name, name, ""):
            return False
        return any(p.startswith(OWNER_RULE) or fnmatchcase(name, p) for p in self.allow)


def _matches(patterns: tuple[str, ...], name: str, owner: str) -> bool:
    for pattern in patterns:
        if pattern.startswith(OWNER_RULE):
            if owner and fnmatchcase(owner.lower(), pattern[len(OWNER_RULE) :].lower()):
                return True
        elif fnmatchcase(name, pattern):
            return True
    return False


def mirror_owner_default(url: str) -> str:
    """``mirror-`` and the upstream's host (and port): ``https://skills.example`` -> ``mirror-skills-example``."""
    host = re.sub(r"^[a-z]+://", "", url.lower()).split("/")[0]
    return ("mirror-" + re.sub(r"[^a-z0-9]+", "-", host).strip("-"))[:MAX_NAME].rstrip("-")


def upstreams_configured() -> list[UpstreamConfig]:
    return [UpstreamConfig.from_setting(item) for item in settings.SKILLYARD_UPSTREAMS]


def name_held_locally(name: str) -> bool:
    """Does any skill here, of any owner, visibility or state, have ``name`` or a look-alike?"""
    return Skill.objects.filter(canonical_name=canonical_name(name)).exists()


# --- the wrappers the API and the catalog call ------------------------------------------------


def skill_get_visible_or_mirrored(*, actor: Actor, name: str) -> Skill:
    try:
        return selectors.skill_get_visible(actor=actor, name=name)
    except NotFound as missing:
        if missing.code != "skill.not_found" or not skill_mirror(name=name):
            raise
    return selectors.skill_get_visible(actor=actor, name=name)


def skill_version_resolve_or_mirrored(*, actor: Actor, name: str, spec: str | None) -> SkillVersion:
    try:
        return selectors.skill_version_resolve(actor=actor, name=name, spec=spec)
    except NotFound as missing:
        if not _mirror_missing(missing, actor=actor, name=name, spec=spec):
            raise
    return selectors.skill_version_resolve(actor=actor, name=name, spec=spec)


def skill_version_get_visible_or_mirrored(*, actor: Actor, name: str, version: str) -> SkillVersion:
    try:
        return selectors.skill_version_get_visible(actor=actor, name=name, version=version)
    except NotFound as missing:
        if not _mirror_missing(missing, actor=actor, name=name, spec=version):
            raise
    return selectors.skill_version_get_visible(actor=actor, name=name, version=version)


def _mirror_missing(missing: NotFound, *, actor: Actor, name: str, spec: str | None) -> bool:
    if missing.code == "skill.not_found":
        return skill_mirror(name=name, spec=spec)
    if missing.code == "version.not_found" and spec:
        return skill_version_mirror(skill=selectors.skill_get_visible(actor=actor, name=name), spec=spec)
    return False


# --- the fetch service ----------------------------------------------------------------------


def skill_mirror(*, name: str, spec: str | None = None) -> bool:
    """Fetch ``name`` (its default version, and the one ``spec`` selects) from the first
    upstream that holds it and admits it; True when a version was stored."""
    if not settings.SKILLYARD_UPSTREAMS or not is_valid_name(name) or name_held_locally(name):
        return False
    for config in upstreams_configured():
        if config.may_permit(name) and _fetch(config, name=name, spec=spec, held=set(), key=(name,)):
            return True
    return False


def skill_version_mirror(*, skill: Skill, spec: str) -> bool:
    """Fetch the version ``spec`` selects of a skill mirrored earlier, from its own upstream."""
    config = next((c for c in upstreams_configured() if skill.upstream_url and c.url == skill.upstream_url), None)
    if config is None or not config.may_permit(skill.name):
        return False
    held = set(SkillVersion.objects.filter(skill=skill).values_list("version", flat=True))
    return _fetch(config, name=skill.name, spec=spec, held=held, key=(skill.name, spec))


def fetch_key(url: str, *key: str) -> str:
    """The cache key of one fetch (an upstream and a name, or a name and a spec)."""
    return "mirror:" + hashlib.sha256(repr((url, *key)).encode()).hexdigest()


def _fetch(config: UpstreamConfig, *, name: str, spec: str | None, held: set[str], key: tuple[str, ...]) -> bool:
    miss_key = fetch_key(config.url, *key)
    if (remembered := cache.get(miss_key)) is not None:
        if remembered:
            raise MirrorFailed(remembered, f"The last fetch of {name} from {config.url} failed; it is retried later.")
        return False
    # One fetch of a name at a time: a concurrent request waits for it and reads what it stored,
    # and two registries set as each other's upstreams do not ask each other round in a loop.
    in_flight = miss_key + ":in-flight"
    if not cache.add(in_flight, 1, settings.SKILLYARD_MIRROR_DEADLINE_SECONDS):
        _wait_while(in_flight)
        return True  # the caller reads again: what the other fetch stored, or its miss
    try:
        stored = _fetch_now(config, name=name, spec=spec, held=held)
    except MirrorFailed as exc:
        cache.set(miss_key, exc.code, settings.SKILLYARD_MIRROR_MISS_SECONDS)
        raise
    finally:
        cache.delete(in_flight)
    if not stored:
        cache.set(miss_key, "", settings.SKILLYARD_MIRROR_MISS_SECONDS)
    return stored


def _wait_while(key: str) -> None:
    deadline = time.monotonic() + settings.SKILLYARD_MIRROR_DEADLINE_SECONDS
    while cache.get(key) is not None and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)


def _fetch_now(config: UpstreamConfig, *, name: str, spec: str | None, held: set[str]) -> bool:
    upstream = upstream_client(url=config.url, kind=config.kind, limits=_limits())
    try:
        found = upstream.skill(name)
        wanted = _wanted(found, spec, held) if found and config.permits(name=name, owner=found.owner) else []
        return bool(wanted) and _store(config, upstream, name=name, versions=wanted)
    except (UpstreamError, MirrorFailed) as exc:
        code = exc.code if isinstance(exc, MirrorFailed) else f"mirror.{exc.code.removeprefix('upstream.')}"
        logger.warning("mirror: %s from %s failed: %s", name, config.url, exc)
        raise MirrorFailed(code, f"{name} from {config.url}: {exc.message}", getattr(exc, "errors", [])) from exc


def _limits() -> FetchLimits:
    return FetchLimits(
        timeout_seconds=settings.SKILLYARD_MIRROR_TIMEOUT_SECONDS,
        deadline_seconds=settings.SKILLYARD_MIRROR_DEADLINE_SECONDS,
        max_document_bytes=settings.SKILLYARD_MIRROR_MAX_DOCUMENT_BYTES,
        max_archive_bytes=settings.SKILLYARD_MAX_UPLOAD_BYTES,
    )


def _wanted(found: UpstreamSkill, spec: str | None, held: set[str]) -> list[UpstreamVersion]:
    """The upstream's default version and the one ``spec`` selects (yanked ones never), minus
    those held here already. An index entry without a version is its one version."""
    unnumbered = [v for v in found.versions if v.version is None]
    if unnumbered:
        return unnumbered[:1] if not held else []
    live = [v for v in found.versions if not v.yanked]
    rows = [{"version": v.version, "yanked": False} for v in live]
    picks = {resolve("latest", rows, dist_tags=found.dist_tags)}
    if spec:
        try:
            picks.add(resolve(spec, rows, dist_tags=found.dist_tags))
        except VersionSpecError:
            pass  # the local resolve answers it (version.spec_invalid)
    return [v for v in live if v.version in picks and v.version not in held]


def _store(config: UpstreamConfig, upstream: Upstream, *, name: str, versions: list[UpstreamVersion]) -> bool:
    actor = _mirror_actor(config)
    for wanted in versions:
        data = upstream.archive(wanted)
        origin = Origin(upstream_url=config.url, archive_url=wanted.url, sha256=wanted.sha256)
        version = _publish(actor, config, name=name, data=data, wanted=wanted, origin=origin)
        logger.info("mirror: stored %s %s from %s", name, version.version, wanted.url)
        _scan_now(version)
    return True


def _publish(
    actor: Actor, config: UpstreamConfig, *, name: str, data: bytes, wanted: UpstreamVersion, origin: Origin
) -> SkillVersion:
    """Through the one publish path (validation, name rules, immutability, checks, audit)."""
    number = wanted.version
    for _ in range(2):
        archive = io.BytesIO(data)
        try:
            return skill_version_publish(
                actor=actor,
                name=name,
                archive=archive,
                version=number,
                owner=config.owner,
                visibility=Visibility.PUBLIC,
                origin=origin,
            ).version
        except RegistryError as exc:
            if exc.code == "version.missing" and number is None:
                # An index entry and a SKILL.md without a version: numbered by its digest.
                number = f"0.0.0-sha256-{wanted.sha256[:12]}"
                continue
            raise MirrorFailed(f"mirror.{exc.code}", exc.message, exc.errors) from exc
    raise MirrorFailed("mirror.version.missing", f"{name} has no version upstream.")


def _scan_now(version: SkillVersion) -> None:
    """Run the scan now (the other checks run as for any publish), or wait for the run that
    holds it: an outside archive is judged before it is served."""
    from worker.tasks import run_check_now  # the worker's entry point, as the embedded pool calls it

    run_check_now(version.id, VersionCheck.Name.SCAN)
    finished = (VersionCheck.Status.DONE, VersionCheck.Status.ERROR, VersionCheck.Status.SKIPPED)
    scan = VersionCheck.objects.filter(version_id=version.id, name=VersionCheck.Name.SCAN, status__in=finished)
    deadline = time.monotonic() + settings.SKILLYARD_MIRROR_DEADLINE_SECONDS
    while not scan.exists() and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)


def _mirror_actor(config: UpstreamConfig) -> Actor:
    """The mirror service, owner of ``config.owner`` (made on first use). An owner of that name
    made by anyone else is refused: its members could publish into the mirrored names."""
    user, created = get_user_model().objects.get_or_create(username=MIRROR_USERNAME)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    owner = Owner.objects.filter(name=config.owner).first() or _mirror_owner_create(config.owner, user)
    members = set(Membership.objects.filter(owner=owner).values_list("user_id", "role"))
    if owner is None or owner.kind != Owner.Kind.ORG or members != {(user.id, Role.OWNER)}:
        raise MirrorFailed("mirror.owner_taken", f"The owner {config.owner!r} exists and is not the mirror's.")
    return Actor(user)


def _mirror_owner_create(name: str, user) -> Owner | None:  # noqa: ANN001
    try:
        with transaction.atomic():
            owner = Owner.objects.create(name=name, canonical_name=canonical_name(name), kind=Owner.Kind.ORG)
            Membership.objects.create(owner=owner, user=user, role=Role.OWNER)
            return owner
    except IntegrityError:  # a look-alike owner exists, or a concurrent first fetch made it
        return Owner.objects.filter(name=name).first()
