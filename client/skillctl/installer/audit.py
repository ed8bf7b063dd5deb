"""``skillctl audit``: what the registries know now about the versions skills.lock pins.

Like ``npm audit`` and ``pip-audit``: one batched request per registry (``POST /audit``, at most
``AUDIT_BATCH`` skills each; an older registry without it is asked one skill listing per skill,
without advisories, and the report says so). Every finding carries its fix. The registries' last
answer is kept per project in the state dir (:func:`skillctl.paths.audit_answer_file`), so
``--offline``, or an unreachable registry, reports against it with the time it was given.
Skills installed from folders, archives, URLs or git are listed as not audited.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillctl import fileio
from skillctl.errors import NetworkError
from skillctl.format import versions
from skillctl.installer.project import Locked, source_kind
from skillctl.installer.resolution import RegistryResolver
from skillctl.installer.state import ScopeState
from skillctl.trust import BLOCKING, FAILED_TESTS, Label, version_notices

NOT_FROM_REGISTRY = "not from a registry"


@dataclass(frozen=True)
class Finding:
    label: Label
    message: str
    fix: str
    advisory: str = ""  # the advisory's id (SKY-2026-0001)
    severity: str = ""  # the advisory's: low | medium | high | critical

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.label.value,
            "blocking": self.label in BLOCKING,
            "message": self.message,
            "fix": self.fix,
            "id": self.advisory or None,
            "severity": self.severity or None,
        }


@dataclass
class Audited:
    """One locked skill: what the registry said about its version, or why it was not asked."""

    name: str
    version: str
    registry: str = ""
    findings: list[Finding] = field(default_factory=list)
    latest_clean: str | None = None
    not_audited: str = ""  # the reason ("" when audited)

    def failing(self, *, strict: bool) -> list[Finding]:
        return [f for f in self.findings if strict or f.label in BLOCKING]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "registry": self.registry or None,
            "audited": not self.not_audited,
            "reason": self.not_audited or None,
            "latest_clean": self.latest_clean,
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclass
class AuditReport:
    skills: list[Audited]
    as_of: str | None  # when the (oldest) registry answer used was given
    offline: bool = False  # some answer came from the kept copy
    notes: list[str] = field(default_factory=list)  # one line each: fallbacks, offline answers

    def failing(self, *, strict: bool = False) -> list[Audited]:
        return [s for s in self.skills if s.failing(strict=strict)]

    def to_dict(self, *, strict: bool = False) -> dict[str, Any]:
        return {
            "ok": not self.failing(strict=strict),
            "strict": strict,
            "as_of": self.as_of,
            "offline": self.offline,
            "notes": self.notes,
            "skills": [s.to_dict() for s in self.skills],
        }


class Auditor:
    """Audits one scope's skills.lock against its registries."""

    def __init__(self, state: ScopeState, resolver: RegistryResolver, *, answer_file: Path) -> None:
        self.state = state
        self.resolver = resolver
        self.answer_file = answer_file

    def run(self, *, offline: bool = False, quiet_fallback: bool = False) -> AuditReport:
        """Audit every locked skill. ``offline``: the kept answer only. ``quiet_fallback``:
        give up (report nothing) on a registry without the batch endpoint, instead of asking
        each skill (the install summary: cheap or nothing)."""
        kept = self._read_kept()
        groups: dict[str, list[Locked]] = {}
        report = AuditReport(skills=[], as_of=None)
        for locked in sorted(self.state.locked.values(), key=lambda e: e.name):
            if source_kind(locked.source) != "registry":
                report.skills.append(Audited(locked.name, locked.version, not_audited=NOT_FROM_REGISTRY))
            else:
                groups.setdefault(self._registry_url(locked), []).append(locked)
        stamps = []
        for url, entries in groups.items():
            answer = self._answer(url, entries, kept, report, offline=offline, quiet_fallback=quiet_fallback)
            if answer is None:
                continue
            stamps += [answer["as_of"]] if answer.get("as_of") else []
            report.skills += [self._audited(locked, url, answer) for locked in entries]
        report.skills.sort(key=lambda s: s.name)
        report.as_of = min(stamps) if stamps else None
        if not offline:
            self._keep(kept)
        return report

    # --- asking ---------------------------------------------------------------------------

    def _registry_url(self, locked: Locked) -> str:
        if locked.registry_url:
            return locked.registry_url
        return self.resolver.registry(locked.source.get("registry", "")).url

    def _answer(
        self,
        url: str,
        entries: list[Locked],
        kept: dict,
        report: AuditReport,
        *,
        offline: bool,
        quiet_fallback: bool,
    ) -> dict | None:
        """The registry's answer for these skills: asked now (and kept), else the kept one."""
        if not offline:
            try:
                answer = self._ask(url, entries, report, quiet_fallback=quiet_fallback)
            except NetworkError as err:
                if url not in kept:
                    raise
                report.notes.append(f"{url} could not be reached ({err.message}): using its last answer")
            else:
                if answer is not None:
                    kept[url] = answer
                return answer
        if url not in kept:
            raise NetworkError(
                f"no earlier audit answer from {url} is kept for this project",
                hint="Run `skillctl audit` once with the registry reachable.",
                code="audit.no_answer_kept",
            )
        report.offline = True
        report.notes.append(f"{url}: answer as of {kept[url].get('as_of') or 'an unknown time'}")
        return kept[url]

    def _ask(self, url: str, entries: list[Locked], report: AuditReport, *, quiet_fallback: bool) -> dict | None:
        from skillctl.registry_client import RegistryError

        client = self.resolver.client(self.resolver.config.registry_for_url(url))
        try:
            return client.audit(
                [(e.name, e.version) for e in entries], ranges={e.name: self._range(e.name) for e in entries}
            )
        except RegistryError as err:
            if err.status != 404:
                raise
        if quiet_fallback:
            return None
        report.notes.append(f"{url} has no batch audit (an older registry): asked each skill; advisories not checked")
        ranges = {e.name: self._range(e.name) for e in entries}
        return {"as_of": None, "results": [_listing_result(client, e.name, e.version, ranges[e.name]) for e in entries]}

    # --- judging ---------------------------------------------------------------------------

    def _audited(self, locked: Locked, url: str, answer: Mapping[str, Any]) -> Audited:
        key = (locked.name, locked.version)
        result = next((r for r in answer.get("results") or [] if (r.get("name"), r.get("version")) == key), None)
        audited = Audited(locked.name, locked.version, registry=url)
        if result is None:
            audited.not_audited = f"not in the answer as of {answer.get('as_of') or 'an unknown time'}"
            return audited
        spec = self._range(locked.name)
        audited.latest_clean = result.get("latest_clean") or None
        # The newest clean version the project's range reaches, when the registry says (a newer
        # clean one outside the range is no `update` away).
        reachable = result.get("latest_clean_in_range") if spec and "latest_clean_in_range" in result else None
        fix = _fix(
            locked.name, locked.version, reachable or audited.latest_clean, spec, yanked=bool(result.get("yanked"))
        )
        audited.findings = [Finding(label, message, fix, *extra) for label, message, *extra in _judged(result)]
        return audited

    def _range(self, name: str) -> str:
        wanted = self.state.wanted.get(name)
        return wanted.source.get("version", "") if wanted else ""

    # --- the kept answer ------------------------------------------------------------------

    def _read_kept(self) -> dict:
        try:
            data = json.loads(self.answer_file.read_text())
        except (OSError, ValueError):
            return {}
        return data.get("registries") or {} if isinstance(data, dict) else {}

    def _keep(self, kept: dict) -> None:
        data = {"lock": str(self.state.scope.lock_path), "registries": kept}
        try:
            fileio.atomic_write(self.answer_file, json.dumps(data, indent=1))
        except OSError as err:  # the audit itself is done; the next offline one will say what is missing
            self.resolver.reporter.warn(f"could not keep the audit answer in {self.answer_file}: {err}")


