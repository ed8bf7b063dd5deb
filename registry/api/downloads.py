"""Downloads: a version's archive with its digest and trust headers, counted once per client.

A download is the registry's most frequent request. What it costs, and what is kept:

- the archive's bytes: small archives come from this process's memory (registry/storage.py,
  ``archive_bytes_kept``: content-addressed, so never stale), larger ones stream from storage;
- which version a path names and what its headers say: for a request without credentials this
  is kept as a :class:`Served` under the registry's data generation (registry/respcache.py), so
  a yank, a new publish or a malicious verdict is seen within a second; a request with
  credentials is resolved each time (it may see private skills);
- the count: every download goes through ``skill_version_download_record`` (once per client,
  version and window), before the bytes are sent.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import FileResponse, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.views import APIView

from registry import mirrors, respcache, selectors, services
from registry.api.authentication import request_actor
from registry.clients import client_identity
from registry.errors import Forbidden
from registry.models import SkillVersion, Visibility
from registry.served import make_inert
from registry.storage import archive_bytes_kept, archive_open
from skillctl.format.limits import MAX_REASON_CHARS

CONTENT_TYPES = {"zip": "application/zip", "tar.gz": "application/gzip"}
# A version's bytes never change, so caches may keep a public archive for a year.
IMMUTABLE_CACHE = "public, max-age=31536000, immutable"
ARCHIVE_CHUNK_BYTES = 256 * 1024  # per read from storage: few thread hops, little memory per download


@dataclass(frozen=True)
class Served:
    """What answering a download of one version takes, without the version's row."""

    version_id: int
    skill_id: int
    key: str
    sha256: str
    size: int
    content_type: str
    filename: str
    headers: dict[str, str]


class Download(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("version", str, description="Exact, range (^1.2, ~1.2, >=1,<2) or tag")],
        responses={(200, "application/zip"): bytes},
    )
    def get(self, request, name: str):
        """Download the version a spec selects (default: latest non-yanked)."""

        def resolve() -> Served:
            actor = request_actor(request)
            spec = request.query_params.get("version")
            sv = mirrors.skill_version_resolve_or_mirrored(actor=actor, name=name, spec=spec)
            return served(actor, sv, cacheable=False)

        return archive_response(request, respcache.remembered(request, resolve))


class VersionDownload(APIView):
    @extend_schema(responses={(200, "application/zip"): bytes})
    def get(self, request, name: str, version: str):
        """Download one exact version (yanked ones too: asked for exactly)."""

        def resolve() -> Served:
            actor = request_actor(request)
            sv = mirrors.skill_version_get_visible_or_mirrored(actor=actor, name=name, version=version)
            return served(actor, sv, cacheable=True)

        return archive_response(request, respcache.remembered(request, resolve))


def served(actor, sv: SkillVersion, *, cacheable: bool) -> Served:  # noqa: ANN001
    """The download of ``sv`` for ``actor``: refused (403) when the scan found it malicious and
    the actor is not a member of its owner."""
    if not selectors.skill_version_download_allowed(actor=actor, version=sv):
        raise Forbidden(
            "scan.blocked",
            f"{sv.skill.name} {sv.version} was found malicious by the security scan; "
            "only members of its owner may download it (the findings are on the version page).",
        )
    ext = "zip" if sv.archive_kind == "zip" else "tar.gz"
    return Served(
        version_id=sv.id,
        skill_id=sv.skill_id,
        key=sv.archive_key,
        sha256=sv.sha256,
        size=sv.size,
        content_type=CONTENT_TYPES[sv.archive_kind],
        filename=f"{sv.skill.name}-{sv.version}.{ext}",
        headers=download_headers(sv, cacheable=cacheable),
    )


