"""Interop: what other installers read to install from us (``npx skills add <registry URL>``).

- ``/.well-known/agent-skills/index.json``: the agent-skills discovery format 0.2.0 (its
  ``$schema``; entries ``name``, ``description``, ``type: archive``, ``url``, ``digest``),
  the archive being the skill's files with SKILL.md at the root (registry/artifacts.py);
- ``/.well-known/skills/index.json``: the older form (``name``, ``description``, ``files``),
  each file served at ``/.well-known/skills/<name>/<file>``.

Both list public skills only, each at its default version, never a version the scan found
malicious: anonymous, cacheable, and the same for everyone.
"""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.urls import reverse
from django.utils.http import content_disposition_header
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from registry import artifacts, selectors
from registry.access import Actor
from registry.api.serializers import absolute_url
from registry.errors import NotFound
from registry.served import make_inert, skill_file_response

DISCOVERY_SCHEMA_V2 = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
CACHE = "public, max-age=60"


# The answers' shapes, for the OpenAPI schema and the API docs' examples.
SKILLS_INDEX_OUT = inline_serializer(
    "SkillsIndexOut",
    {
        "skills": serializers.ListField(
            child=inline_serializer(
                "SkillsIndexEntryOut",
                {
                    "name": serializers.CharField(),
                    "description": serializers.CharField(),
                    "version": serializers.CharField(),
                    "files": serializers.ListField(child=serializers.CharField()),
                },
            )
        )
    },
)
AGENT_SKILLS_INDEX_OUT = inline_serializer(
    "AgentSkillsIndexOut",
    {
        "$schema": serializers.URLField(),
        "skills": serializers.ListField(
            child=inline_serializer(
                "AgentSkillsIndexEntryOut",
                {key: serializers.CharField() for key in ("name", "type", "description", "version", "url", "digest")},
            )
        ),
    },
)


def _public_entries():
    return selectors.wellknown_index(actor=Actor.anonymous())


def _cached(response):
    response["Cache-Control"] = CACHE
    return response


class SkillsIndex(APIView):
    authentication_classes: list = []

    @extend_schema(responses=SKILLS_INDEX_OUT)
    def get(self, request):
        """The public skills for ``npx skills add <registry URL>``: name, description, files."""
        skills = [
            {
                "name": skill.name,
                "description": skill.description or skill.name,
                "version": sv.version,
                "files": [f["path"] for f in sv.files],
            }
            for skill, sv in _public_entries()
        ]
        return _cached(Response({"skills": skills}))


class AgentSkillsIndex(APIView):
    authentication_classes: list = []

    @extend_schema(responses=AGENT_SKILLS_INDEX_OUT)
    def get(self, request):
        """The public skills in the agent-skills discovery form, each archive with its sha256."""
        skills = [agent_skill_entry(request, skill, sv) for skill, sv in _public_entries()]
        return _cached(Response({"$schema": DISCOVERY_SCHEMA_V2, "skills": skills}))


def agent_skill_entry(request, skill, sv) -> dict:  # noqa: ANN001
    """A skill's entry in an agent-skills index (this one, and compat.py's one-skill index)."""
    path = reverse("wellknown-archive", kwargs={"name": skill.name, "version": sv.version})
    return {
        "name": skill.name,
        "type": "archive",
        "description": (skill.description or skill.name)[:1024],
        "version": sv.version,
        "url": absolute_url(request, path),
        "digest": f"sha256:{artifacts.rooted_archive_sha256(sv)}",
    }


def _public_default(name: str):
    found = next((pair for pair in _public_entries() if pair[0].name == name), None)
    if found is None:
        raise Http404("no such public skill")
    return found


def archive(request, name: str, version: str):
    """The skill's files with SKILL.md at the root (what the agent-skills index announces)."""
    try:
        sv = selectors.skill_version_get_visible(actor=Actor.anonymous(), name=name, version=version)
    except NotFound:  # a plain Django view: the registry's error is this path's 404, not a 500
        raise Http404("no such public skill version") from None
    if not selectors.skill_version_download_allowed(actor=Actor.anonymous(), version=sv):
        raise Http404("no such public skill version")
    response = HttpResponse(artifacts.rooted_archive(sv), content_type="application/zip")
    response["Content-Disposition"] = content_disposition_header(True, f"{name}-{version}.zip")
    response["Cache-Control"] = "public, max-age=31536000, immutable"
    return make_inert(response)


def skill_file(request, name: str, path: str):
    """One file of a public skill's default version (the older index's per-file form)."""
    _, sv = _public_default(name)
    files = artifacts.version_files(sv)
    if path not in files:
        raise Http404("no such file")
    # Never with the file's own type: served from this origin, a skill's HTML, SVG or script
    # would run as a page of the registry (registry/served.py).
    return _cached(skill_file_response(files[path], path))
