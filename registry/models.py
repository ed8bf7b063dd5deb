"""Registry models: each states facts about one row. Rules live in services and selectors.

Owners are a namespace shared by users and organisations, so a skill, a membership and a token
scope all point at one kind of thing. Nothing published is ever hard-deleted: skills and
versions are marked deleted and keep their names (DESIGN §5: immutable forever).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.db.models import Exists, OuterRef, Q

from skillctl.format.limits import MAX_REASON_CHARS

MAX_OWNER_DESCRIPTION = 500  # a paragraph: the owner page and the publishers index show it whole

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


class Role(models.TextChoices):
    OWNER = "owner"
    ADMIN = "admin"
    PUBLISHER = "publisher"
    READER = "reader"


class Visibility(models.TextChoices):
    PUBLIC = "public"
    PRIVATE = "private"


class TokenScope(models.TextChoices):
    READ = "read"
    PUBLISH = "publish"
    ADMIN = "admin"


class Owner(models.Model):
    """A user's personal namespace or an organisation."""

    class Kind(models.TextChoices):
        USER = "user"
        ORG = "org"

    name = models.CharField(max_length=64, unique=True)
    canonical_name = models.CharField(max_length=64, unique=True)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="owner"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Who they are, in a paragraph on their page and the publishers index (plain text).
    description = models.CharField(max_length=MAX_OWNER_DESCRIPTION, blank=True, default="")

    def __str__(self) -> str:
        return self.name


class MembershipSource(models.TextChoices):
    MANUAL = "manual"  # added by a person or a service call: single sign-on never touches it
    SSO = "sso"  # follows the groups claim at each single sign-on (registry/sso.py)


class Membership(models.Model):
    owner = models.ForeignKey(Owner, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    source = models.CharField(max_length=8, choices=MembershipSource.choices, default=MembershipSource.MANUAL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "user"], name="membership_unique")]

    def __str__(self) -> str:
        return f"{self.user} {self.role} of {self.owner}"


def member_owner_ids(user: User | AnonymousUser | None, token: Token | None = None) -> models.QuerySet | None:
    """The owners the caller acts for as a member (a token scoped to one owner: that one only);
    None for an anonymous caller."""
    if user is None or not user.is_authenticated:
        return None
    owners = Membership.objects.filter(user=user).values("owner_id")
    if token is not None and token.owner_id is not None:
        owners = owners.filter(owner_id=token.owner_id)
    return owners


class SkillQuerySet(models.QuerySet["Skill"]):
    def live(self) -> SkillQuerySet:
        return self.filter(deleted_at__isnull=True)

    def visible_to(
        self, user: User | AnonymousUser | None, token: Token | None = None, *, include_blocked: bool = False
    ) -> SkillQuerySet:
        """The one visibility rule: public skills, plus private ones of the caller's owners;
        minus, for anyone but the owner's members, a skill whose every version the scan found
        malicious (it does not exist for them: DESIGN §13). ``include_blocked`` keeps those (an
        audit must tell people who installed a version that it is now blocked).

        A token scoped to one owner sees only that owner's private skills, even when its user
        belongs to others too.
        """
        rule = Q(visibility=Visibility.PUBLIC)
        owners = member_owner_ids(user, token)
        if owners is not None:
            rule |= Q(owner_id__in=owners)
        skills = self.live().filter(rule)
        if include_blocked:
            return skills
        versions = SkillVersion.objects.live().filter(skill_id=OuterRef("pk"))
        blocked = Q(Exists(versions.filter(scan_verdict="malicious"))) & ~Q(
            Exists(versions.exclude(scan_verdict="malicious"))
        )
        if owners is not None:
            blocked &= ~Q(owner_id__in=owners)
        return skills.exclude(blocked)


