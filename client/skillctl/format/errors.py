"""The one error type users see, defined in the pure part so the server can raise and catch it.

Every failure is a :class:`SkillctlError` carrying a message (what went wrong), a hint (what to
do), a stable ``area.problem`` code and an exit code. The CLI maps it to stderr and an exit
status in one place (``skillctl.cli.main``); its CLI-only kinds (usage, network, integrity) are
in :mod:`skillctl.errors`.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILURE = 1  # the command ran and found a problem (invalid skill, failed check, ...)
    USAGE = 2  # bad arguments or options
    NETWORK = 3  # a registry or the network failed us
    INTEGRITY = 4  # a digest did not match: refused to install or trust the bytes


class SkillctlError(Exception):
    """An error with a message, a hint, a stable code and an exit code."""

    exit_code: ExitCode = ExitCode.FAILURE
    code: str = "cli.failed"

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
