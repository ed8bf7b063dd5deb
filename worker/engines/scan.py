"""The scan check's engine: skillctl's scanner over the stored archive (no database here)."""

from __future__ import annotations

from skillctl.format import scanner


def scan(*, archive: bytes, digest: str) -> dict:
    """{"verdict", "rules_version", "findings": [...]} (docs/scanner.md)."""
    return scanner.scan_archive(archive).to_dict()


def rules_version() -> str:
    """The scanner's rule set now: a verdict from another one is re-judged (``checks.rescan``)."""
    return scanner.RULES_VERSION