class Skill(models.Model):
    name = models.CharField(max_length=64, unique=True)
    # The confusable form (registry/names.py); unique so no two owners hold look-alike names.
    canonical_name = models.CharField(max_length=64, unique=True)
    owner = models.ForeignKey(Owner, on_delete=models.PROTECT, related_name="skills")
    visibility = models.CharField(max_length=8, choices=Visibility.choices, default=Visibility.PUBLIC)
    description = models.TextField(blank=True)  # of the default version, for list and search (services.summary)
    category = models.CharField(max_length=64, blank=True)
    tags = models.JSONField(default=list, blank=True)
    tags_index = models.CharField(max_length=1024, blank=True)  # ",a,b," — portable tag filter
    # The default version's check results, for list and detail (services.summary); "" = pending.
    scan_verdict = models.CharField(max_length=16, blank=True)
    test_result = models.CharField(max_length=16, blank=True)
    downloads = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    deleted_at = models.DateTimeField(null=True, blank=True)
    # The upstream registry this skill is mirrored from (registry/mirrors.py); "" = hosted here.
    upstream_url = models.CharField(max_length=512, blank=True, default="")

    objects = SkillQuerySet.as_manager()

    class Meta:
        # The list's default order (most downloaded first): a page is read off the index
        # instead of sorting every visible skill per request.
        indexes = [
            models.Index(fields=["-downloads", "name"], name="skill_popular"),
            # The answer cache reads max(updated_at) once a second per web process (respcache).
            models.Index(fields=["updated_at"], name="skill_updated"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_private(self) -> bool:
        return self.visibility == Visibility.PRIVATE


class SkillVersionQuerySet(models.QuerySet["SkillVersion"]):
    def live(self) -> SkillVersionQuerySet:
        return self.filter(deleted_at__isnull=True)


class SkillVersion(models.Model):
    class Status(models.TextChoices):
        PUBLISHED = "published"
        DELETED = "deleted"

    skill = models.ForeignKey(Skill, on_delete=models.PROTECT, related_name="versions")
    version = models.CharField(max_length=128)
    sha256 = models.CharField(max_length=64)
    size = models.BigIntegerField()
    archive_key = models.CharField(max_length=255)
    archive_kind = models.CharField(max_length=8)  # zip | tar.gz
    manifest = models.JSONField(default=dict)
    body = models.TextField(blank=True)
    files = models.JSONField(default=list)  # [{path, size, sha256}]
    warnings = models.JSONField(default=list)  # [{code, message, path}] from validation
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PUBLISHED)
    yanked = models.BooleanField(default=False)
    yanked_reason = models.CharField(max_length=MAX_REASON_CHARS, blank=True)
    deprecated = models.CharField(max_length=MAX_REASON_CHARS, blank=True)  # the message; empty = not deprecated
    changelog = models.TextField(blank=True)  # the author's release notes (Markdown), set at publish
    downloads = models.BigIntegerField(default=0)
    published_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    published_at = models.DateTimeField(auto_now_add=True)
    deleted_at = models.DateTimeField(null=True, blank=True)
    # Copies of the publish checks' outcomes (VersionCheck holds the details): read on every
    # listing and download, so kept on the row. "" = not known yet.
    scan_verdict = models.CharField(max_length=16, blank=True)  # pass | review | warn | malicious
    test_result = models.CharField(max_length=16, blank=True)  # passed | failed | error | none
    routing_manifest = models.JSONField(null=True, blank=True)  # the manifest check's fields
    # The manifest check's semantic centroid of routing_manifest (float32 bytes, normalised), for
    # catalog search; None without the semantic extra. Encoding takes ~10 ms a skill, so never
    # on a request: computed by the worker, stored here.
    routing_vector = models.BinaryField(null=True, editable=False)
    # The embedder that made it (semantic.MODEL_ID): a vector of another model is not compared
    # with this one's queries (`rerun_checks --vectors` makes it again). "" = made before the model
    # was recorded: used when its size fits.
    routing_vector_model = models.CharField(max_length=200, blank=True, editable=False)
    checks_state = models.JSONField(default=dict, blank=True)  # {name: API shape}: the detail's `checks`
    # Where a mirrored version came from: the archive's URL and the sha256 the upstream announced
    # for it (checked before it was stored). "" = published here.
    upstream_url = models.CharField(max_length=1024, blank=True, default="")
    upstream_sha256 = models.CharField(max_length=64, blank=True, default="")

    objects = SkillVersionQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["skill", "version"], name="skill_version_unique")]

    def __str__(self) -> str:
        return f"{self.skill.name}@{self.version}"


