"""One pass over an archive's members: path checks, digests, and where the skill is.

Format-blind: ``archive.inspect_archive`` feeds it the members ``_zip``/``_tar`` read and
copies the result onto the inspection.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skillctl.format._entries import (
    CHUNK,
    DIR,
    FILE,
    Member,
    check_path,
    collisions,
    kind_problem,
    location,
    reading,
    refused,
)
from skillctl.format.findings import Finding, error
from skillctl.format.limits import Limits
from skillctl.format.report import FileEntry

if TYPE_CHECKING:
    from skillctl.format.archive import ArchiveInspection

SKILL_MD = "skill.md"  # compared case-folded: load_skill accepts skill.md too, with a warning
SKILL_JSON = "skill.json"


@dataclass
class Entry:
    parts: tuple[str, ...]
    kind: str
    size: int = 0
    sha256: str = ""


class Scan:
    """Collects entries while they stream by: path checks, digests, SKILL.md candidates."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.findings: list[Finding] = []
        self.entries: list[Entry] = []
        self.kept: dict[tuple[str, ...], bytes] = {}  # SKILL.md / skill.json candidates
        self.kept_top: str | None = None  # the one top-level folder whose candidates are kept
        self.unpacked = 0

    def add(self, member: Member) -> None:
        parts, problems = check_path(member.name, self.limits)
        problem = kind_problem(member)
        if problems or problem:
            self.findings += [*problems, *([problem] if problem else [])]
        elif parts:
            entry = Entry(parts, member.kind)
            if member.kind == FILE:
                entry.size, entry.sha256 = self._read(member, parts)
            self.entries.append(entry)
        elif member.kind != DIR:  # "./" names the archive's own root folder; a file cannot
            self.findings.append(error("archive.path_empty", "an entry has an empty name", location(member.name)))

    def _read(self, member: Member, parts: tuple[str, ...]) -> tuple[int, str]:
        keep, cap = self._keep(parts), self.limits.max_skill_md_bytes + 1
        digest, size, kept = hashlib.sha256(), 0, bytearray()
        with reading(member) as stream:
            while chunk := stream.read(CHUNK):
                size += len(chunk)
                self.unpacked += len(chunk)
                if size > member.size:
                    raise refused(
                        "archive.truncated",
                        "more data than the header declares",
                        location(member.name),
                    )
                if self.unpacked > self.limits.max_unpacked_bytes:
                    raise refused(
                        "archive.unpacked_too_large",
                        f"unpacks to more than {self.limits.max_unpacked_bytes} bytes",
                    )
                digest.update(chunk)
                if keep and len(kept) < cap:
                    kept += chunk[: cap - len(kept)]
        if size != member.size:
            raise refused("archive.truncated", "less data than the header declares", location(member.name))
        if keep:
            self.kept[parts] = bytes(kept)
        return size, digest.hexdigest()

    def _keep(self, parts: tuple[str, ...]) -> bool:
        """Keep SKILL.md and skill.json at the root, or in the first top-level folder seen."""
        if parts[-1].casefold() not in (SKILL_MD, SKILL_JSON) or len(parts) > 2:
            return False
        if len(parts) == 2:
            self.kept_top = self.kept_top or parts[0]
            return parts[0] == self.kept_top
        return True

    def finish(self, inspection: ArchiveInspection, *, skill: bool = True) -> None:
        self.findings += collisions([(e.parts, e.kind) for e in self.entries])
        root, problem = find_root(self.entries) if skill else ((), None)
        if problem is not None and not self.findings:
            self.findings.append(problem)
        if root is not None:
            self._describe(root, inspection)
        inspection.findings += self.findings

    def _describe(self, root: tuple[str, ...], inspection: ArchiveInspection) -> None:
        inspection.root = "/".join(root)
        n = len(root)
        files = [e for e in self.entries if e.kind == FILE and e.parts[:n] == root]
        inspection.files = sorted(
            (FileEntry("/".join(e.parts[n:]), e.size, e.sha256) for e in files),
            key=lambda f: f.path,
        )
        for entry in files:
            if len(entry.parts) != n + 1:
                continue
            name = entry.parts[-1].casefold()
            if name == SKILL_JSON:
                inspection.skill_json = self.kept.get(entry.parts)
            elif name == SKILL_MD and entry.size > self.limits.max_skill_md_bytes:
                self.findings.append(
                    error(
                        "archive.skill_md_too_large",
                        f"SKILL.md is {entry.size} bytes (max {self.limits.max_skill_md_bytes})",
                        location("/".join(entry.parts)),
                    )
                )
            elif name == SKILL_MD:
                inspection.skill_md = self.kept.get(entry.parts)


def find_root(entries: list[Entry]) -> tuple[tuple[str, ...] | None, Finding | None]:
    """SKILL.md at the root, or inside the one and only top-level folder."""
    files = [e.parts for e in entries if e.kind == FILE]
    if any(len(p) == 1 and p[0].casefold() == SKILL_MD for p in files):
        return (), None
    homes = sorted({p[0] for p in files if len(p) == 2 and p[1].casefold() == SKILL_MD})
    if not homes:
        return None, error("archive.no_skill_md", "no SKILL.md at the root or in a single top-level folder")
    if len(homes) > 1:
        return None, error("archive.multiple_roots", f"SKILL.md in several folders: {', '.join(homes)}")
    others = sorted({e.parts[0] for e in entries} - {homes[0]})
    if others:
        finder = " (macOS Finder adds __MACOSX; `skillctl pack` makes a clean archive)" if "__MACOSX" in others else ""
        return None, error(
            "archive.multiple_roots", f"entries beside the skill folder: {', '.join(others[:5])}{finder}"
        )
    return (homes[0],), None
