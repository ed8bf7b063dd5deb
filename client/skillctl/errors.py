"""The one error type users see, and the one place exit codes are defined.

Every failure a user can meet is a :class:`SkillctlError` carrying a message (what went
wrong), a hint (what to do) and an exit code. The CLI maps it to stderr + exit status in one
place (``skillctl.cli.main``); tracebacks are shown only with ``--debug``.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILURE = 1  # the command ran and found a problem (invalid skill, failed check, ...)
    USAGE = 2  # bad arguments or options
    NETWORK = 3  # a registry or the network failed us
    INTEGRITY = 4  # a digest did not match: refused to install or trust the bytes


EXIT_CODES_HELP = (
    "Exit codes: 0 ok, 1 failure found, 2 usage error, 3 network or registry error, "
    "4 integrity error (a sha256 did not match)."
)


class SkillctlError(Exception):
    """An error with a message, a hint and an exit code."""

    exit_code: ExitCode = ExitCode.FAILURE
    code: str = "error"

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        exit_code: ExitCode | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code
        if code is not None:
            self.code = code

    def to_dict(self) -> dict:
        return {
            "error": self.code,
            "message": self.message,
            "hint": self.hint,
            "exit_code": int(self.exit_code),
        }


class UsageError(SkillctlError):
    exit_code = ExitCode.USAGE
    code = "usage"


class NetworkError(SkillctlError):
    exit_code = ExitCode.NETWORK
    code = "network"


class IntegrityError(SkillctlError):
    exit_code = ExitCode.INTEGRITY
    code = "integrity"
