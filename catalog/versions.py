"""What a version page says about the skill's other versions and its checks in progress: the
versions list (dist-tags, downloads, "compare with previous"), whether a newer version exists,
and whether checks are still running (the page then refreshes itself: static/catalog/live.js)."""

from __future__ import annotations

from dataclasses import dataclass, field

from registry.models import SkillVersion, VersionCheck
from registry.selectors import skill_version_checks
from skillctl.format.versions import sort_key

# A check in these states is not finished: the page says so and live.js polls until it is.
RUNNING_STATES = frozenset({VersionCheck.Status.PENDING, VersionCheck.Status.RUNNING})


@dataclass(frozen=True)
class VersionRow:
    version: SkillVersion
    tags: list[str] = field(default_factory=list)  # dist-tags pointing at it (latest, beta...)
    previous: str | None = None  # the next lower version shown, to compare with


def version_rows(versions: list[SkillVersion], dist_tags: dict[str, str]) -> list[VersionRow]:
    """``versions`` (highest first, as ``selectors.skill_versions`` gives them) with their tags
    and the version just below each."""
    tags: dict[str, list[str]] = {}
    for tag, version in sorted(dist_tags.items()):
        tags.setdefault(version, []).append(tag)
    return [
        VersionRow(sv, tags.get(sv.version, []), versions[i + 1].version if i + 1 < len(versions) else None)
        for i, sv in enumerate(versions)
    ]


def newer_version(shown: str, dist_tags: dict[str, str]) -> str | None:
    """The skill's default version when it is higher than the one shown (an old version's page
    points to it); None on the default's own page or a newer prerelease's."""
    latest = dist_tags.get("latest")
    if latest is None or latest == shown:
        return None
    return latest if sort_key(latest) > sort_key(shown) else None


def checks_running(checks: dict[str, dict]) -> bool:
    return any(check.get("status") in RUNNING_STATES for check in checks.values())


def published_message(sv: SkillVersion) -> str:
    """What the publish form's redirect says on the new version's page."""
    running = checks_running(skill_version_checks(version=sv))
    return f"Published {sv.skill.name} {sv.version}" + ("; checks running" if running else "")


def install_lines(*, name: str, version: str, registry_url: str) -> dict[str, str]:
    """Every command a version page offers to copy: skillctl (plain, pinned, with this
    registry) and the ``skills`` CLI most people already have."""
    return {
        "install": f"skillctl install {name}",
        "install_pinned": f"skillctl install '{name}@{version}'",
        "install_registry": f"SKILLYARD_REGISTRY={registry_url} skillctl install {name}",
        "install_npx": f"npx skills add {registry_url} --skill {name}",
    }
