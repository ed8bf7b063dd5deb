"""Interop indexes so other clients can install from us.

``/.well-known/skills/index.json`` (name, description, files) and
``/.well-known/agent-skills/index.json`` (name, type ``archive``, url, ``sha256:`` digest). Both
list each visible skill's latest version: public ones for everybody, private ones only for
members (session or token) — the same ``visible_to`` rule as every other read.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from registry import selectors
from registry.api.authentication import request_actor
from registry.api.serializers import download_url


def _entries(request):
    actor = request_actor(request)
    return actor, selectors.wellknown_index(actor=actor)


def _cache(response, actor):
    response["Cache-Control"] = "private, no-cache" if actor.is_authenticated else "public, max-age=60"
    return response


class SkillsIndex(APIView):
    @extend_schema(responses=dict)
    def get(self, request):
        actor, entries = _entries(request)
        skills = [
            {
                "name": skill.name,
                "description": skill.description,
                "version": sv.version,
                "files": [f["path"] for f in sv.files],
                "url": download_url(request, sv, skill.name),
                "digest": f"sha256:{sv.sha256}",
            }
            for skill, sv in entries
        ]
        return _cache(Response({"skills": skills}), actor)


class AgentSkillsIndex(APIView):
    @extend_schema(responses=dict)
    def get(self, request):
        actor, entries = _entries(request)
        skills = [
            {
                "name": skill.name,
                "type": "archive",
                "description": skill.description,
                "version": sv.version,
                "url": download_url(request, sv, skill.name),
                "digest": f"sha256:{sv.sha256}",
            }
            for skill, sv in entries
        ]
        return _cache(Response({"skills": skills}), actor)
