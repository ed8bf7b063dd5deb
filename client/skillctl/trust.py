"""What a registry knows about a version besides its bytes, as the labels the client shows.

A version may be deprecated (with the owner's message), have failing tests (with the check's
summary), carry a scan verdict of ``warn`` or ``malicious``, be yanked, or be named by an
advisory. ``install``, ``update``, ``use``, ``show``, ``outdated``, ``verify`` and ``audit`` all
word these the same way through :class:`Notice`; the codes are stable (``--json``), the wording
is not. Pure: data in, data out, no network.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

SUMMARY_CHARS = 200  # one terminal line or two: the version page has the whole log


class Label(StrEnum):
    """What the registry says about a version (the ``code`` of a notice or audit finding)."""

    ADVISORY = "advisory"
    MALICIOUS = "malicious"
    YANKED = "yanked"
    SCAN_WARN = "scan_warn"
    DEPRECATED = "deprecated"
    TESTS_FAILED = "tests_failed"
    NOT_FOUND = "not_found"  # the registry no longer lists the version


# What makes `skillctl audit` exit 1; the other labels only with --strict.
BLOCKING = frozenset({Label.ADVISORY, Label.MALICIOUS, Label.YANKED})
FAILED_TESTS = ("failed", "error")  # `error`: the run ended badly (timeout, memory), not a verdict


@dataclass(frozen=True)
class Notice:
    code: Label
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code.value, "message": self.message}


def test_summary(check: Mapping[str, Any] | None) -> str:
    """One line saying how a tests check ended: its ``summary`` when the registry gives one,
    else the last line of its log tail (unittest and pytest end with the counts)."""
    check = check or {}
    text = str(check.get("summary") or "").strip()
    if not text:
        lines = [line.strip() for line in str(check.get("log") or "").splitlines() if line.strip()]
        text = lines[-1] if lines else ""
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


def version_notices(
    name: str,
    version: str,
    *,
    deprecated: str = "",
    test_result: str = "",
    test_summary: str = "",
    scan_verdict: str = "",
) -> list[Notice]:
    """The notices an installer prints for one version (empty: nothing to say)."""
    label = f"{name} {version}"
    out = []
    if deprecated:
        out.append(Notice(Label.DEPRECATED, f"{label} is deprecated: {deprecated}"))
    if test_result in FAILED_TESTS:
        how = "its tests failed" if test_result == "failed" else "its test run ended in an error"
        out.append(Notice(Label.TESTS_FAILED, f"{label}: {how}" + (f": {test_summary}" if test_summary else "")))
    if scan_verdict == "warn":
        out.append(Notice(Label.SCAN_WARN, f"{label}: the registry's security scan warns"))
    return out


def listed_notices(name: str, entry: Mapping[str, Any], *, test_summary: str = "") -> list[Notice]:
    """The notices of a version as the registry lists it (a ``versions`` entry or a detail)."""
    return version_notices(
        name,
        str(entry.get("version") or ""),
        deprecated=str(entry.get("deprecated") or ""),
        test_result=str(entry.get("test_result") or ""),
        test_summary=test_summary,
        scan_verdict=str(entry.get("scan_verdict") or ""),
    )
