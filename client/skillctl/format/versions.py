"""Semantic versions and version specs, as a package manager resolves them. Pure code.

Spec forms (the registry's ``download?version=`` uses exactly these semantics):

- ``""`` (and ``latest`` when the skill has no such tag): the highest non-yanked stable
  version, else the highest non-yanked prerelease;
- ``"1.2.3"`` / ``"=1.2.3"`` / ``"==1.2.3"`` / ``"v1.2.3"``: exactly that version, even yanked;
- ``"^1.2"`` (the left-most non-zero part is fixed: ``^0.2.3`` <0.3.0), ``"~1.2"`` (same
  minor), PEP 440 ``"~=1.2"`` (<2.0.0);
- comparators ``>=1,<2`` or ``>=1 <2`` (``>``, ``>=``, ``<``, ``<=``, ``=``, ``!=``);
- wildcards ``*``, ``1``, ``1.x``, ``1.2.*``; alternatives joined with ``||``;
- any other bare word is a dist-tag name (``beta``), looked up in ``dist_tags``.

Yanked versions are chosen only by an exact spec. Prereleases match a range only when one of
its bounds is a prerelease of the same ``major.minor.patch`` (npm's rule), so ``^1.0`` never
jumps to ``2.0.0-rc.1``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

from skillctl.format.errors import ExitCode, SkillctlError
from skillctl.format.semver import MAX_NUMBER_DIGITS, MAX_VERSION_CHARS, SEMVER

_PARTIAL_RE = re.compile(r"^v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?$")
_COMPARATOR_RE = re.compile(r"^(\^|~=|~|>=|<=|>|<|==|=|!=)?(\S+)$")
_TAG_RE = re.compile(r"^[A-Za-z][A-Za-z0-9._-]*$")
_SPEC_HINT = "Use a version (1.2.3), a range (^1.2, ~1.2, >=1,<2, 1.x) or a dist-tag (latest)."


@total_ordering
@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple = ()

    @classmethod
    def parse(cls, text: str) -> Version | None:
        text = text.strip()
        if len(text) > MAX_VERSION_CHARS or any(len(n) > MAX_NUMBER_DIGITS for n in re.findall(r"\d+", text)):
            return None  # what no registry may publish (format.semver); int() of 5,000 digits raises
        m = SEMVER.match(text[1:] if text[:1] == "v" else text)
        if not m:
            return None
        pre = tuple(int(p) if p.isdigit() else p for p in m.group(4).split(".")) if m.group(4) else ()
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre)

    @property
    def release(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def _key(self) -> tuple:
        # A release sorts after its prereleases; numeric identifiers sort before alphanumeric.
        pre = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.pre)
        return (self.release, 0 if self.pre else 1, pre)

    def __lt__(self, other: Version) -> bool:
        return self._key() < other._key()

    def __str__(self) -> str:
        base = f"{self.major}.{self.minor}.{self.patch}"
        return base + ("-" + ".".join(str(p) for p in self.pre) if self.pre else "")


@dataclass(frozen=True)
class Comparator:
    """``low <= v < high`` (either bound optional), or its negation; ``pre`` names a prerelease."""

    low: Version | None = None
    high: Version | None = None
    inclusive_high: bool = False
    negate: bool = False
    pre: tuple[int, int, int] | None = None  # the release a written prerelease bound names

    def test(self, v: Version) -> bool:
        inside = (self.low is None or v >= self.low) and (
            self.high is None or (v <= self.high if self.inclusive_high else v < self.high)
        )
        return inside != self.negate


@dataclass(frozen=True)
class Spec:
    """A parsed spec: ``kind`` is ``default``, ``exact``, ``range`` or ``tag``."""

    kind: str
    text: str
    exact: Version | None = None
    alternatives: tuple[tuple[Comparator, ...], ...] = ()  # OR of ANDs
    tag: str = ""

    def matches(self, v: Version) -> bool:
        if self.kind == "default":
            return not v.pre
        if self.kind == "exact":
            return v == self.exact
        if self.kind == "range":
            return any(_all_match(group, v) for group in self.alternatives)
        return False


def _all_match(group: tuple[Comparator, ...], v: Version) -> bool:
    if not all(c.test(v) for c in group):
        return False
    return not v.pre or any(c.pre == v.release for c in group)


def parse_spec(spec: str) -> Spec:
    text = (spec or "").strip()
    if not text:
        return Spec("default", text)
    exact = Version.parse(re.sub(r"^==?", "", text))
    if exact:
        return Spec("exact", text, exact=exact)
    if _TAG_RE.match(text) and not _PARTIAL_RE.match(text):
        return Spec("tag", text, tag=text)
    cleaned = re.sub(r"(\^|~=|~|>=|<=|>|<|==|=|!=)\s+", r"\1", text)
    groups = tuple(_parse_group(part, text) for part in cleaned.split("||"))
    return Spec("range", text, alternatives=groups)


def _parse_group(text: str, whole: str) -> tuple[Comparator, ...]:
    tokens = [t for t in re.split(r"[,\s]+", text.strip()) if t]
    if not tokens:
        raise _bad(whole)
    return tuple(_parse_token(t, whole) for t in tokens)


def _parse_token(token: str, whole: str) -> Comparator:
    m = _COMPARATOR_RE.match(token)
    if not m:
        raise _bad(whole)
    op, rest = m.group(1) or "=", m.group(2)
    full = Version.parse(rest)
    parts = list(full.release) if full else _partial(rest, whole)
    major, minor, patch = (parts + [0, 0, 0])[:3]
    low = full or Version(major, minor, patch)
    pre = low.release if low.pre else None
    if not parts:  # `*`, `>=*`: everything (or nothing, for the strict operators)
        return Comparator(negate=op in ("<", ">", "!="))
    prefix_end = None if full else _bump(parts, len(parts) - 1)
    if op in ("=", "=="):
        return Comparator(low, low, inclusive_high=True, pre=pre) if full else Comparator(low, prefix_end)
    if op == "!=":
        return Comparator(low, low if full else prefix_end, inclusive_high=bool(full), negate=True)
    if op in ("^", "~", "~="):
        return Comparator(low, _range_end(op, parts, whole), pre=pre)
    return _inequality(op, low, prefix_end, pre)


def _inequality(op: str, low: Version, prefix_end: Version | None, pre) -> Comparator:
    if op == ">=":
        return Comparator(low, pre=pre)
    if op == "<":
        return Comparator(high=low, pre=pre)
    if op == ">":  # `>1` is above every 1.x
        return Comparator(prefix_end) if prefix_end else _above(low, pre)
    # `<=1` is up to and including every 1.x
    return Comparator(high=prefix_end) if prefix_end else Comparator(high=low, inclusive_high=True, pre=pre)


def _above(low: Version, pre) -> Comparator:
    return Comparator(high=low, inclusive_high=True, negate=True, pre=pre)


def _range_end(op: str, parts: list[int], whole: str) -> Version:
    if op == "~":
        return _bump(parts, 0 if len(parts) == 1 else 1)
    if op == "~=":
        if len(parts) < 2:
            raise _bad(whole)
        return _bump(parts, len(parts) - 2)
    # ^: the left-most non-zero part is fixed (^1.2.3 <2, ^0.2.3 <0.3, ^0.0.3 <0.0.4)
    first_nonzero = next((i for i, p in enumerate(parts) if p != 0), len(parts) - 1)
    return _bump(parts, first_nonzero)


def _partial(text: str, whole: str) -> list[int]:
    m = _PARTIAL_RE.match(text)
    if not m:
        raise _bad(whole)
    parts: list[int] = []
    for group in m.groups():
        if group is None or not group.isdigit():
            break
        parts.append(int(group))
    return parts


def _bump(parts: list[int], index: int) -> Version:
    """The first version above every version starting with ``parts[:index+1]``.

    It is ``X.Y.Z-0`` (the lowest prerelease), so no prerelease of the next version slips in.
    """
    head = parts[: index + 1]
    head[-1] += 1
    major, minor, patch = (head + [0, 0, 0])[:3]
    return Version(major, minor, patch, pre=(0,))


class VersionSpecError(SkillctlError):
    """A spec that is no version, range or dist-tag: a usage error wherever it is met."""

    exit_code = ExitCode.USAGE
    code = "version.spec"

    def __init__(self, spec: str) -> None:
        super().__init__(f"invalid version spec {spec!r}", hint=_SPEC_HINT)
        self.spec = spec


def _bad(spec: str) -> VersionSpecError:
    return VersionSpecError(spec)


def matches(spec: str, version: str) -> bool:
    """Whether ``version`` satisfies ``spec`` (a dist-tag matches nothing without its tags)."""
    parsed = Version.parse(version)
    return parsed is not None and parse_spec(spec).matches(parsed)


def resolve(spec: str, versions: list[dict], *, dist_tags: dict[str, str] | None = None) -> str | None:
    """The version ``spec`` picks from ``versions`` (dicts with ``version`` and ``yanked``)."""
    text = (spec or "").strip()
    tags = dist_tags or {}
    by_version: dict[Version, dict] = {}
    for entry in versions:
        v = Version.parse(str(entry.get("version", "")))
        if v is not None:
            by_version[v] = entry
    live = {v: e for v, e in by_version.items() if not e.get("yanked")}
    if text in tags:
        target = Version.parse(str(tags[text]))
        return str(live[target]["version"]) if target in live else None
    parsed = parse_spec("" if text == "latest" else text)
    if parsed.kind == "default":
        stable = [v for v in live if not v.pre]
        pool = stable or list(live)
        return str(live[max(pool)]["version"]) if pool else None
    if parsed.kind == "exact":
        exact = by_version.get(parsed.exact) if parsed.exact is not None else None
        return str(exact["version"]) if exact else None
    candidates = [v for v in live if parsed.matches(v)]
    return str(live[max(candidates)]["version"]) if candidates else None


def sort_key(version: str) -> tuple:
    """For sorting version strings oldest first; unparsable ones sort first."""
    parsed = Version.parse(version)
    return (0, version) if parsed is None else (1, parsed._key())


BUMPS = ("major", "minor", "patch")


def bump(version: str, part: str) -> str:
    """The next version: ``bump("1.4.2", "minor") == "1.5.0"``; a prerelease's patch bump is its
    release (``1.5.0-rc.1`` -> ``1.5.0``), as ``npm version`` does."""
    parsed = Version.parse(version)
    if parsed is None or part not in BUMPS:
        raise VersionSpecError(version if parsed is None else part)
    major, minor, patch = parsed.release
    if part == "major":
        return f"{major + 1}.0.0" if not (parsed.pre and minor == patch == 0) else f"{major}.0.0"
    if part == "minor":
        return f"{major}.{minor + 1}.0" if not (parsed.pre and patch == 0) else f"{major}.{minor}.0"
    return f"{major}.{minor}.{patch + 1}" if not parsed.pre else f"{major}.{minor}.{patch}"
