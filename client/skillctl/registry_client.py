"""The one place the client speaks HTTP to a registry (API v1, DESIGN section 5).

Every answer is mapped to a :class:`~skillctl.errors.SkillctlError` with a hint: transport
failures, throttling and 5xx are :class:`NetworkError` (exit 3); 401/403/404/409/413/422 are
failures (exit 1) carrying the registry's RFC 9457 ``errors`` list; a digest that does not match
is an :class:`IntegrityError` (exit 4) and the partial download is removed.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

from skillctl import __version__
from skillctl.config import Registry, normalise_url
from skillctl.errors import IntegrityError, NetworkError, SkillctlError
from skillctl.format.limits import DEFAULT_LIMITS
from skillctl.registry_answers import (
    RegistryError,
    check_digests,
    digests_from_headers,
    format_errors,
    status_error,
    too_large,
)
from skillctl.reporting import Reporter
from skillctl.transport import check_request, connection_cause, httpx, read_capped, url_problem

__all__ = ["RegistryClient", "RegistryError", "Resolved", "digests_from_headers", "format_errors"]

API_PREFIX = "/api/v1"
CHUNK_BYTES = 64 * 1024
MANIFEST_BATCH = 50  # versions per routing-manifests request: the registry's own limit
AUDIT_BATCH = 500  # installed versions per audit request: the registry's own limit
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Resolved:
    """A download by spec: the version the registry chose and what its headers said (None:
    the registry did not say, an older one)."""

    version: str
    sha256: str
    scan_verdict: str | None  # pass | review | warn | malicious | pending
    routing_manifest: bool | None
    # The registry chose a version whose archive the caller already has (304 Not Modified to
    # the digests it offered): nothing was written, ``sha256`` names the cached archive.
    not_modified: bool = False
    deprecated: str = ""  # the owner's message ("": not deprecated)
    test_result: str | None = None  # passed | failed | error | none | pending
    test_summary: str = ""  # how failing tests ended, in one line


def _q(part: str) -> str:
    return quote(str(part), safe="")


class RegistryClient:
    # Tests put a fake HTTP edge here (httpx.MockTransport); None means real network.
    default_transport: ClassVar[httpx.BaseTransport | None] = None

    def __init__(
        self,
        registry: Registry,
        *,
        timeout: float = 30,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.registry = registry
        self.base_url = normalise_url(registry.url) + API_PREFIX
        headers = {"User-Agent": f"skillctl/{__version__}", "Accept": "application/json"}
        if registry.token:
            if problem := url_problem(self.base_url):
                raise SkillctlError(
                    f"not sending the token for {registry.name} to {registry.url}: {problem}",
                    hint="Change the registry to https:// (`skillctl config add-registry NAME https://...`).",
                    code="transport.insecure_token",
                )
            headers["Authorization"] = f"Bearer {registry.token}"
        # Redirects are followed (downloads may come from presigned S3 URLs): each hop must be
        # https (or loopback) like the first, and httpx drops Authorization when one leaves
        # the registry's origin.
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=timeout,
            follow_redirects=True,
            transport=transport or self.default_transport,
            event_hooks={"request": [check_request]},
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- reads ---------------------------------------------------------------------------

    def skill(self, name: str) -> dict:
        return self._get_json(f"/skills/{_q(name)}", what=f"skill {name!r}")

    def version(self, name: str, version: str) -> dict:
        return self._get_json(f"/skills/{_q(name)}/versions/{_q(version)}", what=f"{name} {version}")

    def version_diff(self, name: str, old: str, new: str) -> dict:
        """What changed from ``old`` to ``new``: files (status, unified diff) and frontmatter."""
        return self._get_json(f"/skills/{_q(name)}/diff/{_q(old)}/{_q(new)}", what=f"{name} {old} → {new}")

    def routing_manifests(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], dict | None]:
        """The routing manifests of these (name, version) pairs, at most MANIFEST_BATCH per
        request: what the registry has for each (None: none yet); pairs it does not know, or
        will not show, are left out. An older registry without the endpoint answers 404
        (``registry.not_found``): ask each version's detail instead."""
        found: dict[tuple[str, str], dict | None] = {}
        unique = list(dict.fromkeys(pairs))
        for start in range(0, len(unique), MANIFEST_BATCH):
            batch = unique[start : start + MANIFEST_BATCH]
            data = self._get_json(
                "/routing-manifests", params={"v": [f"{n}@{v}" for n, v in batch]}, what="routing manifests"
            )
            for item in data.get("manifests") or [] if isinstance(data, dict) else []:
                if isinstance(item, dict) and (item.get("name"), item.get("version")) in batch:
                    manifest = item.get("routing_manifest")
                    found[item["name"], item["version"]] = manifest if isinstance(manifest, dict) else None
        return found

    def search(self, q: str, *, page: int = 1, owner: str = "", category: str = "", tag: str = "") -> dict:
        """The registry's one search (its catalog's ranking); each result of a query carries
        ``match`` (``strength`` strong|weak, ``score``) on registries that rank."""
        filters = {k: v for k, v in (("owner", owner), ("category", category), ("tag", tag)) if v}
        data = self._get_json("/skills", params={"q": q, "page": page, **filters}, what="search")
        # A bare list is accepted too, so the result always has `results`.
        return {"results": data, "count": len(data)} if isinstance(data, list) else data

    def me(self) -> dict:
        return self._get_json("/me", what="your account")

    def audit(self, pairs: Sequence[tuple[str, str]], *, ranges: Mapping[str, str] | None = None) -> dict:
        """What the registry knows now about these installed (name, version) pairs, at most
        AUDIT_BATCH per request: ``{"as_of", "results": [...]}`` (the earliest ``as_of`` of the
        requests). ``ranges`` (name -> the project's range) lets the registry name the newest
        clean version each range reaches. An older registry without the endpoint answers 404
        (``registry.not_found``)."""
        unique = list(dict.fromkeys(pairs))
        results: list[dict] = []
        stamps: list[str] = []
        ranges = ranges or {}
        for start in range(0, len(unique), AUDIT_BATCH):
            batch = [
                {"name": n, "version": v, **({"range": ranges[n]} if ranges.get(n) else {})}
                for n, v in unique[start : start + AUDIT_BATCH]
            ]
            data = self._write("POST", "/audit", what="audit", json={"skills": batch})
            results += [r for r in data.get("results") or [] if isinstance(r, dict)]
            stamps += [str(data["as_of"])] if data.get("as_of") else []
        return {"as_of": min(stamps) if stamps else None, "results": results}

    def advisories(self, name: str) -> list[dict]:
        data = self._get_json(f"/skills/{_q(name)}/advisories", what=f"advisories of {name}")
        return [a for a in data.get("advisories") or [] if isinstance(a, dict)]

    # --- writes --------------------------------------------------------------------------

    def publish(
        self,
        name: str,
        archive: Path,
        *,
        version: str | None = None,
        owner: str | None = None,
        visibility: str | None = None,
        changelog: str | None = None,
    ) -> dict:
        """Upload an archive; the result has ``created`` False when identical bytes existed."""
        fields = {"version": version, "owner": owner, "visibility": visibility, "changelog": changelog}
        data = {k: v for k, v in fields.items() if v}
        archive = Path(archive)
        with archive.open("rb") as fh:
            files = {"archive": (archive.name, fh, "application/octet-stream")}
            response = self._send(
                "POST", f"/skills/{_q(name)}/versions", what=f"publish of {name}", data=data, files=files
            )
        body = self._json(response)
        if isinstance(body, dict):
            body.setdefault("created", response.status_code == 201)
        return body

    # --- publisher actions (the owner's admin or publisher role, a publish/admin token) ------

    def yank(self, name: str, version: str, *, reason: str = "") -> dict:
        path = f"/skills/{_q(name)}/versions/{_q(version)}/yank"
        return self._write("POST", path, what=f"yank of {name} {version}", json={"reason": reason})

    def unyank(self, name: str, version: str) -> dict:
        path = f"/skills/{_q(name)}/versions/{_q(version)}/yank"
        return self._write("DELETE", path, what=f"unyank of {name} {version}")

    def deprecate(self, name: str, version: str, *, message: str) -> dict:
        path = f"/skills/{_q(name)}/versions/{_q(version)}/deprecate"
        return self._write("POST", path, what=f"deprecation of {name} {version}", json={"message": message})

    def dist_tags(self, name: str) -> dict:
        return self._get_json(f"/skills/{_q(name)}/dist-tags", what=f"dist-tags of {name}")

    def dist_tag_set(self, name: str, tag: str, version: str) -> dict:
        path = f"/skills/{_q(name)}/dist-tags/{_q(tag)}"
        return self._write("PUT", path, what=f"dist-tag {tag} of {name}", json={"version": version})

    def dist_tag_remove(self, name: str, tag: str) -> dict:
        return self._write("DELETE", f"/skills/{_q(name)}/dist-tags/{_q(tag)}", what=f"dist-tag {tag} of {name}")

    def advisory_create(
        self, name: str, *, summary: str, severity: str, affected: str, details: str = "", aliases: Sequence[str] = ()
    ) -> dict:
        """File an advisory (OSV) against versions of ``name`` (``affected``: a version range)."""
        body: dict[str, Any] = {"summary": summary, "severity": severity, "affected": affected}
        body |= {"details": details} if details else {}
        body |= {"aliases": list(aliases)} if aliases else {}
        return self._write("POST", f"/skills/{_q(name)}/advisories", what=f"advisory for {name}", json=body)

    def advisory_withdraw(self, advisory_id: str) -> dict:
        path = f"/advisories/{_q(advisory_id)}/withdraw"
        return self._write("POST", path, what=f"withdrawal of {advisory_id}")

    def tokens(self) -> list:
        return self._get_json("/tokens", what="your tokens")

    def token_create(self, *, scope: str, owner: str = "", name: str = "", expires_days: int | None = None) -> dict:
        body = {"scope": scope, "owner": owner, "name": name, "expires_days": expires_days}
        return self._write("POST", "/tokens", what="a new token", json={k: v for k, v in body.items() if v})

    def token_revoke(self, token_id: int) -> dict:
        return self._write("DELETE", f"/tokens/{int(token_id)}", what=f"token {token_id}")

    def org_create(self, name: str) -> dict:
        return self._write("POST", "/orgs", what=f"organisation {name}", json={"name": name})

    def org(self, name: str) -> dict:
        return self._get_json(f"/orgs/{_q(name)}", what=f"organisation {name}")

    def org_members(self, name: str) -> list:
        return self._get_json(f"/orgs/{_q(name)}/members", what=f"members of {name}")

    def org_member_set(self, org: str, username: str, role: str) -> dict:
        path = f"/orgs/{_q(org)}/members"
        return self._write(
            "POST", path, what=f"membership of {username} in {org}", json={"username": username, "role": role}
        )

    def org_member_remove(self, org: str, username: str) -> dict:
        path = f"/orgs/{_q(org)}/members/{_q(username)}"
        return self._write("DELETE", path, what=f"membership of {username} in {org}")

    def _write(self, method: str, path: str, *, what: str, json: dict | None = None) -> dict:
        """A write's JSON answer ({} for 204 No Content)."""
        response = self._send(method, path, what=what, json=json)
        if response.status_code == 204 or not response.content:
            return {}
        return self._json(response)

    def download(
        self,
        name: str,
        version: str,
        dest: Path,
        *,
        expected_sha256: str | None,
        reporter: Reporter | None = None,
    ) -> str:
        """Stream an archive to ``dest`` and return its sha256 once every digest agrees."""
        path = f"/skills/{_q(name)}/versions/{_q(version)}/download"
        expected = {"expected": expected_sha256.lower()} if expected_sha256 else {}
        actual, _ = self._download_to(dest, path, f"{name} {version}", expected, reporter=reporter)
        assert actual is not None  # not a conditional request: never 304
        return actual

    def download_resolved(
        self,
        name: str,
        spec: str,
        dest: Path,
        *,
        reporter: Reporter | None = None,
        cached: Sequence[str] = (),
    ) -> Resolved:
        """Stream the archive of the version the registry resolves ``spec`` to (same rules as
        :func:`skillctl.format.versions.resolve`; empty: the default version): one request
        instead of the version list and the download. What the headers say comes back with it.
        ``cached``: digests of this skill's archives the caller has; when the registry chooses
        one of them it answers 304 and no bytes are sent (``Resolved.not_modified``)."""
        path = f"/skills/{_q(name)}/download" + (f"?version={quote(spec, safe='')}" if spec else "")
        offered = [d for d in cached if _SHA256.fullmatch(d)]
        conditional = {"If-None-Match": ", ".join(f'"{d}"' for d in offered)} if offered else {}
        what = f"{name} {spec or 'latest'}"
        actual, headers = self._download_to(dest, path, what, {}, reporter=reporter, headers=conditional)
        version = headers.get("X-Skill-Version") or ""
        not_modified = actual is None
        if actual is None:  # 304: the registry's choice is an archive we offered
            actual = (headers.get("X-Checksum-Sha256") or "").lower()
            if actual not in offered:
                raise IntegrityError(
                    f"{self.registry.name}: {what}: answered 'not modified' for an archive that was not offered",
                    hint="Retry; if it persists, report it to the registry's operators.",
                    code="integrity.download_sha256",
                )
        if not version:
            Path(dest).unlink(missing_ok=True)
            raise SkillctlError(
                f"{self.registry.name} did not say which version of {name} it sent",
                hint="An older registry: the version list is used instead.",
                code="registry.unexpected_status",
            )
        manifest = headers.get("X-Skill-Routing-Manifest")
        return Resolved(
            version=version,
            sha256=actual,
            scan_verdict=headers.get("X-Skill-Scan-Verdict"),
            routing_manifest=None if manifest is None else manifest == "yes",
            not_modified=not_modified,
            deprecated=headers.get("X-Skill-Deprecated") or "",
            test_result=headers.get("X-Skill-Test-Result"),
            test_summary=headers.get("X-Skill-Test-Summary") or "",
        )

    # --- plumbing ------------------------------------------------------------------------

    def _download_to(
        self,
        dest: Path,
        path: str,
        what: str,
        expected: dict,
        *,
        reporter: Reporter | None,
        headers: dict[str, str] | None = None,
    ) -> tuple[str | None, httpx.Headers]:
        """Stream ``path`` to ``dest`` (a temporary file renamed once every digest agrees).
        None for the digest: a conditional request answered 304, nothing written."""
        dest = Path(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as fh:
                actual, got = self._stream_to(fh, path, what, reporter=reporter or Reporter(), headers=headers)
            if actual is None:
                return None, got
            check_digests(what, actual, {**expected, **digests_from_headers(got)})
            os.replace(tmp, dest)
            return actual, got
        finally:
            tmp.unlink(missing_ok=True)

    def _stream_to(
        self, fh, path: str, what: str, *, reporter: Reporter, headers: dict[str, str] | None = None
    ) -> tuple[str | None, httpx.Headers]:
        digest = hashlib.sha256()
        limit = DEFAULT_LIMITS.max_archive_bytes
        with self._transport_errors(what), self._http.stream("GET", path, headers=headers) as response:
            if response.status_code == 304 and headers and "If-None-Match" in headers:
                return None, response.headers
            self._raise_for_status(response, what)
            total = int(response.headers.get("Content-Length") or 0) or None
            if total and total > limit:
                raise too_large(what, total, limit)
            size = 0
            with reporter.progress(what, total) as advance:
                for chunk in response.iter_bytes(CHUNK_BYTES):
                    size += len(chunk)
                    if size > limit:
                        raise too_large(what, size, limit)
                    digest.update(chunk)
                    fh.write(chunk)
                    advance(len(chunk))
            return digest.hexdigest(), response.headers

    def _get_json(self, path: str, *, what: str, params: dict | None = None) -> Any:
        return self._json(self._send("GET", path, what=what, params=params))

    def _send(self, method: str, path: str, *, what: str, **kwargs: Any) -> httpx.Response:
        """The response with its body read, at most ``MAX_JSON_BYTES`` of it."""
        with self._transport_errors(what), self._http.stream(method, path, **kwargs) as response:
            self._raise_for_status(response, what)
            body = read_capped(response)
        return httpx.Response(response.status_code, headers=response.headers, content=body, request=response.request)

    @contextmanager
    def _transport_errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except httpx.TimeoutException as exc:
            raise NetworkError(
                f"{self._label()} timed out ({what})",
                hint="Retry; check your connection or the registry's status.",
                code="network.timeout",
            ) from exc
        except httpx.HTTPError as exc:
            raise NetworkError(
                f"cannot reach {self._label()}: {self._redacted(connection_cause(exc, server='registry'))}",
                hint="Check the URL (`skillctl config`), SKILLYARD_REGISTRY and your connection.",
                code="network.unreachable",
            ) from exc

    def _redacted(self, text: str) -> str:
        return text.replace(self.registry.token, "****") if self.registry.token else text

    def _label(self) -> str:
        """``the registry at URL`` (named when it has a configured name)."""
        named = self.registry.name not in ("env", "", self.registry.url)
        return (
            f"registry {self.registry.name} at {self.registry.url}" if named else f"the registry at {self.registry.url}"
        )

    def _raise_for_status(self, response: httpx.Response, what: str) -> None:
        status = response.status_code
        if status < 400:
            return
        try:
            body = read_capped(response, 64 * 1024)  # an error page: the start says enough
        except NetworkError:
            body = b""
        raise status_error(self.registry.name, what, status, response.headers, body)

    def _json(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise NetworkError(
                f"{self.registry.name} answered with something other than JSON "
                f"({response.headers.get('Content-Type', 'no content type')})",
                hint=f"Is {self.registry.url} a Skillyard registry? Check `skillctl config`.",
                code="registry.invalid_response",
            ) from exc
