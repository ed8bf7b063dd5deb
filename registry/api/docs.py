"""A self-contained API docs page rendered from the OpenAPI schema (no CDN assets needed)."""

from __future__ import annotations

from django.shortcuts import render
from drf_spectacular.generators import SchemaGenerator

METHODS = ("get", "post", "put", "patch", "delete")


def api_docs(request):
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = [
        {
            "method": method.upper(),
            "path": path,
            "summary": (op.get("description") or "").strip().splitlines()[0] if op.get("description") else "",
            "parameters": [p["name"] for p in op.get("parameters", []) if p.get("in") == "query"],
            "responses": sorted(op.get("responses", {})),
        }
        for path, item in sorted(schema.get("paths", {}).items())
        for method, op in item.items()
        if method in METHODS
    ]
    return render(request, "registry/api_docs.html", {"info": schema.get("info", {}), "operations": operations})