def _judged(result: Mapping[str, Any]) -> Iterable[tuple]:
    """(label, message[, advisory id, severity]) for what the registry says about one version."""
    name, version = str(result.get("name")), str(result.get("version"))
    if result.get("found") is False:
        yield Label.NOT_FOUND, f"{name} {version} is no longer listed by the registry"
        return
    for advisory in result.get("advisories") or []:
        if isinstance(advisory, dict) and not advisory.get("withdrawn"):
            severity = str((advisory.get("database_specific") or {}).get("severity") or "")
            summary = advisory.get("summary") or advisory.get("details") or ""
            yield (
                Label.ADVISORY,
                f"{advisory.get('id')} ({severity or 'no severity'}): {summary}",
                advisory.get("id"),
                severity,
            )
    if result.get("scan_verdict") == "malicious":
        yield Label.MALICIOUS, f"{name} {version} was found malicious by the registry's security scan"
    if result.get("yanked"):
        yield Label.YANKED, f"{name} {version} was yanked: {result.get('yanked_reason') or 'no reason given'}"
    for notice in version_notices(
        name,
        version,
        deprecated=str(result.get("deprecated") or ""),
        test_result=str(result.get("test_result") or ""),
        test_summary=str(result.get("test_summary") or ""),
        scan_verdict=str(result.get("scan_verdict") or ""),
    ):
        yield notice.code, notice.message


