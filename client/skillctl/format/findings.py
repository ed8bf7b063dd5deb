"""Findings: what validation says about a skill, with stable codes.

Tests and clients assert the ``code``; the ``message`` wording may change. Every code that can
be emitted is listed in :data:`CODES` with a one-line meaning (``skillctl validate --codes``
prints them, and a test checks nothing is emitted that is not listed).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"  # the skill cannot be published or installed
    WARNING = "warning"  # reported, never blocks (unless --strict promotes it)


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    location: str = ""  # "SKILL.md:3", "frontmatter.name", "archive:foo/../x", ...
    severity: Severity = Severity.ERROR

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("severity")
        return d


def error(code: str, message: str, location: str = "") -> Finding:
    assert code in CODES, f"unlisted finding code {code}"
    return Finding(code, message, location, Severity.ERROR)


def warning(code: str, message: str, location: str = "") -> Finding:
    assert code in CODES, f"unlisted finding code {code}"
    return Finding(code, message, location, Severity.WARNING)


CODES: dict[str, str] = {
    # --- the skill's files -------------------------------------------------------------
    "skill.missing": "no SKILL.md where one was expected",
    "skill.not_found": "the path does not exist",
    "skill.unreadable": "the path could not be read (permissions, I/O error)",
    "skill.too_large": "SKILL.md is over the size limit (1 MiB)",
    "skill.not_utf8": "SKILL.md is not valid UTF-8",
    "skill.bom": "SKILL.md starts with a UTF-8 byte order mark",
    "skill.too_long": "SKILL.md body is over 500 lines (agents load it whole)",
    "skill.json_invalid": "skill.json beside SKILL.md is not valid JSON or not an object",
    "skill.filename_case": "the file is named skill.md, not SKILL.md (some clients miss it)",
    "skill.unsupported_input": "the path is neither a folder, a SKILL.md, a .zip nor a .tar.gz",
    # --- frontmatter -------------------------------------------------------------------
    "frontmatter.missing": "SKILL.md does not start with a --- frontmatter block",
    "frontmatter.unclosed": "the frontmatter block has no closing --- line",
    "frontmatter.invalid_yaml": "the frontmatter is not valid YAML",
    "frontmatter.not_mapping": "the frontmatter is not a mapping of keys to values",
    "frontmatter.lenient_parse": "the frontmatter needed quoting of values containing ': ' to parse",
    "frontmatter.flow_style": "flow-style YAML ({...} or [...]) is not portable to all clients",
    "frontmatter.unknown_key": "a top-level key no known system defines",
    "frontmatter.too_complex": "the frontmatter nests too deeply or expands too far (YAML aliases)",
    "frontmatter.duplicate_key": "a key appears twice in the frontmatter",
    # --- fields --------------------------------------------------------------------------
    "name.missing": "the name field is missing or empty",
    "name.too_long": "the name is over 64 characters",
    "name.pattern": "the name is not lowercase letters, digits and single hyphens",
    "name.folder_mismatch": "the name differs from the folder the skill is in",
    "name.from_folder": "no name field: the skill is named after its folder (seed 003); add `name:` to publish it portably",
    "description.missing": "the description field is missing or empty",
    "description.too_long": "the description is over 1024 characters",
    "link.missing": "SKILL.md links to a file the skill does not contain",
    "description.placeholder": "the description is the placeholder `skillctl init` wrote: say what the skill does and when to use it",
    "body.placeholder": "the body is the placeholder `skillctl init` wrote: give the agent its instructions",
    "compatibility.too_long": "the compatibility field is over 500 characters",
    "field.type": "a known field has the wrong type",
    "field.value": "a known field has a value outside what it allows",
    "version.invalid": "the version is not a semantic version",
    "version.normalised": "the version was completed or cleaned to semver (1.0 -> 1.0.0, v1.2.3 -> 1.2.3)",
    "metadata.value_type": "a metadata value is not a string",
    "metadata.json_inline": "metadata is single-line JSON (OpenClaw style); `skillctl migrate` rewrites it",
    "license.missing": "no license field",
    "spec.extension_field": "a field outside the Agent Skills specification (--strict)",
    "mcp.command_not_found": "the mcp block's command is not on this machine's PATH (a warning: it may be elsewhere)",
    "mcp.timeout_unit": "a bare idle_timeout under a minute: seconds to skillctl, minutes to seed 003 (write 10s or 10m)",
    # --- archives (DESIGN section 4) ---------------------------------------------------
    "archive.not_archive": "the file is not a zip or tar.gz archive",
    "archive.empty": "the archive has no entries",
    "archive.truncated": "the archive is truncated or corrupt",
    "archive.too_large": "the archive file is over the size limit",
    "archive.unpacked_too_large": "the archive unpacks to more than the limit",
    "archive.too_many_entries": "the archive has more entries than the limit",
    "archive.compression_ratio": "a member's compression ratio is over the limit (a bomb)",
    "archive.path_absolute": "an entry has an absolute path",
    "archive.path_traversal": "an entry's path contains '..'",
    "archive.path_backslash": "an entry's path contains a backslash",
    "archive.path_drive": "an entry's path starts with a drive letter",
    "archive.path_control_char": "an entry's path contains a control character",
    "archive.path_too_deep": "an entry is nested deeper than the limit",
    "archive.path_too_long": "an entry's path is longer than the limit (bytes)",
    "archive.path_empty": "an entry has an empty name",
    "archive.symlink": "an entry is a symbolic link",
    "archive.hardlink": "an entry is a hard link",
    "archive.special_file": "an entry is a device, FIFO or other special file",
    "archive.duplicate_entry": "two entries have the same path",
    "archive.name_collision": "two entries' paths collide after NFC normalisation and case folding",
    "archive.multiple_roots": "more than one top-level folder, or SKILL.md found in more than one place",
    "archive.no_skill_md": "no SKILL.md at the root or inside the single top-level folder",
    "archive.encrypted": "a zip entry is encrypted",
    "archive.compression_method": "a zip entry uses a compression other than stored or deflate",
    "archive.leading_data": "there is data before the archive, or data its structure does not account for",
    "archive.header_mismatch": "a zip entry's local header disagrees with the central directory",
    "archive.path_encoding": "an entry's path is not valid UTF-8",
    "archive.skill_md_too_large": "SKILL.md inside the archive is over 1 MiB",
}
