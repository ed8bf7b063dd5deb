"""The registries a mirror fetches from, behind one small interface (STYLE: outside systems).

An :class:`Upstream` answers two questions: what does it hold under a name (:meth:`skill`:
owner, versions with the sha256 it announces, dist-tags), and what are a version's bytes
(:meth:`archive`, checked against that sha256). Two implementations:

- :class:`SkillyardUpstream`: another Skillyard registry's API v1 (``GET /skills/{name}``, then
  ``/skills/{name}/versions/{v}/download``);
- :class:`AgentSkillsUpstream`: a site serving the agent-skills discovery index 0.2.0
  (``/.well-known/agent-skills/index.json``; ``archive`` entries with a ``sha256:`` digest).

Every request is bounded (:class:`FetchLimits`): a timeout per call and a deadline per fetch,
a byte limit counted while reading, no redirects (a 3xx is an error: following one could lead
anywhere), and only URLs on the configured upstream's own origin. No Django here: the policy and
the storing live in registry/mirrors.py.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol
from urllib.parse import quote, urljoin, urlsplit

import httpx

AGENT_SKILLS_INDEX = "/.well-known/agent-skills/index.json"
_SHA256_HEX = frozenset("0123456789abcdef")


class UpstreamKind(StrEnum):
    SKILLYARD = "skillyard"
    AGENT_SKILLS = "agent-skills"


class UpstreamError(Exception):
    """A fetch that failed; ``code`` is stable (``upstream.unavailable``, ``upstream.too_large``,
    ``upstream.digest_mismatch``, ``upstream.answer_invalid``, ``upstream.foreign_url``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


@dataclass(frozen=True)
class UpstreamVersion:
    version: str | None  # None: the upstream does not say (an index entry without one)
    sha256: str  # what the upstream announces; the bytes must match it
    url: str  # where the archive is, on the upstream's origin
    yanked: bool = False


@dataclass(frozen=True)
class UpstreamSkill:
    name: str
    owner: str  # the upstream's owner of the name; "" when it has none (an agent-skills index)
    versions: tuple[UpstreamVersion, ...]
    dist_tags: dict[str, str] = field(default_factory=dict)  # tag -> version


@dataclass(frozen=True)
class FetchLimits:
    timeout_seconds: float  # per call: connect, and between bytes
    deadline_seconds: float  # the whole fetch (documents and archives)
    max_document_bytes: int  # an index or a skill detail
    max_archive_bytes: int  # the registry's archive limit


class Upstream(Protocol):
    url: str

    def skill(self, name: str) -> UpstreamSkill | None:
        """What the upstream holds under ``name``; None when it has nothing by that name."""
        ...

    def archive(self, version: UpstreamVersion) -> bytes:
        """The version's archive, its sha256 checked against the announced one."""
        ...


class _Fetcher:
    """GETs on one origin, bounded in time and size, never redirected."""

    def __init__(self, base: str, limits: FetchLimits) -> None:
        self.origin = _origin(base)
        self.limits = limits
        self.deadline = time.monotonic() + limits.deadline_seconds

    def get(self, url: str, *, max_bytes: int) -> bytes | None:
        """The body, or None for a 404."""
        if _origin(url) != self.origin:
            raise UpstreamError("upstream.foreign_url", f"{url} is not on the upstream {self.origin}.")
        try:
            with (
                httpx.Client(timeout=self.limits.timeout_seconds, follow_redirects=False) as client,
                client.stream("GET", url) as response,
            ):
                if response.status_code == 404:
                    return None
                if response.status_code != 200:
                    raise UpstreamError("upstream.unavailable", f"{url} answered {response.status_code}.")
                return self._read(response, url, max_bytes)
        except httpx.HTTPError as exc:
            raise UpstreamError("upstream.unavailable", f"{url}: {type(exc).__name__}: {exc}") from exc

    def _read(self, response: httpx.Response, url: str, max_bytes: int) -> bytes:
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise UpstreamError("upstream.too_large", f"{url} is {declared} bytes; the limit is {max_bytes}.")
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > max_bytes:
                raise UpstreamError("upstream.too_large", f"{url} is over the limit of {max_bytes} bytes.")
            if time.monotonic() > self.deadline:
                raise UpstreamError("upstream.unavailable", f"{url} did not finish within the fetch's deadline.")
        return bytes(body)

    def document(self, url: str) -> dict | None:
        body = self.get(url, max_bytes=self.limits.max_document_bytes)
        if body is None:
            return None
        try:
            found = json.loads(body)
        except ValueError:
            raise UpstreamError("upstream.answer_invalid", f"{url} did not answer JSON.") from None
        if not isinstance(found, dict):
            raise UpstreamError("upstream.answer_invalid", f"{url} did not answer a JSON object.")
        return found

    def archive(self, version: UpstreamVersion) -> bytes:
        data = self.get(version.url, max_bytes=self.limits.max_archive_bytes)
        if data is None:
            raise UpstreamError("upstream.unavailable", f"{version.url} answered 404 for a version it announced.")
        actual = hashlib.sha256(data).hexdigest()
        if actual != version.sha256:
            raise UpstreamError(
                "upstream.digest_mismatch",
                f"{version.url} has sha256 {actual}; the upstream announced {version.sha256}.",
            )
        return data


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UpstreamError("upstream.foreign_url", f"{url!r} is not an http(s) URL.")
    return parts.scheme, parts.hostname, parts.port


def _sha256(text: object) -> str:
    digest = str(text or "").lower().removeprefix("sha256:")
    if len(digest) != 64 or not set(digest) <= _SHA256_HEX:
        raise UpstreamError("upstream.answer_invalid", f"{str(text)[:80]!r} is not a sha256 digest.")
    return digest


class SkillyardUpstream:
    """Another Skillyard registry, through its public API v1 (anonymous: public skills only)."""

    def __init__(self, url: str, limits: FetchLimits) -> None:
        self.url = url.rstrip("/")
        self._fetch = _Fetcher(self.url, limits)

    def skill(self, name: str) -> UpstreamSkill | None:
        found = self._fetch.document(f"{self.url}/api/v1/skills/{quote(name, safe='')}")
        if found is None:
            return None
        try:
            versions = tuple(self._version(name, row) for row in found["versions"] if row.get("status") == "published")
            tags = {str(tag): str(v) for tag, v in (found.get("dist_tags") or {}).items()}
            return UpstreamSkill(name=name, owner=str(found.get("owner") or ""), versions=versions, dist_tags=tags)
        except (KeyError, TypeError, AttributeError):
            raise UpstreamError("upstream.answer_invalid", f"{self.url}: {name} is not a skill detail.") from None

    def _version(self, name: str, row: dict) -> UpstreamVersion:
        version = str(row["version"])
        url = f"{self.url}/api/v1/skills/{quote(name, safe='')}/versions/{quote(version, safe='')}/download"
        return UpstreamVersion(version=version, sha256=_sha256(row["sha256"]), url=url, yanked=bool(row.get("yanked")))

    def archive(self, version: UpstreamVersion) -> bytes:
        return self._fetch.archive(version)


class AgentSkillsUpstream:
    """A site's agent-skills discovery index (0.2.0): ``archive`` entries only (a ``skill-md``
    entry is a lone SKILL.md, not a version's archive). ``url`` is the site (the index is at its
    well-known path) or the index itself (a URL ending in ``.json``)."""

    def __init__(self, url: str, limits: FetchLimits) -> None:
        self.url = url.rstrip("/")
        self.index_url = self.url if self.url.endswith(".json") else self.url + AGENT_SKILLS_INDEX
        self._fetch = _Fetcher(self.url, limits)

    def skill(self, name: str) -> UpstreamSkill | None:
        index = self._fetch.document(self.index_url)
        entries = (index or {}).get("skills")
        if not isinstance(entries, list):
            raise UpstreamError("upstream.answer_invalid", f"{self.index_url} has no skills list.")
        for entry in entries:
            if isinstance(entry, dict) and entry.get("name") == name and entry.get("type") == "archive":
                return UpstreamSkill(name=name, owner="", versions=(self._version(entry),))
        return None

    def _version(self, entry: dict) -> UpstreamVersion:
        url = urljoin(self.index_url, str(entry.get("url") or ""))
        version = str(entry["version"]) if entry.get("version") else None
        return UpstreamVersion(version=version, sha256=_sha256(entry.get("digest")), url=url)

    def archive(self, version: UpstreamVersion) -> bytes:
        return self._fetch.archive(version)


def upstream_client(*, url: str, kind: UpstreamKind, limits: FetchLimits) -> Upstream:
    """A client for one fetch (its deadline starts now)."""
    if kind == UpstreamKind.AGENT_SKILLS:
        return AgentSkillsUpstream(url, limits)
    return SkillyardUpstream(url, limits)
