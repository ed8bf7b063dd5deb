"""Advisories (OSV 1.6 objects) per skill and as a feed, and the batched audit ``skillctl audit`` asks."""

from __future__ import annotations

from datetime import UTC, datetime

from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from registry import selectors, services
from registry.api.authentication import request_actor
from registry.api.serializers import AdvisoryIn, AdvisoryListOut, AuditIn, AuditOut, OsvOut, absolute_url
from registry.audit_report import audit_report
from registry.errors import BadRequest, Invalid
from registry.models import Advisory
from registry.osv import osv_timestamp

# Entries per audit request: a project's lock file fits many times over, and the answer (with its
# OSV objects) stays a few hundred kilobytes at most.
MAX_AUDIT_ENTRIES = 500


def _osv(request, advisories: list[Advisory]) -> list[dict]:
    def url(advisory: Advisory) -> str:
        return absolute_url(request, reverse("catalog:advisory", kwargs={"osv_id": advisory.osv_id}))

    return selectors.advisories_osv(advisories=advisories, url=url)


class SkillAdvisories(APIView):
    @extend_schema(responses=AdvisoryListOut)
    def get(self, request, name: str):
        """A skill's advisories, newest first (withdrawn ones too, with ``withdrawn`` set)."""
        skill = selectors.skill_get_visible(actor=request_actor(request), name=name)
        advisories = selectors.advisory_list_for_skill(skill=skill)
        return Response({"advisories": _osv(request, advisories)})

    @extend_schema(
        request=AdvisoryIn,
        responses={201: OsvOut, 403: OpenApiResponse(description="Not a publisher of the skill, nor staff")},
    )
    def post(self, request, name: str):
        """File an advisory (the skill's publishers with a publish or admin token, or staff)."""
        form = AdvisoryIn(data=request.data)
        form.is_valid(raise_exception=True)
        advisory = services.advisory_create(actor=request_actor(request), name=name, **form.validated_data)
        return Response(_osv(request, [advisory])[0], status=status.HTTP_201_CREATED)


class AdvisoryFeed(APIView):
    @extend_schema(
        operation_id="advisories_feed",
        parameters=[OpenApiParameter("since", str, description="RFC 3339: only advisories modified since")],
        responses=AdvisoryListOut,
    )
    def get(self, request):
        """Every advisory the caller may see (public skills, and its own private ones), oldest
        change first: keep the newest ``modified`` seen and ask ``since`` it next time."""
        since = _since(request.query_params.get("since", ""))
        pairs = selectors.advisory_feed(actor=request_actor(request), since=since)
        return Response({"advisories": _osv(request, [a for a, _ in pairs])})


def _since(text: str) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("z", "Z"))
    except ValueError:
        raise BadRequest("advisory.since_invalid", "`since` is an RFC 3339 time: 2026-11-28T10:00:00Z.") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class AdvisoryDetail(APIView):
    @extend_schema(operation_id="advisory_retrieve", responses=OsvOut)
    def get(self, request, osv_id: str):
        """One advisory as an OSV 1.6 object (404 unless the caller may see its skill)."""
        advisory = selectors.advisory_get_visible(actor=request_actor(request), osv_id=osv_id)
        return Response(_osv(request, [advisory])[0])


class AdvisoryWithdraw(APIView):
    @extend_schema(request=None, responses=OsvOut)
    def post(self, request, osv_id: str):
        """Withdraw an advisory (same rights as filing it); it keeps its id, with ``withdrawn`` set."""
        advisory = services.advisory_withdraw(actor=request_actor(request), osv_id=osv_id)
        return Response(_osv(request, [advisory])[0])


class Audit(APIView):
    @extend_schema(
        request=AuditIn,
        responses={200: AuditOut, 422: OpenApiResponse(description=f"audit.too_many: over {MAX_AUDIT_ENTRIES}")},
    )
    def post(self, request):
        """What the registry knows now about installed versions: scan verdict (malicious ones
        are named to anyone who names them), failed tests, yank, deprecation, open advisories,
        and the highest clean version. Anonymous works; a token adds its private skills."""
        skills = request.data.get("skills") if isinstance(request.data, dict) else None
        if isinstance(skills, list) and len(skills) > MAX_AUDIT_ENTRIES:
            raise Invalid("audit.too_many", f"Ask about at most {MAX_AUDIT_ENTRIES} versions per request.")
        form = AuditIn(data=request.data)
        form.is_valid(raise_exception=True)
        entries = [(s["name"], s["version"]) for s in form.validated_data["skills"]]
        ranges = {s["name"]: s["range"] for s in form.validated_data["skills"] if s.get("range")}
        as_of = osv_timestamp(timezone.now())
        results = audit_report(actor=request_actor(request), entries=entries, ranges=ranges)
        return Response({"as_of": as_of, "results": results})