class VersionCheck(models.Model):
    """One publish check of one version (DESIGN §9): its state and what it found."""

    class Name(models.TextChoices):
        SCAN = "scan"
        MANIFEST = "manifest"
        TESTS = "tests"

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        ERROR = "error"
        SKIPPED = "skipped"

    version = models.ForeignKey(SkillVersion, on_delete=models.CASCADE, related_name="checks")
    name = models.CharField(max_length=16, choices=Name.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # The run that holds the check while it is running (a Celery task id, kept by its retries
    # and redeliveries); only that run may record the outcome.
    run_id = models.CharField(max_length=64, blank=True, default="")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["version", "name"], name="version_check_unique")]
        indexes = [
            models.Index(fields=["status", "started_at"], name="check_status"),
            # The answer cache reads max(updated_at) once a second per web process (respcache).
            models.Index(fields=["updated_at"], name="check_updated"),
        ]

    def __str__(self) -> str:
        return f"{self.version_id}:{self.name}={self.status}"


class DistTag(models.Model):
    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="dist_tags")
    tag = models.CharField(max_length=64)
    version = models.ForeignKey(SkillVersion, on_delete=models.CASCADE, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["skill", "tag"], name="dist_tag_unique")]


class Token(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tokens")
    owner = models.ForeignKey(  # null: every owner the user belongs to
        Owner, null=True, blank=True, on_delete=models.CASCADE, related_name="tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    scope = models.CharField(max_length=8, choices=TokenScope.choices)
    prefix = models.CharField(max_length=16)  # shown in listings so users can tell tokens apart
    digest = models.CharField(max_length=64, unique=True)  # sha256 of the secret, never the secret
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.scope}, {self.user})"


class AuditEvent(models.Model):
    action = models.CharField(max_length=40)  # "version.publish", "token.create", ...
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    token_prefix = models.CharField(max_length=16, blank=True)
    owner = models.CharField(max_length=64, blank=True)
    skill = models.CharField(max_length=64, blank=True)
    version = models.CharField(max_length=128, blank=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return (
            f"{self.created_at:%Y-%m-%d %H:%M} {self.action} {self.skill}{'@' + self.version if self.version else ''}"
        )


class AdvisorySeverity(models.TextChoices):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


class Advisory(models.Model):
    """A security advisory on one skill: what is wrong and which versions (a range in skillctl's
    syntax). Served as an OSV 1.6 object (registry/osv.py). Never deleted: a withdrawn advisory
    keeps its id, with ``withdrawn_at`` set."""

    osv_id = models.CharField(max_length=32, unique=True)  # SKY-<year>-<sequence of 4+ digits>
    year = models.PositiveIntegerField()
    sequence = models.PositiveIntegerField()
    skill = models.ForeignKey(Skill, on_delete=models.PROTECT, related_name="advisories")
    summary = models.CharField(max_length=200)
    details = models.TextField(blank=True)
    severity = models.CharField(max_length=16, choices=AdvisorySeverity.choices)
    affected = models.CharField(max_length=200)  # a version range, e.g. "^1.2" or ">=1.0,<1.4"
    aliases = models.JSONField(default=list, blank=True)
    filed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    published_at = models.DateTimeField()
    modified_at = models.DateTimeField(db_index=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # Two filings at once may pick the same next number; the second retries (services.advisories).
        constraints = [models.UniqueConstraint(fields=["year", "sequence"], name="advisory_sequence_unique")]

    def __str__(self) -> str:
        return self.osv_id


class CheckHistory(models.Model):
    """One finished run of a publish check, kept when the check runs again (a rescan after the
    scanner's rules changed): the version's history of verdicts, each with the rules that gave it."""

    version = models.ForeignKey(SkillVersion, on_delete=models.CASCADE, related_name="check_history")
    name = models.CharField(max_length=16, choices=VersionCheck.Name.choices)
    status = models.CharField(max_length=16, choices=VersionCheck.Status.choices)
    outcome = models.CharField(max_length=16, blank=True)  # the scan's verdict, the tests' result
    rules_version = models.CharField(max_length=32, blank=True)  # the scanner's rule set; "" before it had one
    finished_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["version", "name", "-finished_at"], name="check_history_recent")]

    def __str__(self) -> str:
        return f"{self.version_id}:{self.name}={self.outcome or self.status}@{self.rules_version}"


class SsoIdentity(models.Model):
    """The OpenID provider's name for a user: issuer and subject, which never change (an email or
    a preferred username may be reassigned to someone else, so neither identifies anyone)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identity")
    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)
    last_sign_in_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="sso_identity_unique")]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"