def download_headers(sv: SkillVersion, *, cacheable: bool) -> dict[str, str]:
    """The digest headers, and what an installer needs to know besides the bytes, so a download
    by spec can replace the version-list request: the scan verdict (pending until there is one),
    whether a routing manifest is there, yank, deprecation and the tests' result."""
    public = cacheable and sv.skill.visibility == Visibility.PUBLIC
    headers = {
        "ETag": f'"{sv.sha256}"',
        "X-Checksum-Sha256": sv.sha256,
        "Repr-Digest": f"sha-256=:{base64.b64encode(bytes.fromhex(sv.sha256)).decode()}:",
        "X-Skill-Version": sv.version,
        "Cache-Control": IMMUTABLE_CACHE if public else "private, no-cache",
        "Content-Location": f"/api/v1/skills/{sv.skill.name}/versions/{sv.version}/download",
        "X-Skill-Scan-Verdict": sv.scan_verdict or "pending",
    }
    routing = selectors.skill_version_routing_manifest(version=sv) is not None
    headers["X-Skill-Routing-Manifest"] = "yes" if routing else "no"
    if sv.yanked:
        headers["X-Skill-Yanked"] = _header_text(sv.yanked_reason or "yanked")
    if sv.deprecated:
        headers["X-Skill-Deprecated"] = _header_text(sv.deprecated)
    headers["X-Skill-Test-Result"] = sv.test_result or "pending"
    if sv.test_result in ("failed", "error"):  # the log's last line: unittest and pytest end with the counts
        log = [line for line in str(sv.checks_state.get("tests", {}).get("log") or "").splitlines() if line.strip()]
        headers["X-Skill-Test-Summary"] = _header_text(log[-1] if log else sv.test_result)
    return headers


def archive_response(request, archive: Served) -> HttpResponseBase:  # noqa: ANN001
    """The archive with its headers; ``If-None-Match`` on the sha256 gives 304 (not counted)."""
    response: HttpResponseBase
    if archive.headers["ETag"] in request.headers.get("If-None-Match", ""):
        response = HttpResponse(status=304)
    else:
        response = _body(request, archive)
        response["Content-Length"] = str(archive.size)
        if request.method == "GET":
            counted = SkillVersion(id=archive.version_id, skill_id=archive.skill_id)  # the ids are all it needs
            services.skill_version_download_record(version=counted, client=client_identity(request))
    for key, value in archive.headers.items():
        response[key] = value
    return make_inert(response)


def _body(request, archive: Served) -> HttpResponseBase:  # noqa: ANN001
    """The bytes, streamed: from this process's memory when the archive is small, else from
    storage. Under ASGI (uvicorn, `make run`) the stream is an async iterator reading in chunks:
    a sync one would make Django read the whole archive into memory first, per download."""
    kept = (
        archive_bytes_kept(archive.key, sha256=archive.sha256, size=archive.size) if request.method == "GET" else None
    )

    asgi = isinstance(getattr(request, "_request", request), ASGIRequest)
    if not asgi and kept is None:
        return FileResponse(
            archive_open(archive.key), as_attachment=True, filename=archive.filename, content_type=archive.content_type
        )

    async def chunks():  # noqa: ANN202
        if kept is not None:
            yield kept
            return
        handle = await sync_to_async(archive_open)(archive.key)
        try:
            while chunk := await sync_to_async(handle.read)(ARCHIVE_CHUNK_BYTES):
                yield chunk
        finally:
            await sync_to_async(handle.close)()

    # Kept bytes go out as one chunk (one write, where a file's response writes 4 KiB blocks).
    body = iter([kept]) if kept is not None and not asgi else chunks()
    response = StreamingHttpResponse(body, content_type=archive.content_type)
    response["Content-Disposition"] = content_disposition_header(True, archive.filename)
    return response


def _header_text(reason: str) -> str:
    """A yank reason or deprecation message as one ASCII header line. The services already keep
    it within MAX_REASON_CHARS; the cut holds the header to that even for older rows."""
    return " ".join(reason.encode("ascii", "replace").decode().split())[:MAX_REASON_CHARS]
