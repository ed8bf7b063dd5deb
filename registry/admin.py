"""Django admin for every registry model. Published things are read-only and never deleted here:
names and versions are immutable forever, so deletion goes through the services (soft delete)."""

from django.contrib import admin

from registry.models import AuditEvent, DistTag, Membership, Owner, Skill, SkillVersion, Token


class NoDelete(admin.ModelAdmin):
    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Owner)
class OwnerAdmin(NoDelete):
    list_display = ["name", "kind", "user", "created_at"]
    list_filter = ["kind"]
    search_fields = ["name"]
    readonly_fields = ["canonical_name", "created_at"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["owner", "user", "role", "created_at"]
    list_filter = ["role"]
    search_fields = ["owner__name", "user__username"]


class VersionInline(admin.TabularInline):
    model = SkillVersion
    extra = 0
    can_delete = False
    fields = ["version", "sha256", "size", "status", "yanked", "deprecated", "published_at", "downloads"]
    readonly_fields = fields
    show_change_link = True


@admin.register(Skill)
class SkillAdmin(NoDelete):
    list_display = ["name", "owner", "visibility", "downloads", "updated_at", "deleted_at"]
    list_filter = ["visibility"]
    search_fields = ["name", "description"]
    readonly_fields = ["name", "canonical_name", "owner", "downloads", "created_at", "updated_at", "deleted_at"]
    inlines = [VersionInline]


@admin.register(SkillVersion)
class SkillVersionAdmin(NoDelete):
    list_display = ["skill", "version", "status", "yanked", "size", "published_at", "downloads"]
    list_filter = ["status", "yanked"]
    search_fields = ["skill__name", "version", "sha256"]
    readonly_fields = [
        "skill",
        "version",
        "sha256",
        "size",
        "archive_key",
        "archive_kind",
        "manifest",
        "body",
        "files",
        "warnings",
        "status",
        "yanked",
        "yanked_reason",
        "deprecated",
        "downloads",
        "published_by",
        "published_at",
        "deleted_at",
    ]


@admin.register(DistTag)
class DistTagAdmin(admin.ModelAdmin):
    list_display = ["skill", "tag", "version", "updated_at"]
    search_fields = ["skill__name", "tag"]


@admin.register(Token)
class TokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "owner", "scope", "created_at", "expires_at", "last_used_at", "revoked_at"]
    list_filter = ["scope"]
    search_fields = ["prefix", "user__username", "name"]
    readonly_fields = ["prefix", "digest", "user", "owner", "scope", "created_at", "last_used_at"]


@admin.register(AuditEvent)
class AuditEventAdmin(NoDelete):
    list_display = ["created_at", "action", "actor", "owner", "skill", "version", "token_prefix"]
    list_filter = ["action"]
    search_fields = ["skill", "owner", "actor__username"]
    readonly_fields = ["created_at", "action", "actor", "token_prefix", "owner", "skill", "version", "data"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
