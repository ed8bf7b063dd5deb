"""The scan check's engine: skillctl's scanner over the stored archive (no database here)."""

from __future__ import annotations

from skillctl.format.scanner import scan_archive


def scan(*, archive: bytes, digest: str) -> dict:
    """{"verdict", "findings": [...]} (docs/scanner.md)."""
    return scan_archive(archive).to_dict()
