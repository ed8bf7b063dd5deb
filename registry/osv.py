"""Advisories as OSV 1.6 objects (the format OSV tools, pip-audit and osv-scanner read). Pure code.

The affected range is written in skillctl's own syntax (``^1.2``, ``>=1.0,<1.4``, ``1.2.3``, ``*``,
alternatives with ``||``; ``skillctl.format.versions``). OSV ``SEMVER`` ranges are events on a line
(introduced / fixed / last_affected), so each interval of the range becomes one range object: a
range may not mix ``fixed`` with ``last_affected``, and one interval per object keeps each readable.
OSV cannot say skillctl's prerelease rule (``^1.0`` never matches ``1.5.0-rc.1``), so ``versions``
always lists the exact published versions the range matches: that list is the authority.

Our four severities are not CVSS vectors, and OSV's ``severity`` takes only those: the level goes
into ``database_specific.severity`` and ``severity`` is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from skillctl.format.versions import Comparator, Version, VersionSpecError, parse_spec

SCHEMA_VERSION = "1.6.7"  # the OSV schema release this output follows (tests/registry/osv-schema.json)
ECOSYSTEM = "Skillyard"
ID_PREFIX = "SKY"


class AdvisoryFacts(Protocol):
    """What an advisory states (``registry.models.Advisory`` has these)."""

    osv_id: str
    summary: str
    details: str
    severity: str
    affected: str
    aliases: list
    published_at: datetime
    withdrawn_at: datetime | None


def advisory_id(year: int, sequence: int) -> str:
    return f"{ID_PREFIX}-{year}-{sequence:04d}"


def range_check(spec: str) -> None:
    """Raise VersionSpecError unless ``spec`` is a version or a range (a dist-tag moves, and no
    spec at all would name nothing)."""
    if parse_spec(spec).kind not in ("exact", "range") or not intervals(spec):
        raise VersionSpecError(spec)


@dataclass(frozen=True)
class Interval:
    """``low <= v`` and ``v < high`` (``v <= high`` when ``inclusive``); None: unbounded."""

    low: Version | None = None
    high: Version | None = None
    inclusive: bool = False

    def empty(self) -> bool:
        if self.low is None or self.high is None:
            return False
        return self.low > self.high or (self.low == self.high and not self.inclusive)


def intervals(spec: str) -> list[Interval]:
    """The range as disjoint intervals, lowest first."""
    parsed = parse_spec(spec)
    if parsed.kind == "exact" and parsed.exact is not None:
        return [Interval(parsed.exact, parsed.exact, inclusive=True)]
    found: list[Interval] = []
    for group in parsed.alternatives:
        pieces = [Interval()]
        for comparator in group:
            pieces = [
                both for a in pieces for b in _comparator_intervals(comparator) if not (both := _meet(a, b)).empty()
            ]
        found.extend(pieces)
    return _merge(found)


def _comparator_intervals(c: Comparator) -> list[Interval]:
    if not c.negate:
        return [Interval(c.low, c.high, c.inclusive_high)]
    outside = []
    if c.low is not None:
        outside.append(Interval(high=c.low))
    if c.high is not None:
        outside.append(Interval(low=_successor(c.high) if c.inclusive_high else c.high))
    return outside  # a negated `*` (`>*`, `!=*`) matches nothing


def _successor(v: Version) -> Version:
    """The lowest version above ``v``: ``1.2.3`` -> ``1.2.4-0``; ``1.0.0-rc`` -> ``1.0.0-rc.0``."""
    if v.pre:
        return Version(v.major, v.minor, v.patch, (*v.pre, 0))
    return Version(v.major, v.minor, v.patch + 1, (0,))


def _meet(a: Interval, b: Interval) -> Interval:
    low = a.low if b.low is None else b.low if a.low is None else max(a.low, b.low)
    if a.high is None or b.high is None:
        high, inclusive = (a.high, a.inclusive) if b.high is None else (b.high, b.inclusive)
    elif a.high == b.high:
        high, inclusive = a.high, a.inclusive and b.inclusive
    else:
        high, inclusive = (a.high, a.inclusive) if a.high < b.high else (b.high, b.inclusive)
    return Interval(low, high, inclusive)


def _merge(pieces: list[Interval]) -> list[Interval]:
    merged: list[Interval] = []
    for piece in sorted(pieces, key=lambda i: (i.low is not None, i.low or Version(0, 0, 0))):
        last = merged[-1] if merged else None
        if last is not None and (last.high is None or (piece.low is not None and _reaches(last, piece.low))):
            merged[-1] = Interval(last.low, *_upper(last, piece))
        else:
            merged.append(piece)
    return merged


def _reaches(i: Interval, v: Version) -> bool:
    """Does ``v`` start inside ``i`` or right where it ends (so the two join into one)?"""
    return i.high is None or v <= i.high


def _upper(a: Interval, b: Interval) -> tuple[Version | None, bool]:
    if a.high is None or b.high is None:
        return None, False
    if a.high == b.high:
        return a.high, a.inclusive or b.inclusive
    return (a.high, a.inclusive) if a.high > b.high else (b.high, b.inclusive)


def range_events(spec: str) -> list[list[dict[str, str]]]:
    """One OSV events list per interval of ``spec``."""
    out = []
    for i in intervals(spec):
        events = [{"introduced": str(i.low) if i.low is not None else "0"}]
        if i.high is not None:
            events.append({"last_affected" if i.inclusive else "fixed": str(i.high)})
        out.append(events)
    return out


def osv_timestamp(moment: datetime) -> str:
    """RFC 3339 in UTC with a ``Z``, as the OSV schema's pattern asks."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def advisory_osv(
    advisory: AdvisoryFacts, *, skill: str, versions: list[str], modified: datetime, url: str = ""
) -> dict:
    """The OSV object; ``versions``: the published versions the range matches (see the module)."""
    ranges = [{"type": "SEMVER", "events": events} for events in range_events(advisory.affected)]
    affected = {
        "package": {"ecosystem": ECOSYSTEM, "name": skill},
        "ranges": ranges,
        "versions": versions,
        "database_specific": {"affected_range": advisory.affected},
    }
    osv: dict = {
        "schema_version": SCHEMA_VERSION,
        "id": advisory.osv_id,
        "modified": osv_timestamp(modified),
        "published": osv_timestamp(advisory.published_at),
        "aliases": list(advisory.aliases),
        "summary": advisory.summary,
        "details": advisory.details,
        "affected": [affected],
        "database_specific": {"severity": advisory.severity},
    }
    if advisory.withdrawn_at is not None:
        osv["withdrawn"] = osv_timestamp(advisory.withdrawn_at)
    if url:
        osv["references"] = [{"type": "ADVISORY", "url": url}]
    return osv
