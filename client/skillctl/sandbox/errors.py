"""Errors of the sandbox: each has a stable code and a hint (see skillctl.errors)."""

from __future__ import annotations

from skillctl.errors import SkillctlError


class SandboxUnavailable(SkillctlError):
    """No backend can run the skill here; we refuse rather than run it unsandboxed."""

    code = "sandbox.unavailable"


class SandboxRequestError(SkillctlError):
    """The request cannot be run: no entrypoint, a missing skill folder, a bad backend name."""

    code = "sandbox.request"
