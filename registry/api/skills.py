"""Skills and versions: list, detail, publish, yank, deprecate, dist-tags, delete (downloads:
registry/api/downloads.py)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from registry import mirrors, respcache, search, selectors, services
from registry.api.authentication import request_actor
from registry.api.pagination import Pagination
from registry.api.serializers import (
    DeprecateIn,
    DistTagIn,
    PublishIn,
    RoutingManifestsOut,
    SkillDetailOut,
    SkillOut,
    VersionDetailOut,
    VersionOut,
    YankIn,
    absolute_url,
)
from registry.api.throttling import AnonThrottle, PublishThrottle, UserThrottle
from registry.errors import Invalid


class SkillList(APIView):
    @extend_schema(
        parameters=[OpenApiParameter(p, str) for p in ("q", "owner", "category", "tag")]
        + [OpenApiParameter("sort", str, enum=list(search.SORTS))]
        + [OpenApiParameter("page", int), OpenApiParameter("page_size", int)],
        responses=SkillOut(many=True),
    )
    @respcache.cached_for_anonymous
    def get(self, request):
        """List, or search with ``q`` as the catalog does (registry/search.py: the routing
        engine's ranking, an exact name first); each search result carries ``match``
        (``strength`` strong|weak, ``score``)."""
        params = {k: request.query_params.get(k, "") for k in ("q", "owner", "category", "tag", "sort")}
        skills = search.skill_search(actor=request_actor(request), **params)
        paginator = Pagination()
        page = paginator.paginate_queryset(skills, request, view=self)
        latest = selectors.skill_latest_versions(skill_ids=[s.id for s in page])
        notes = selectors.skill_default_deprecations(latest=latest)
        data = SkillOut(page, many=True, context={"request": request, "latest": latest, "deprecated": notes}).data
        if isinstance(skills, search.Ranked):
            data = [{**row, "match": skill.match.to_dict()} for row, skill in zip(data, page, strict=True)]
        return paginator.get_paginated_response(data)


class SkillDetail(APIView):
    @extend_schema(responses=SkillDetailOut)
    @respcache.cached_for_anonymous
    def get(self, request, name: str):
        """A skill with its dist-tags and versions (highest first); ``origin``: the upstream a
        mirrored skill came from (registry/mirrors.py), null for a skill hosted here."""
        actor = request_actor(request)
        skill = mirrors.skill_get_visible_or_mirrored(actor=actor, name=name)
        versions = selectors.skill_versions(skill=skill, actor=actor)
        context = {
            "request": request,
            "versions": versions,
            "dist_tags": selectors.skill_dist_tags(skill=skill, versions=versions),
        }
        origin = {"upstream": skill.upstream_url} if skill.upstream_url else None
        return Response({**SkillDetailOut(skill, context=context).data, "origin": origin})

    @extend_schema(responses={204: None})
    def delete(self, request, name: str):
        """Delete a skill (admin). Its name stays reserved forever."""
        services.skill_delete(actor=request_actor(request), name=name)
        return Response(status=status.HTTP_204_NO_CONTENT)


class VersionList(APIView):
    def get_throttles(self):
        if self.request.method == "POST":
            return [AnonThrottle(), UserThrottle(), PublishThrottle()]
        return super().get_throttles()

    @extend_schema(responses=VersionOut(many=True))
    @respcache.cached_for_anonymous
    def get(self, request, name: str):
        """A skill's versions, highest first, with their status, checks and download counts."""
        actor = request_actor(request)
        skill = selectors.skill_get_visible(actor=actor, name=name)
        versions = selectors.skill_versions(skill=skill, actor=actor)
        return Response(VersionOut(versions, many=True, context={"request": request, "skill_name": name}).data)

    @extend_schema(
        request={"multipart/form-data": PublishIn},
        responses={
            201: VersionDetailOut,
            200: VersionDetailOut,
            409: OpenApiResponse(description="Same version, other bytes"),
            413: OpenApiResponse(description="Too large"),
            422: OpenApiResponse(description="Every finding"),
        },
    )
    def post(self, request, name: str):
        """Publish a version: 201; identical bytes again 200; other bytes 409; invalid 422."""
        services.skill_version_upload_check(declared_bytes=_content_length(request))
        form = PublishIn(data=request.data)
        form.is_valid(raise_exception=True)
        result = services.skill_version_publish(
            actor=request_actor(request),
            name=name,
            archive=form.validated_data["archive"],
            version=form.validated_data.get("version") or None,
            owner=form.validated_data.get("owner") or None,
            visibility=form.validated_data.get("visibility") or None,
            changelog=form.validated_data.get("changelog") or "",
        )
        body = VersionDetailOut(result.version, context={"request": request, "skill_name": name}).data
        response = Response(body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)
        response["Location"] = absolute_url(request, request.path + "/" + result.version.version)
        return response


def _content_length(request) -> int | None:
    try:
        return int(request.META.get("CONTENT_LENGTH") or "")
    except ValueError:
        return None


class VersionDetail(APIView):
    @extend_schema(responses=VersionDetailOut)
    @respcache.cached_for_anonymous
    def get(self, request, name: str, version: str):
        """A version: manifest, body, files with sha256, warnings, and (later) scan and tests."""
        sv = selectors.skill_version_get_visible(actor=request_actor(request), name=name, version=version)
        return Response(VersionDetailOut(sv, context={"request": request, "skill_name": name}).data)

    @extend_schema(responses={204: None})
    def delete(self, request, name: str, version: str):
        """Delete a version (admin). Its number is never reusable."""
        services.skill_version_delete(actor=request_actor(request), name=name, version=version)
        return Response(status=status.HTTP_204_NO_CONTENT)


# Versions per routing-manifests request: an install of this many skills is one request, and
# the query string stays under the 8 KB request lines servers and proxies accept by default.
MAX_MANIFEST_BATCH = 50


class RoutingManifests(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("v", str, many=True, description=f"name@version, repeated (at most {MAX_MANIFEST_BATCH})")
        ],
        responses=RoutingManifestsOut,
    )
    def get(self, request):
        """The routing manifests of many versions at once (what an installer saves for each
        skill it placed): one request instead of a version detail per skill. Versions the
        caller may not see, or that do not exist, are left out; ``null``: none yet."""
        specs = request.query_params.getlist("v")
        if len(specs) > MAX_MANIFEST_BATCH:
            raise Invalid("manifests.too_many", f"Ask for at most {MAX_MANIFEST_BATCH} versions per request.")
        pairs = [_name_at_version(spec) for spec in dict.fromkeys(specs)]
        found = selectors.routing_manifests_visible(actor=request_actor(request), pairs=pairs)
        manifests = [{"name": n, "version": v, "routing_manifest": found[n, v]} for n, v in pairs if (n, v) in found]
        return Response(RoutingManifestsOut({"manifests": manifests}).data)


