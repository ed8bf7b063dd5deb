"""``GET /skills/{name}/diff/{from}/{to}``: what changed between two versions, as the catalog's
compare page shows it (registry/diff.py), for ``skillctl outdated --diff`` and ``update --dry-run
--diff``."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from registry import selectors, trust
from registry.api.authentication import request_actor
from registry.diff import Concern, FileStatus, compare_visible


class FileDiffOut(serializers.Serializer):
    path = serializers.CharField()
    # Text, not a choice field: the schema has other enums named "status" (their names would collide).
    status = serializers.CharField(help_text=" | ".join(s.value for s in FileStatus))
    size_from = serializers.IntegerField(allow_null=True)
    size_to = serializers.IntegerField(allow_null=True)
    binary = serializers.BooleanField(help_text="not UTF-8 text: no diff")
    too_large = serializers.BooleanField(help_text="too large to compare line by line: no diff")
    truncated = serializers.BooleanField(help_text="the diff was cut after its first lines")
    diff = serializers.CharField(help_text="unified diff (diff -u) of a text file")


class FrontmatterChangeOut(serializers.Serializer):
    field = serializers.CharField(help_text="dotted manifest path: requires.bins, mcp.command, ...")
    concern = serializers.ChoiceField(choices=[c.value for c in Concern])
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)


class DiffSideOut(serializers.Serializer):
    version = serializers.CharField()
    checks = serializers.DictField(help_text="the version's checks, as in the version detail")
    labels = serializers.ListField(child=serializers.DictField())


class VersionDiffOut(serializers.Serializer):
    def get_fields(self) -> dict:  # ``from`` is a Python keyword: no class attribute can hold it
        return {
            "skill": serializers.CharField(),
            "from": DiffSideOut(),
            "to": DiffSideOut(),
            "files": FileDiffOut(many=True),
            "frontmatter": FrontmatterChangeOut(many=True),
            "unchanged": serializers.IntegerField(help_text="files identical in both versions"),
        }


EXAMPLE = {
    "skill": "pdf-tools",
    "from": {"version": "1.0.0", "checks": {"scan": {"status": "done", "verdict": "pass"}}, "labels": []},
    "to": {"version": "1.1.0", "checks": {"scan": {"status": "done", "verdict": "pass"}}, "labels": []},
    "files": [
        {
            "path": "scripts/rotate.py",
            "status": "changed",
            "size_from": 120,
            "size_to": 131,
            "binary": False,
            "too_large": False,
            "truncated": False,
            "diff": "--- a/scripts/rotate.py\n+++ b/scripts/rotate.py\n@@ -1 +1 @@\n-print(90)\n+print(180)\n",
        }
    ],
    "frontmatter": [{"field": "requires.bins", "concern": "requirements", "before": ["qpdf"], "after": ["qpdf", "gs"]}],
    "unchanged": 3,
}


class VersionDiffView(APIView):
    @extend_schema(
        operation_id="skill_version_diff",
        responses=VersionDiffOut,
        examples=[OpenApiExample("two versions of a skill", value=EXAMPLE, response_only=True)],
    )
    def get(self, request, name: str, old: str, new: str):
        """What changed from one version to another: files added, removed and changed (a unified
        diff of each text file), frontmatter fields (``concern`` says which change what the skill
        may do or needs), and both versions' checks. Both must be visible to the caller."""
        compared = compare_visible(actor=request_actor(request), name=name, from_version=old, to_version=new)
        body = {
            "skill": compared.new.skill.name,
            "from": _side(compared.old),
            "to": _side(compared.new),
            **compared.diff.to_dict(),
        }
        return Response(body)


def _side(sv) -> dict:  # noqa: ANN001
    return {
        "version": sv.version,
        "checks": selectors.skill_version_checks(version=sv),
        "labels": [label.to_dict() for label in trust.version_labels(sv)],
    }
