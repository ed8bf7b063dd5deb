"""The API docs page: every endpoint of the OpenAPI schema with its description and an example
request (curl) and response, made from the schema itself (no CDN assets, nothing to keep in
step by hand). The page is a catalog page: same header, styles and CSP.

Examples are built from the schema's types: a path's placeholders and fields with names the demo
registry uses get values from :data:`EXAMPLE_VALUES`, the rest a value of their type or format.
"""

from __future__ import annotations

import json
from typing import Any

from django.shortcuts import render

from registry.api.index import Operation, operations, schema

# Values a reader recognises, for path placeholders and fields of these names (the demo skills).
EXAMPLE_VALUES: dict[str, Any] = {
    "name": "pdf-summary",
    "slug": "pdf-summary",
    "scope": "publish",
    "owner": "demo",
    "org": "acme",
    "username": "alice",
    "version": "1.0.0",
    "old": "1.0.0",
    "new": "1.1.0",
    "tag": "beta",
    "check": "scan",
    "osv_id": "SKY-2026-0001",
    "token_id": 42,
    "q": "summarise a pdf",
    "sha256": "9f2c…e1",
    "description": "Summarise a PDF: its sections, figures and conclusions.",
}
BY_FORMAT = {"date-time": "2026-01-15T09:30:00Z", "date": "2026-01-15", "uri": "https://registry.example/…"}
BY_TYPE = {"string": "…", "integer": 0, "number": 0.0, "boolean": False}
MAX_DEPTH = 4  # nested examples deeper than this are elided: the schema link has the whole shape
# Reads that answer only someone signed in; every write needs a token too.
TOKEN_READS = ("/api/v1/me", "/api/v1/tokens", "/api/v1/orgs/{org}/members")


def api_docs(request):
    base = request.build_absolute_uri("/").rstrip("/")
    entries = [{"op": op, **_examples(op, base)} for op in operations()]
    return render(request, "registry/api_docs.html", {"info": schema().get("info", {}), "entries": entries})


def _examples(op: Operation, base: str) -> dict:
    status, content = _success(op.spec.get("responses", {}))
    return {
        "query": [p["name"] for p in op.spec.get("parameters", []) if p.get("in") == "query"],
        "request": _curl(op, base),
        "status": status,
        "response": _response_example(content),
        "answers": sorted(op.spec.get("responses", {})),
    }


def _curl(op: Operation, base: str) -> str:
    path = op.path
    for param in op.spec.get("parameters", []):
        if param.get("in") == "path":
            path = path.replace("{" + param["name"] + "}", str(EXAMPLE_VALUES.get(param["name"], "x")))
    parts = ["curl"] + ([] if op.method == "GET" else ["-X", op.method])
    if op.method != "GET" or op.path in TOKEN_READS:
        parts += ["-H", '"Authorization: Bearer $SKILLYARD_TOKEN"']
    parts += _body_args(op.spec.get("requestBody") or {})
    return " ".join([*parts, f"'{base}{path}'"])


def _body_args(body: dict) -> list[str]:
    content = body.get("content", {})
    if "application/json" in content:
        example = _example(content["application/json"].get("schema", {}), required_only=True)
        return ["-H", "'Content-Type: application/json'", "-d", f"'{json.dumps(example, ensure_ascii=False)}'"]
    if "multipart/form-data" in content:
        fields = _resolve(content["multipart/form-data"].get("schema", {})).get("properties", {})
        return [f"-F archive=@{EXAMPLE_VALUES['name']}.zip"] if "archive" in fields else []
    return []


def _success(responses: dict) -> tuple[str, dict]:
    """The first 2xx answer: its status and its content (empty for 204)."""
    status = next((s for s in sorted(responses) if s.startswith("2")), "200")
    return status, responses.get(status, {}).get("content", {})


def _response_example(content: dict) -> str:
    if not content:
        return ""
    media, spec = next(iter(content.items()))
    if media != "application/json":
        return f"({media}: the archive's bytes; X-Checksum-Sha256 and Repr-Digest name its sha256)"
    return json.dumps(_example(spec.get("schema", {})), indent=2, ensure_ascii=False)


def _resolve(spec: dict) -> dict:
    if "$ref" in spec:
        return schema()["components"]["schemas"][spec["$ref"].rsplit("/", 1)[1]]
    if "allOf" in spec:
        return _resolve(spec["allOf"][0])
    return spec


def _example(spec: dict, *, key: str = "", depth: int = 0, required_only: bool = False) -> Any:
    spec = _resolve(spec)
    if key in EXAMPLE_VALUES and spec.get("type") in ("string", "integer", None):
        return EXAMPLE_VALUES[key]
    if "enum" in spec:
        return spec["enum"][0]
    if spec.get("nullable"):
        return None  # what a fresh row holds (revoked_at, expires_at ...)
    if depth >= MAX_DEPTH:
        return "…"
    if spec.get("type") == "array":
        return [_example(spec.get("items", {}), key=key, depth=depth + 1)]
    if spec.get("type") == "object" or "properties" in spec:
        return _object_example(spec, depth, required_only)
    return BY_FORMAT.get(spec.get("format", "")) or BY_TYPE.get(spec.get("type", "string"), "…")


def _object_example(spec: dict, depth: int, required_only: bool) -> dict:
    properties = spec.get("properties", {})
    keys = [k for k in properties if k in spec.get("required", [])] if required_only else list(properties)
    if not properties and spec.get("additionalProperties"):
        return {"…": _example(spec["additionalProperties"], depth=depth + 1)}
    return {k: _example(properties[k], key=k, depth=depth + 1) for k in keys}
