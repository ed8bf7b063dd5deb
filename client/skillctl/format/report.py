"""The verdict on one skill: its manifest, body, files and findings."""

from __future__ import annotations

from dataclasses import dataclass, field

from skillctl.format.findings import Finding
from skillctl.format.manifest import Manifest


@dataclass(frozen=True)
class FileEntry:
    path: str  # POSIX path relative to the skill root
    size: int
    sha256: str

    def to_dict(self) -> dict:
        return {"path": self.path, "size": self.size, "sha256": self.sha256}


@dataclass
class SkillReport:
    path: str  # the path as the user gave it
    manifest: Manifest | None = None
    body: str = ""
    findings: list[Finding] = field(default_factory=list)
    files: list[FileEntry] = field(default_factory=list)  # empty for a bare SKILL.md
    archive_sha256: str = ""  # set when the input was an archive
    archive_size: int = 0
    archive_kind: str = ""  # "zip" | "tar.gz" when the input was an archive
    root: str = ""  # the single top-level folder inside an archive, if any
    strict: bool = False

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.is_error]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if not f.is_error]

    @property
    def valid(self) -> bool:
        return self.manifest is not None and not self.errors

    @property
    def name(self) -> str | None:
        return (self.manifest.name or None) if self.manifest else None

    @property
    def version(self) -> str | None:
        if not self.manifest:
            return None
        return self.manifest.version or None

    def to_json(self) -> dict:
        """The `skillctl validate --json` line for this path (a contract)."""
        return {
            "path": self.path,
            "valid": self.valid,
            "name": self.name,
            "version": self.version,
            "errors": [f.to_dict() for f in self.errors],
            "warnings": [f.to_dict() for f in self.warnings],
        }