def _fix(name: str, version: str, clean: str | None, spec: str, *, yanked: bool) -> str:
    """What to run: update when it reaches the clean version (a newer one in range; an older one
    too when the installed version is yanked), else how to get the clean version."""
    if clean is None:
        return f"no clean version is known: `skillctl uninstall {name}`, or wait for a fixed release"
    in_range = not spec or versions.matches(spec, clean)
    if in_range and (_newer(clean, version) or (yanked and clean != version)):
        return f"skillctl update {name}"
    if _newer(clean, version):
        return f"no clean version in range {spec}; clean: {clean} (skillctl install {name}@^{clean})"
    if clean != version:
        return f"the newest clean version is older: {clean} (skillctl install {name}@{clean})"
    return ""


def _newer(a: str, b: str) -> bool:
    va, vb = versions.Version.parse(a), versions.Version.parse(b)
    return bool(va and vb and va > vb)


def _listing_result(client: Any, name: str, version: str, spec: str) -> dict:
    """An audit result from the skill's listing, for a registry without ``POST /audit``; its
    clean version is the newest in ``spec`` when there is one."""
    from skillctl.registry_client import RegistryError

    try:
        info = client.skill(name)
    except RegistryError as err:
        if err.status != 404:
            raise
        return {"name": name, "version": version, "found": False}
    listed = [v for v in info.get("versions") or [] if isinstance(v, dict)]
    entry = next((v for v in listed if v.get("version") == version), None)
    if entry is None:
        return {"name": name, "version": version, "found": False}
    clean = [str(v["version"]) for v in listed if _clean(v)]
    clean = [v for v in clean if versions.matches(spec, v)] or clean if spec else clean
    return {
        **{k: entry.get(k) for k in ("scan_verdict", "test_result", "yanked", "yanked_reason", "deprecated")},
        "name": name,
        "version": version,
        "found": True,
        "test_summary": "",  # the listing has none; asking each version's detail would be one more request each
        "advisories": [],
        "latest_clean": max(clean, key=versions.sort_key) if clean else None,
    }


def _clean(entry: Mapping[str, Any]) -> bool:
    judged = entry.get("scan_verdict") in ("warn", "malicious") or entry.get("test_result") in FAILED_TESTS
    return not (judged or entry.get("yanked") or entry.get("deprecated"))
