"""What a version's checks and its owner's marks say, in words, for every surface (DESIGN §13).

Visibility is decided by the selectors (a version the scan found malicious does not exist for
anyone but its owner's members: ``Skill.objects.visible_to`` hides a skill with nothing else to
show, ``selectors`` hide the version); this module says how a version that *is* shown is
labelled, so the catalog's cards and pages, the badge and the API all say the same thing:

- ``labels``: every mark a version carries (malicious, warn, review, tests failing, tests error,
  yanked, deprecated), each with a level (danger, warning, notice) and the owner's words;
- ``badge``: the worst of the scan and the tests, in a word and a colour.

Pure: it reads the version's recorded fields, never the database.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

MALICIOUS = "malicious"

# (kind, level, text) of each scan verdict and test result that is worth a label; pass, passed,
# none and pending are not (a badge still says them).
_SCAN = {
    "malicious": ("danger", "malicious: blocked, the scan found it harmful"),
    "warn": ("warning", "scan warnings: read the findings before installing"),
    "review": ("notice", "scan: worth a review"),
}
_TESTS = {
    "failed": ("warning", "tests failing"),
    "error": ("warning", "tests could not run"),
}

# The badge's right half, worst first: the first that applies is shown.
_BADGE = (
    ("scan", "malicious", "malicious", "#b00020"),
    ("scan", "warn", "warn", "#c75000"),
    ("tests", "failed", "tests failing", "#c75000"),
    ("tests", "error", "tests error", "#9e6a00"),
    ("scan", "review", "review", "#9e6a00"),
)
PASS_COLOR, PENDING_COLOR, DEPRECATED_COLOR = "#2e7d32", "#6b6b6b", "#6b6b6b"


@dataclass(frozen=True)
class Label:
    kind: str  # malicious | warn | review | tests_failed | tests_error | yanked | deprecated
    level: str  # danger | warning | notice
    text: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def labels(
    *,
    scan_verdict: str = "",
    test_result: str = "",
    yanked: bool = False,
    yanked_reason: str = "",
    deprecated: str = "",
) -> list[Label]:
    """Every mark of one version, worst first."""
    found = []
    if scan_verdict in _SCAN:
        level, text = _SCAN[scan_verdict]
        found.append(Label(scan_verdict, level, text))
    if test_result in _TESTS:
        level, text = _TESTS[test_result]
        found.append(Label(f"tests_{test_result}", level, text))
    if yanked:
        found.append(Label("yanked", "warning", f"yanked: {yanked_reason}" if yanked_reason else "yanked"))
    if deprecated:
        found.append(Label("deprecated", "notice", f"deprecated: {deprecated}"))
    return found


def version_labels(version) -> list[Label]:  # noqa: ANN001
    """The labels of a SkillVersion (or anything with its five fields)."""
    return labels(
        scan_verdict=version.scan_verdict,
        test_result=version.test_result,
        yanked=version.yanked,
        yanked_reason=version.yanked_reason,
        deprecated=version.deprecated,
    )


def badge(*, version: str | None, scan_verdict: str, test_result: str, deprecated: str = "") -> tuple[str, str]:
    """(text, colour) of a skill's badge: ``v1.2.0 | tests failing``. A pending check is not a
    pass: the badge says pass only when the scan passed and the tests did not fail."""
    values = {"scan": scan_verdict, "tests": test_result}
    word, color = "", ""
    for check, value, text, colour in _BADGE:
        if values[check] == value:
            word, color = text, colour
            break
    if not word:
        if not scan_verdict:
            word, color = "checks pending", PENDING_COLOR
        elif deprecated:
            word, color = "deprecated", DEPRECATED_COLOR
        else:
            word, color = "pass", PASS_COLOR
    return f"v{version or 'none'} | {word}", color
