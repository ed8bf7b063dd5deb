"""The batched audit (``POST /api/v1/audit``, what ``skillctl audit`` asks): for each installed
(name, version), what the registry knows about it now — its scan verdict, failed tests, yank,
deprecation, the open advisories that hold it, and the highest clean version to move to.

A read, like registry/selectors.py (whose advisory reads it uses), kept apart because it answers
one endpoint with its own rules: a version the scan found malicious is named to anyone who sees
its skill, with nothing else about it (DESIGN §13 hides it everywhere else, but whoever installed
it must learn it), so the visibility here keeps skills whose every version is blocked.
"""

from __future__ import annotations

from registry.access import Actor
from registry.models import Advisory, Skill, SkillVersion
from registry.selectors import advisories_osv, advisory_affected_rows, default_version
from skillctl.format.versions import VersionSpecError, resolve

AUDIT_COLUMNS = ("id", "skill_id", "version", "published_at", "yanked", "yanked_reason", "deprecated")
AUDIT_CHECKS = ("scan_verdict", "test_result")


def audit_report(*, actor: Actor, entries: list[tuple[str, str]], ranges: dict[str, str] | None = None) -> list[dict]:
    """What the registry knows now about each installed (name, version), in the order asked;
    with ``ranges`` (name -> the project's version range), also the newest clean version within
    it, the one an update can reach.

    Fixed queries, whatever the count: the named skills' versions, their open advisories, and the
    check details of the named versions that have findings or failed tests. A version the scan
    found malicious is named to anyone who sees its skill, with nothing else about it (§1 hides
    it everywhere else, but whoever installed it must learn it)."""
    named = {n for n, _ in entries}
    visible = Skill.objects.visible_to(actor.user, actor.token, include_blocked=True).filter(name__in=named)
    rows = list(
        SkillVersion.objects.live().filter(skill__in=visible).values(*AUDIT_COLUMNS, *AUDIT_CHECKS, "skill__name")
    )
    by_key = {(r["skill__name"], r["version"]): r for r in rows}
    advisories = list(
        Advisory.objects.filter(skill_id__in={r["skill_id"] for r in rows}, withdrawn_at__isnull=True)
        .select_related("skill")
        .order_by("published_at", "id")
    )
    osv_by_id = dict(zip([a.id for a in advisories], advisories_osv(advisories=advisories, rows=rows), strict=True))
    asked = [by_key[e] for e in entries if e in by_key]
    details = _audit_details([r for r in asked if _needs_details(r)])
    report = _AuditContext(rows=rows, advisories=advisories, osv_by_id=osv_by_id, details=details, ranges=ranges or {})
    return [report.entry(name, version, by_key.get((name, version))) for name, version in entries]


def _needs_details(row: dict) -> bool:
    return row["scan_verdict"] == "warn" or row["test_result"] in ("failed", "error")


def _audit_details(rows: list[dict]) -> dict[int, dict]:
    if not rows:
        return {}
    found = SkillVersion.objects.filter(id__in=[r["id"] for r in rows]).values_list("id", "checks_state")
    return dict(found)


class _AuditContext:
    def __init__(
        self, *, rows: list[dict], advisories: list[Advisory], osv_by_id: dict, details: dict, ranges: dict[str, str]
    ) -> None:
        self.ranges = ranges
        self.rows_by_skill: dict[int, list[dict]] = {}
        for row in rows:
            self.rows_by_skill.setdefault(row["skill_id"], []).append(row)
        self.advisories, self.osv_by_id, self.details = advisories, osv_by_id, details

    def affecting(self, row: dict) -> list[Advisory]:
        return [
            a for a in self.advisories if a.skill_id == row["skill_id"] and advisory_affected_rows(a.affected, [row])
        ]

    def clean(self, skill_id: int) -> list[dict]:
        """Versions worth moving to: not yanked, not malicious, not deprecated, under no open advisory."""
        return [
            r
            for r in self.rows_by_skill.get(skill_id, [])
            if not r["yanked"] and r["scan_verdict"] != "malicious" and not r["deprecated"] and not self.affecting(r)
        ]

    def latest_clean(self, skill_id: int) -> str | None:
        return default_version(self.clean(skill_id), {})

    def latest_clean_in_range(self, skill_id: int, spec: str) -> str | None:
        try:
            return resolve(spec, self.clean(skill_id))
        except VersionSpecError:
            return None

    def entry(self, name: str, version: str, row: dict | None) -> dict:
        if row is None:
            return {"name": name, "version": version, "found": False}
        out = {"name": name, "version": version, "found": True, "latest_clean": self.latest_clean(row["skill_id"])}
        if self.ranges.get(name):
            out["latest_clean_in_range"] = self.latest_clean_in_range(row["skill_id"], self.ranges[name])
        if row["scan_verdict"] == "malicious":
            return {**out, **AUDIT_BLANK, "scan_verdict": "malicious"}
        checks = self.details.get(row["id"], {})
        return {
            **out,
            "scan_verdict": row["scan_verdict"],
            "scan_findings": checks.get("scan", {}).get("findings", []) if row["scan_verdict"] == "warn" else [],
            "test_result": row["test_result"] or "",
            "test_summary": _test_summary(checks.get("tests", {})),
            "yanked": row["yanked"],
            "yanked_reason": row["yanked_reason"],
            "deprecated": row["deprecated"],
            "advisories": [self.osv_by_id[a.id] for a in self.affecting(row)],
        }


AUDIT_BLANK = {
    "scan_findings": [],
    "test_result": "",
    "test_summary": "",
    "yanked": False,
    "yanked_reason": "",
    "deprecated": "",
    "advisories": [],
}


def _test_summary(tests: dict) -> str:
    """The tests check's own summary when it gives one, else the last line of its log (what
    failed), else its error."""
    if tests.get("summary"):
        return str(tests["summary"])
    lines = [line.strip() for line in str(tests.get("log", "")).splitlines() if line.strip()]
    return lines[-1][:300] if lines else str(tests.get("error", ""))[:300]
