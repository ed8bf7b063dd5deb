"""The whole shared corpus (3,987 real skills): a verdict for each, no crash, >= 90% accepted.

Every rejection under the default policy must be for a reason DESIGN section 3 lists as an
error; ``--strict`` must reject the skills that use extension fields.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from skillctl.format.findings import CODES
from skillctl.format.load import load_skill

# DESIGN section 3's errors: no SKILL.md, no/unparseable frontmatter, name/description/
# compatibility rules, bad types (and values) of known fields, and the SKILL.md limits of section 4.
SECTION_3_ERRORS = {
    "skill.missing", "skill.too_large", "skill.not_utf8", "skill.json_invalid",
    "frontmatter.missing", "frontmatter.unclosed", "frontmatter.invalid_yaml",
    "frontmatter.not_mapping", "frontmatter.too_complex",
    "name.missing", "name.too_long", "name.pattern",
    "description.missing", "description.too_long", "compatibility.too_long",
    "field.type", "field.value", "version.invalid",
}  # fmt: skip
SPEC_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}


def skill_folders(corpus: Path) -> list[Path]:
    return sorted(
        Path(dirpath) for dirpath, _dirs, files in os.walk(corpus) if any(name.lower() == "skill.md" for name in files)
    )


@pytest.fixture(scope="module")
def reports(corpus_dir):
    folders = skill_folders(corpus_dir)
    assert len(folders) >= 3900, "the corpus should hold 3,987 skills"
    return {folder: load_skill(folder) for folder in folders}


def test_every_corpus_skill_gets_a_verdict_and_90_percent_are_accepted(reports, record_property):
    accepted = sum(r.valid for r in reports.values())
    rate = accepted / len(reports)
    record_property("corpus_acceptance", f"{accepted}/{len(reports)} = {rate:.1%}")
    print(f"\ncorpus: {accepted}/{len(reports)} accepted ({rate:.1%}) by the default policy")
    assert all(f.code in CODES for r in reports.values() for f in r.findings)
    assert rate >= 0.90


def test_every_rejection_is_for_a_section_3_error(reports):
    reasons = Counter(f.code for r in reports.values() for f in r.errors)
    print(f"\nrejection reasons: {dict(reasons.most_common())}")
    assert set(reasons) <= SECTION_3_ERRORS


def test_strict_rejects_the_skills_using_extension_fields(reports):
    users = [folder for folder, r in reports.items() if r.valid and _top_level_keys(folder) - SPEC_KEYS]
    assert len(users) > 500  # requires, version, homepage, triggers, ...
    for folder in users:
        strict = load_skill(folder, strict=True)
        assert not strict.valid
        assert "spec.extension_field" in {f.code for f in strict.errors}


def test_strict_rejects_names_differing_from_their_folder(reports):
    mismatched = [f for f, r in reports.items() if r.valid and "name.folder_mismatch" in {x.code for x in r.warnings}]
    assert mismatched
    for folder in mismatched[:200]:
        assert "name.folder_mismatch" in {f.code for f in load_skill(folder, strict=True).errors}


def _top_level_keys(folder: Path) -> set[str]:
    from skillctl.format import frontmatter

    path = next(p for p in folder.iterdir() if p.name.lower() == "skill.md")
    text = path.read_bytes().decode("utf-8", "replace").lstrip("\ufeff").replace("\r\n", "\n")
    block = frontmatter.split(text, "SKILL.md")
    if block.findings:
        return set()
    frontmatter.load(block, "SKILL.md")
    return {str(k) for k in (block.data or {})}
