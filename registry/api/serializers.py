"""Request validation and response shapes (also the OpenAPI schema). No logic here."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse
from rest_framework import serializers

from registry import selectors, trust
from registry.models import AdvisorySeverity, Membership, Role, Skill, SkillVersion, Token, TokenScope, Visibility
from skillctl.format.limits import MAX_CHANGELOG_CHARS, MAX_REASON_CHARS


def absolute_url(request, path: str) -> str:
    """``SKILLYARD_PUBLIC_URL`` + path when configured, else from the Host Django accepted
    (ALLOWED_HOSTS never holds `*`); a bare path without a request."""
    if settings.SKILLYARD_PUBLIC_URL:
        return settings.SKILLYARD_PUBLIC_URL + path
    return request.build_absolute_uri(path) if request is not None else path


def download_url(request, sv: SkillVersion, name: str) -> str:
    return absolute_url(request, reverse("api:version-download", kwargs={"name": name, "version": sv.version}))


# --- requests ------------------------------------------------------------------------------
class PublishIn(serializers.Serializer):
    archive = serializers.FileField(help_text="The skill as .zip or .tar.gz.")
    version = serializers.CharField(required=False, allow_blank=True, help_text="Else SKILL.md's version.")
    owner = serializers.CharField(
        required=False, allow_blank=True, help_text="User or organisation; first publish only."
    )
    visibility = serializers.ChoiceField(choices=Visibility.choices, required=False, help_text="First publish only.")
    changelog = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=MAX_CHANGELOG_CHARS,
        help_text="Release notes (Markdown).",
    )


class YankIn(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=MAX_REASON_CHARS)


class DeprecateIn(serializers.Serializer):
    message = serializers.CharField(allow_blank=True, max_length=MAX_REASON_CHARS, help_text="Empty clears it.")


class DistTagIn(serializers.Serializer):
    version = serializers.CharField()


class OrgIn(serializers.Serializer):
    name = serializers.CharField(max_length=64)


class MemberIn(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=Role.choices)


class TokenIn(serializers.Serializer):
    scope = serializers.ChoiceField(choices=TokenScope.choices)
    owner = serializers.CharField(required=False, allow_blank=True, help_text="Limit the token to one owner.")
    name = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
    expires_days = serializers.IntegerField(required=False, min_value=1, max_value=3650)


# --- responses -----------------------------------------------------------------------------
# The read endpoints' shapes declare their fields instead of being ModelSerializers: building
# fields from the model on every request cost ~1 ms each, a third of a detail request.
class VersionOut(serializers.Serializer):
    version = serializers.CharField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    status = serializers.ChoiceField(choices=SkillVersion.Status.choices)
    yanked = serializers.BooleanField()
    yanked_reason = serializers.CharField()
    deprecated = serializers.CharField()
    published_at = serializers.DateTimeField()
    downloads = serializers.IntegerField()
    download_url = serializers.SerializerMethodField()
    scan_verdict = serializers.CharField(help_text="pass | review | warn | malicious; empty while pending")
    test_result = serializers.CharField(help_text="passed | failed | error | none; empty while pending")
    # Lets an installer skip the version-detail request when there is no manifest to fetch.
    has_routing_manifest = serializers.SerializerMethodField()
    labels = serializers.SerializerMethodField(
        help_text="Every mark of the version, worst first: {kind, level, text}; kind is malicious | warn | "
        "review | tests_failed | tests_error | yanked | deprecated (registry/trust.py)"
    )

    def get_download_url(self, sv: SkillVersion) -> str:
        return download_url(self.context.get("request"), sv, self.context["skill_name"])

    def get_has_routing_manifest(self, sv: SkillVersion) -> bool:
        return selectors.skill_version_routing_manifest(version=sv) is not None

    def get_labels(self, sv: SkillVersion) -> list[dict[str, str]]:
        return [label.to_dict() for label in trust.version_labels(sv)]


class VersionDetailOut(VersionOut):
    name = serializers.CharField(source="skill.name")
    published_by = serializers.CharField(source="published_by.username", default=None)
    manifest = serializers.JSONField()
    body = serializers.CharField()
    files = serializers.JSONField()
    warnings = serializers.JSONField()
    changelog = serializers.CharField(help_text="The author's release notes (Markdown); empty when none")
    routing_manifest = serializers.SerializerMethodField()
    checks = serializers.SerializerMethodField(help_text="scan, manifest and tests: status, times, results")

    def get_routing_manifest(self, sv) -> dict | None:
        return selectors.skill_version_routing_manifest(version=sv)

    def get_checks(self, sv) -> dict:
        return selectors.skill_version_checks(version=sv)


class RoutingManifestOut(serializers.Serializer):
    name = serializers.CharField()
    version = serializers.CharField()
    routing_manifest = serializers.JSONField(allow_null=True, help_text="null until the manifest check is done")


class RoutingManifestsOut(serializers.Serializer):
    manifests = RoutingManifestOut(many=True)


class SkillOut(serializers.Serializer):
    name = serializers.CharField()
    owner = serializers.CharField(source="owner.name")
    visibility = serializers.ChoiceField(choices=Visibility.choices)
    description = serializers.CharField()
    category = serializers.CharField()
    tags = serializers.JSONField()
    downloads = serializers.IntegerField()
    scan_verdict = serializers.CharField(help_text="The default version's scan verdict; empty while pending")
    test_result = serializers.CharField(help_text="The default version's test result; empty while pending")
    latest_version = serializers.SerializerMethodField()
    deprecated = serializers.SerializerMethodField(help_text="The default version's deprecation message, or empty")
    labels = serializers.SerializerMethodField(help_text="The default version's marks (see a version's labels)")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    def get_latest_version(self, skill: Skill) -> str | None:
        return self.context.get("latest", {}).get(skill.id)

    def get_deprecated(self, skill: Skill) -> str:
        return self.context.get("deprecated", {}).get(skill.id, "")

    def get_labels(self, skill: Skill) -> list[dict[str, str]]:
        found = trust.labels(
            scan_verdict=skill.scan_verdict, test_result=skill.test_result, deprecated=self.get_deprecated(skill)
        )
        return [label.to_dict() for label in found]


class SkillDetailOut(SkillOut):
    dist_tags = serializers.SerializerMethodField()
    versions = serializers.SerializerMethodField()

    def get_latest_version(self, skill: Skill) -> str | None:
        return self.context["dist_tags"].get("latest")

    def get_dist_tags(self, skill: Skill) -> dict[str, str]:
        return self.context["dist_tags"]

    def get_deprecated(self, skill: Skill) -> str:
        latest = self.get_latest_version(skill)
        return next((v.deprecated for v in self.context["versions"] if v.version == latest), "")

    def get_versions(self, skill: Skill) -> list[dict]:
        context = {**self.context, "skill_name": skill.name}
        # many=True makes a ListSerializer, whose data is a list; the stubs keep VersionOut's dict.
        return VersionOut(self.context["versions"], many=True, context=context).data  # type: ignore[return-value]


class TokenOut(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.name", default=None)

    class Meta:
        model = Token
        fields = ["id", "name", "prefix", "scope", "owner", "created_at", "expires_at", "last_used_at", "revoked_at"]


class TokenCreatedOut(TokenOut):
    token = serializers.SerializerMethodField(help_text="The secret: shown once, never again.")

    class Meta(TokenOut.Meta):
        fields = [*TokenOut.Meta.fields, "token"]

    def get_token(self, token) -> str:
        return self.context["secret"]


class MemberOut(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")

    class Meta:
        model = Membership
        fields = ["username", "role", "source", "created_at"]


class MembershipOut(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.name")
    kind = serializers.CharField(source="owner.kind")

    class Meta:
        model = Membership
        fields = ["owner", "kind", "role"]


# --- advisories and audit (registry/api/advisories.py) ----------------------------------------
class AdvisoryIn(serializers.Serializer):
    summary = serializers.CharField(max_length=200, help_text="One line.")
    details = serializers.CharField(required=False, allow_blank=True, default="", help_text="Markdown.")
    # Checked by the service (advisory.severity_invalid), the same code for the API and the catalog.
    severity = serializers.CharField(max_length=16, help_text=" | ".join(AdvisorySeverity.values))
    affected = serializers.CharField(max_length=200, help_text="A version range: 1.2.3, ^1.2, >=1.0,<1.4, 1.x, *")
    aliases = serializers.ListField(child=serializers.CharField(max_length=100), required=False, default=list)


class OsvPackageOut(serializers.Serializer):
    ecosystem = serializers.CharField(help_text="Skillyard")
    name = serializers.CharField()


class OsvRangeOut(serializers.Serializer):
    type = serializers.CharField(help_text="SEMVER")
    events = serializers.ListField(
        child=serializers.DictField(child=serializers.CharField()),
        help_text="introduced, then fixed (exclusive) or last_affected (inclusive); one interval per range",
    )


class OsvAffectedOut(serializers.Serializer):
    package = OsvPackageOut()
    ranges = OsvRangeOut(many=True)
    versions = serializers.ListField(
        child=serializers.CharField(), help_text="Every published version the range matches: the authority"
    )
    database_specific = serializers.DictField(help_text='{"affected_range": the range as filed}')


class OsvOut(serializers.Serializer):
    """An OSV 1.6 object (https://ossf.github.io/osv-schema/)."""

    schema_version = serializers.CharField()
    id = serializers.CharField(help_text="SKY-<year>-<sequence>")
    modified = serializers.CharField(help_text="RFC 3339, UTC; moves when a new version joins `versions`")
    published = serializers.CharField()
    withdrawn = serializers.CharField(required=False, help_text="Set once withdrawn; the id stays")
    aliases = serializers.ListField(child=serializers.CharField())
    summary = serializers.CharField()
    details = serializers.CharField()
    affected = OsvAffectedOut(many=True)
    database_specific = serializers.DictField(help_text='{"severity": "low|medium|high|critical"}')
    references = serializers.ListField(child=serializers.DictField(), required=False)


class AdvisoryListOut(serializers.Serializer):
    advisories = OsvOut(many=True)


class AuditSkillIn(serializers.Serializer):
    name = serializers.CharField(max_length=64)
    version = serializers.CharField(max_length=128)
    range = serializers.CharField(
        max_length=200, required=False, allow_blank=True, help_text="the project's range (skills.toml), e.g. ^1.2"
    )


class AuditIn(serializers.Serializer):
    skills = AuditSkillIn(many=True, help_text="The installed versions, at most 500")


class AuditResultOut(serializers.Serializer):
    name = serializers.CharField()
    version = serializers.CharField()
    found = serializers.BooleanField(help_text="false: no such version, or a skill the caller may not see")
    scan_verdict = serializers.CharField(required=False, help_text="pass | review | warn | malicious; empty: pending")
    scan_findings = serializers.ListField(child=serializers.DictField(), required=False, help_text="for warn only")
    test_result = serializers.CharField(required=False, help_text="passed | failed | error | none; empty: pending")
    test_summary = serializers.CharField(required=False, help_text="failed or error: what failed")
    yanked = serializers.BooleanField(required=False)
    yanked_reason = serializers.CharField(required=False)
    deprecated = serializers.CharField(required=False, help_text="the message; empty: not deprecated")
    advisories = OsvOut(many=True, required=False, help_text="open advisories holding this version")
    latest_clean = serializers.CharField(
        required=False,
        allow_null=True,
        help_text="highest version not yanked, not malicious, not deprecated, under no open advisory",
    )
    latest_clean_in_range = serializers.CharField(
        required=False, allow_null=True, help_text="the same within the range asked with (only when one was)"
    )


class AuditOut(serializers.Serializer):
    as_of = serializers.CharField(help_text="RFC 3339: when the registry answered")
    results = AuditResultOut(many=True)
