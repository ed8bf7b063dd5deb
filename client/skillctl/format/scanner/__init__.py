"""The security scanner: what a skill's files would make an agent (or a machine) do.

Pure code the registry's scan check and ``skillctl scan`` share. Nothing is executed: files are
read as text (binaries only recognised), line by line. Each finding names its rule (stable id,
``RULES``), a severity, the file and line, and a short excerpt. The verdict policy:

- ``malicious``: any critical finding (the registry refuses to serve it to non-members);
- ``warn``: any high finding (``skillctl install`` shows the findings and asks);
- ``review``: any medium finding;
- ``pass``: nothing, or only low and info findings.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from skillctl.format.scanner.rules import RULES, RULES_VERSION, SEVERITIES, Rule
from skillctl.format.scanner.scan import scan_tree

VERDICTS = ("pass", "review", "warn", "malicious")
_VERDICT_OF = {"critical": "malicious", "high": "warn", "medium": "review"}


@dataclass(frozen=True)
class ScanFinding:
    rule: str
    severity: str
    path: str
    line: int | None
    message: str
    excerpt: str = ""


@dataclass
class ScanReport:
    findings: list[ScanFinding] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        worst = max((SEVERITIES.index(f.severity) for f in self.findings), default=0)
        return _VERDICT_OF.get(SEVERITIES[worst], "pass")

    def to_dict(self) -> dict:
        return {
            "verdict": self.verdict,
            "rules_version": RULES_VERSION,
            "findings": [asdict(f) for f in self.findings],
        }


def scan_folder(path: str | os.PathLike) -> ScanReport:
    """Scan a skill folder (or the folder of a SKILL.md)."""
    root = Path(path)
    if root.is_file():
        root = root.parent
    return ScanReport([ScanFinding(**f) for f in scan_tree(root)])


def scan_archive(source: bytes | str | os.PathLike) -> ScanReport:
    """Scan an archive (.zip / .tar.gz): extracted with the format's own checks, then scanned."""
    from skillctl.format import extract_archive

    with tempfile.TemporaryDirectory(prefix="skillyard-scan-") as tmp:
        root = extract_archive(source, Path(tmp) / "skill")
        return scan_folder(root)


__all__ = ["RULES", "RULES_VERSION", "VERDICTS", "Rule", "ScanFinding", "ScanReport", "scan_archive", "scan_folder"]
