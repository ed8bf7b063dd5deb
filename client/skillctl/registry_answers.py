"""How a registry's answers are read: a refusal into the error its status means (RFC 9457
problem details, a stable code, a hint, the exit code), and the digests a download announces.

:class:`~skillctl.registry_client.RegistryClient` sends the requests; this module only reads
what came back, so the mapping of statuses to codes is stated once.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from skillctl.errors import IntegrityError, NetworkError, SkillctlError
from skillctl.transport import httpx

_LOGIN_HINT = "Run `skillctl login --registry {name}` with a token that has access."


class RegistryError(SkillctlError):
    """A refusal from the registry, with its status and problem-details ``errors``."""

    def __init__(self, message: str, *, status: int, errors: list[dict] | None = None, **kw: Any):
        super().__init__(message, **kw)
        self.status = status
        self.errors = errors or []

    def to_dict(self) -> dict:
        return {**super().to_dict(), "status": self.status, "errors": self.errors}


def _problem(response: httpx.Response) -> tuple[str, list[dict]]:
    """The detail and ``errors`` of an RFC 9457 problem document (tolerant of other bodies)."""
    try:
        body = response.json()
    except ValueError:
        return (response.text.strip()[:200] or response.reason_phrase), []
    if not isinstance(body, dict):
        return response.reason_phrase, []
    detail = str(body.get("detail") or body.get("title") or response.reason_phrase)
    errors = [e for e in body.get("errors") or [] if isinstance(e, dict)]
    return detail, errors


def _suggestions(body: bytes) -> list[str]:
    """The nearest names a registry offers with a skill 404 (``suggestions``, our extra member)."""
    try:
        found = json.loads(body).get("suggestions")
    except (ValueError, AttributeError):
        return []
    return [str(name) for name in found if isinstance(name, str)][:5] if isinstance(found, list) else []


def format_errors(errors: list[dict]) -> str:
    lines = []
    for e in errors:
        where = f" ({e['path']})" if e.get("path") else ""
        lines.append(f"  - {e.get('code', 'error')}: {e.get('message', '')}{where}")
    return "\n".join(lines)


# status -> (error code, hint template); {name} is the registry's name.
_REFUSALS: dict[int, tuple[str, str]] = {
    400: ("registry.bad_request", "This is a client bug if it persists; run with --debug and report it."),
    401: ("registry.unauthorized", _LOGIN_HINT),
    403: ("registry.forbidden", "Your token lacks the scope or the owner; " + _LOGIN_HINT),
    404: ("registry.not_found", "Check the name with `skillctl search`; private skills need `skillctl login`."),
    409: ("registry.conflict", "Published versions are immutable: bump `version` and publish again."),
    413: (
        "registry.too_large",
        "The archive is over this registry's size limit; remove large assets (or move them out of the skill).",
    ),
    422: ("registry.invalid", "Fix what the registry names above; `skillctl validate PATH` checks a skill locally."),
}


def status_error(registry: str, what: str, status: int, headers: httpx.Headers, body: bytes) -> SkillctlError:
    """The error an answer of ``status`` (400 or more) means, naming the registry and the request."""
    detail, errors = _problem(httpx.Response(status, headers=headers, content=body))
    message = f"{registry}: {what}: {detail} (HTTP {status})"
    if errors:
        message += "\n" + format_errors(errors)
    if status in _REFUSALS:
        code, hint = _REFUSALS[status]
        hint = hint.format(name=registry)
        if nearest := _suggestions(body) if status == 404 else []:
            hint = f"Did you mean {', '.join(nearest)}? {hint}"
        return RegistryError(message, status=status, errors=errors, code=code, hint=hint)
    if status == 429:
        wait = headers.get("Retry-After", "a few")
        return NetworkError(
            message, hint=f"The registry is throttling; retry in {wait} seconds.", code="registry.throttled"
        )
    return NetworkError(
        message,
        hint="The registry failed; retry later or tell its operators.",
        code="registry.server_error" if status >= 500 else "registry.unexpected_status",
    )


def digests_from_headers(headers: httpx.Headers) -> dict[str, str]:
    """The archive sha256 (hex) the registry announces, by header name."""
    found: dict[str, str] = {}
    if value := headers.get("X-Checksum-Sha256"):
        found["X-Checksum-Sha256"] = value.strip().lower()
    for name, pattern in (
        ("Repr-Digest", r"sha-256\s*=\s*:([A-Za-z0-9+/=_-]+):"),  # RFC 9530
        ("Digest", r"sha-256\s*=\s*([A-Za-z0-9+/=_-]+)"),  # RFC 3230
    ):
        m = re.search(pattern, headers.get(name, ""), re.IGNORECASE)
        if m:
            try:
                found[name] = base64.b64decode(m.group(1), validate=False).hex()
            except (binascii.Error, ValueError):
                found[name] = f"undecodable:{m.group(1)}"
    return found


def check_digests(what: str, actual: str, claimed: dict[str, str]) -> None:
    for source, value in claimed.items():
        if value != actual:
            raise IntegrityError(
                f"sha256 of {what} is {actual}, but {source} says {value}",
                hint="Nothing was kept. Retry; if it persists, the registry or something in "
                "between is serving other bytes: report it.",
                code="integrity.sha256_mismatch",
            )


def too_large(what: str, size: int, limit: int) -> SkillctlError:
    return SkillctlError(
        f"{what} is larger than the {limit // (1024 * 1024)} MiB archive limit ({size} bytes)",
        hint="The registry should never serve this; report it to its operators.",
        code="download.too_large",
    )
