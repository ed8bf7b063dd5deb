"""A skill's summary (description, category, tags, check results) for list and search: its
default version's.

The default version is the one list, detail and download serve (``selectors.default_version``:
the explicit ``latest`` tag, else the highest non-yanked stable version). Every write that can
change it (publish, yank, unyank, the ``latest`` tag, version delete) refreshes the summary.
"""

from __future__ import annotations

from registry.models import Skill
from registry.selectors import skill_latest_versions


def skill_summary_refresh(*, skill: Skill) -> None:
    default = skill_latest_versions(skill_ids=[skill.id])[skill.id]
    version = (
        skill.versions.live().filter(version=default).only("manifest", "scan_verdict", "test_result").first()
        if default
        else None
    )
    if version is None:
        return  # nothing served (all yanked or deleted): the last summary stays, for search
    manifest = version.manifest
    tags = [str(t) for t in manifest.get("tags") or []]
    summary = {
        "description": str(manifest.get("description") or ""),
        "category": str(manifest.get("category") or ""),
        "tags": tags,
        "tags_index": "," + ",".join(t.lower() for t in tags) + "," if tags else "",
        # the checks' results the list shows: the default version's (a yank or a malicious
        # verdict can make another version the default)
        "scan_verdict": version.scan_verdict,
        "test_result": version.test_result,
    }
    if all(getattr(skill, field) == value for field, value in summary.items()):
        return
    for field, value in summary.items():
        setattr(skill, field, value)
    skill.save(update_fields=[*summary, "updated_at"])