def _name_at_version(spec: str) -> tuple[str, str]:
    name, at, version = spec.partition("@")
    if not (name and at and version):
        raise Invalid("manifests.invalid_spec", f"{spec[:200]!r} is not name@version.")
    return name, version


class CheckRerun(APIView):
    @extend_schema(
        request=None,
        responses={
            202: inline_serializer(
                "CheckRerunOut", {"check": serializers.CharField(), "status": serializers.CharField()}
            )
        },
    )
    def post(self, request, name: str, version: str, check: str):
        """Run a check again (owners and publishers of the skill)."""
        actor = request_actor(request)
        sv = selectors.skill_version_get_visible(actor=actor, name=name, version=version)
        services.check_rerun(actor=actor, version=sv, name=check)
        return Response({"check": check, "status": "pending"}, status=status.HTTP_202_ACCEPTED)


class Yank(APIView):
    @extend_schema(request=YankIn, responses=VersionOut)
    def post(self, request, name: str, version: str):
        """Yank: resolution skips the version unless it is asked for exactly."""
        form = YankIn(data=request.data)
        form.is_valid(raise_exception=True)
        sv = services.skill_version_yank(
            actor=request_actor(request), name=name, version=version, **form.validated_data
        )
        return Response(VersionOut(sv, context={"request": request, "skill_name": name}).data)

    @extend_schema(responses=VersionOut)
    def delete(self, request, name: str, version: str):
        """Unyank."""
        sv = services.skill_version_unyank(actor=request_actor(request), name=name, version=version)
        return Response(VersionOut(sv, context={"request": request, "skill_name": name}).data)


class Deprecate(APIView):
    @extend_schema(request=DeprecateIn, responses=VersionOut)
    def post(self, request, name: str, version: str):
        """Set a deprecation message (an empty message clears it)."""
        form = DeprecateIn(data=request.data)
        form.is_valid(raise_exception=True)
        sv = services.skill_version_deprecate(
            actor=request_actor(request), name=name, version=version, **form.validated_data
        )
        return Response(VersionOut(sv, context={"request": request, "skill_name": name}).data)


class DistTags(APIView):
    @extend_schema(responses=dict[str, str])
    def get(self, request, name: str):
        """A skill's dist-tags: each tag and the version it points at."""
        skill = selectors.skill_get_visible(actor=request_actor(request), name=name)
        return Response(selectors.skill_dist_tags(skill=skill))


class DistTagDetail(APIView):
    @extend_schema(request=DistTagIn, responses=dict[str, str])
    def put(self, request, name: str, tag: str):
        """Point a tag at a version."""
        form = DistTagIn(data=request.data)
        form.is_valid(raise_exception=True)
        dist_tag = services.skill_dist_tag_set(actor=request_actor(request), name=name, tag=tag, **form.validated_data)
        return Response({"tag": dist_tag.tag, "version": dist_tag.version.version})

    @extend_schema(responses={204: None})
    def delete(self, request, name: str, tag: str):
        """Remove a dist-tag (publishers of the skill)."""
        services.skill_dist_tag_remove(actor=request_actor(request), name=name, tag=tag)
        return Response(status=status.HTTP_204_NO_CONTENT)
