"""Archive and file limits (DESIGN section 4). Each is a setting; each number says why."""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1024 * 1024
# A yank reason or deprecation message: shown in listings and CLI warnings, a paragraph, not an
# essay. The registry's columns, its API and `skillctl yank --reason` share it.
MAX_REASON_CHARS = 500
# Release notes published with a version: a page at most; a longer history belongs in a
# CHANGELOG file inside the skill.
MAX_CHANGELOG_CHARS = 10_000


@dataclass(frozen=True)
class Limits:
    # A skill is instructions plus a few scripts; 50 MiB leaves room for assets and stops abuse.
    max_archive_bytes: int = 50 * MiB
    # Counted while streaming, so a bomb fails at the limit instead of inflating to the end.
    max_unpacked_bytes: int = 50 * MiB
    # Text compresses ~10x, rarely beyond 100x; more than that on a large member is a bomb.
    max_compression_ratio: float = 100.0
    # Ratio is only judged on members at least this large: tiny files compress absurdly well.
    ratio_min_member_bytes: int = 1 * MiB
    # No real skill has a thousand files; it keeps file lists and per-file digests cheap.
    max_entries: int = 1000
    # Deeper nesting has no use in a skill and defeats tools with recursion limits.
    max_depth: int = 16
    # 255 bytes is the common file-name limit of filesystems and of tar's ustar format.
    max_path_bytes: int = 255
    # Agents load SKILL.md whole into context; a megabyte is already far past useful.
    max_skill_md_bytes: int = 1 * MiB


DEFAULT_LIMITS = Limits()
