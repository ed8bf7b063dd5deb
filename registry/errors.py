"""The one error type of the registry's services, with stable codes.

Services raise these; the API turns them into RFC 9457 problem details (registry/api/problems.py)
and the catalog into pages. Tests assert ``code``, never the wording.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RegistryError(Exception):
    code: str
    message: str
    errors: list[dict] = field(default_factory=list)  # [{code, message, path}]
    status = 400

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class BadRequest(RegistryError):
    status = 400


class Unauthenticated(RegistryError):
    status = 401


class Forbidden(RegistryError):
    status = 403


class NotFound(RegistryError):
    status = 404


class Conflict(RegistryError):
    status = 409


class TooLarge(RegistryError):
    status = 413


class Invalid(RegistryError):
    status = 422


def not_found(what: str = "skill") -> NotFound:
    """The single answer for missing *and* invisible things: private means 404, never 403."""
    return NotFound(f"{what}.not_found", f"No such {what}, or you may not see it.")
