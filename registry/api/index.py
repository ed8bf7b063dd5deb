"""The API's front door: ``GET /api/v1/`` lists every endpoint with its methods and a one-line
description, read from the same OpenAPI schema as ``/api/v1/schema/`` and the docs page, so the
three cannot disagree (an endpoint documents itself with its view's docstring).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

METHODS = ("get", "post", "put", "patch", "delete")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")


@dataclass(frozen=True)
class Operation:
    method: str  # GET, POST, ...
    path: str  # as the schema writes it: /api/v1/skills/{name}
    summary: str  # the first sentence of the view's docstring
    description: str  # its first paragraph
    spec: dict  # the schema's operation object (parameters, requestBody, responses)


@functools.cache
def schema() -> dict:
    """The OpenAPI schema, made once per process (it takes most of a second; the URL conf and
    views do not change while the process runs)."""
    return SchemaGenerator().get_schema(request=None, public=True)


def operations() -> list[Operation]:
    found = []
    for path, item in sorted(schema().get("paths", {}).items()):
        for method, spec in item.items():
            if method in METHODS:
                paragraph = _first_paragraph(spec.get("description") or "")
                found.append(Operation(method.upper(), path, _first_sentence(paragraph), paragraph, spec))
    return found


def _first_paragraph(text: str) -> str:
    """Docstring text as prose: its first paragraph on one line, reST ``code`` as `code`."""
    return " ".join(text.strip().split("\n\n")[0].split()).replace("``", "`")


def _first_sentence(paragraph: str) -> str:
    return _SENTENCE_END.split(paragraph, maxsplit=1)[0]


INDEX_OUT = inline_serializer(
    "ApiIndexOut",
    {
        "title": serializers.CharField(),
        "docs": serializers.URLField(),
        "schema": serializers.URLField(),
        "endpoints": serializers.ListField(
            child=inline_serializer(
                "EndpointOut",
                {"path": serializers.CharField(), "methods": serializers.DictField(child=serializers.CharField())},
            )
        ),
    },
)


class ApiIndex(APIView):
    """Every endpoint of this registry with its methods and what each does, and where the docs
    and the OpenAPI schema are."""

    permission_classes = [AllowAny]

    @extend_schema(operation_id="api_index", responses=INDEX_OUT)
    def get(self, request):
        endpoints: dict[str, dict[str, str]] = {}
        for op in operations():
            endpoints.setdefault(op.path, {})[op.method] = op.summary
        return Response(
            {
                "title": schema().get("info", {}).get("title", ""),
                "docs": request.build_absolute_uri(reverse("api:docs")),
                "schema": request.build_absolute_uri(reverse("api:schema")),
                "endpoints": [{"path": path, "methods": methods} for path, methods in endpoints.items()],
            }
        )
