"""Registry sources: which registry, which version, and the archive in the cache.

:class:`RegistryResolver` picks the registry a skill uses (recorded name or URL, else the
default), resolves a version spec against the registry's listing, refuses what the registry's
security scan found malicious, and downloads the archive with its digests checked. Registry
answers are kept for one run, and :meth:`RegistryResolver.warm` fetches many skills
concurrently so the serial placing pass finds everything ready.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from skillctl.errors import IntegrityError, SkillctlError
from skillctl.installer import cache
from skillctl.installer.arguments import Source, SourceKind
from skillctl.installer.fetchers import Fetched
from skillctl.installer.project import Locked
from skillctl.reporting import Reporter
from skillctl.trust import FAILED_TESTS, Label, Notice, test_summary, version_notices

WARM_WORKERS = 8  # concurrent registry downloads: enough to hide latency, polite to a registry


class RegistryResolver:
    """Registry access for one run: the config, one HTTP client per registry, kept answers."""

    def __init__(
        self,
        *,
        config: Any = None,
        client_factory: Callable | None = None,
        reporter: Reporter | None = None,
        force: bool = False,
    ) -> None:
        self._config = config
        self._client_factory = client_factory
        self.reporter = reporter or Reporter()
        self.force = force  # re-resolve a skill whose registry URL changed since it was locked
        self._answers: dict[tuple, Any] = {}
        self._clients: dict[tuple, Any] = {}
        self._clients_lock = threading.Lock()

    @property
    def config(self) -> Any:
        if self._config is None:
            from skillctl.config import load_config

            self._config = load_config()
        return self._config

    def forget_answers(self) -> None:
        """Registry answers are fresh for every run (an install session)."""
        self._answers = {}

    def registry(self, recorded: str = "") -> Any:
        """The registry a skill uses: the recorded name (or URL), else the default."""
        if "://" in recorded:
            return self.config.registry_for_url(recorded)
        return self.config.registry(recorded or None)

    def client(self, registry: Any) -> Any:
        """One client per registry for the run: a new one costs ~20 ms (TLS trust store) and
        loses the kept-alive connections. The warm-up threads share it (httpx is thread-safe)."""
        key = (registry.url, registry.token)
        with self._clients_lock:
            if key not in self._clients:
                if self._client_factory is None:
                    from skillctl.registry_client import RegistryClient

                    self._client_factory = RegistryClient
                self._clients[key] = self._client_factory(registry)
            return self._clients[key]

    def listing(self, source: Source) -> dict:
        """The registry's answer for one skill (its versions and dist-tags), kept for the run."""
        registry = self.registry(source.registry)
        client = self.client(registry)
        return self._memo(("skill", registry.url, source.name), lambda: client.skill(source.name))

    # --- fetching -----------------------------------------------------------------------

    def fetch(self, source: Source, locked: Locked | None = None) -> Fetched:
        """The archive of ``source`` in the cache; with ``locked``, exactly what the lock says."""
        registry = self.registry(source.registry)
        recorded = registry.url if registry.name in ("env", registry.url) else registry.name
        self._refuse_switched_registry(source, locked, registry, recorded)
        if locked and (hit := cache.lookup(locked.sha256)):
            # Exactly what was locked, from the cache: no registry request at all (offline CI).
            # The notices of this run's download (the warm-up's) are kept.
            notices = self._answers.get(("notices", registry.url, source.name, locked.version), [])
            return Fetched(hit, locked.sha256, source, locked.version, recorded, registry.url, notices=notices)
        client = self.client(registry)
        if locked is None and ("skill", registry.url, source.name) not in self._answers:
            key = ("resolved", registry.url, source.name, source.spec)
            if fetched := self._memo(key, lambda: self._fetch_resolved(client, source, recorded, registry.url)):
                return fetched
        info = self.listing(source)
        listed = info.get("versions") or []
        version = locked.version if locked else self._resolve(source, info, recorded)
        entry: dict = next((v for v in listed if v.get("version") == version), {})
        listed_sha = entry.get("sha256") or ""
        if locked and listed_sha and listed_sha != locked.sha256:
            raise IntegrityError(
                f"{recorded} lists sha256 {listed_sha} for {source.name} {version}, "
                f"but the lock recorded {locked.sha256}",
                hint="A published version must never change; do not trust this registry's copy.",
                code="integrity.listed_sha256",
            )
        self._check_scan(client, source.name, version, entry)
        archive, sha = self._download(client, source.name, version, locked.sha256 if locked else listed_sha)
        listed = {k: str(entry.get(k) or "") for k in ("deprecated", "test_result", "scan_verdict")}
        notices = self._notices(client, source.name, version, **listed)
        if entry.get("has_routing_manifest") is False:
            # Nothing to fetch. A registry without the field leaves it missing: ask, as before.
            return Fetched(archive, sha, source, version, recorded, registry.url, notices=notices)
        return Fetched(
            archive,
            sha,
            source,
            version,
            recorded,
            registry.url,
            routing_manifest=lambda: self._routing_manifest(client, source.name, version),
            notices=notices,
        )

    def _fetch_resolved(self, client: Any, source: Source, recorded: str, url: str) -> Fetched | None:
        """A new skill in one request: the registry resolves the spec and sends the archive,
        with the version, digests, scan verdict and whether a routing manifest exists in its
        headers (the version list and a download would be two). None: take the version list
        path, which says exactly what is wrong (no such skill or version, a blocked download)
        and shows a warn or malicious verdict's findings; an archive already downloaded is in
        the cache for it."""
        tmp = cache.temp_path()
        try:
            got = client.download_resolved(
                source.name, source.spec, tmp, reporter=self.reporter, cached=cache.known(url, source.name)
            )
            hit = cache.lookup(got.sha256) if got.not_modified else None
            if got.not_modified and hit is None:  # gone or corrupt since it was offered
                got = client.download_resolved(source.name, source.spec, tmp, reporter=self.reporter)
        except SkillctlError:
            tmp.unlink(missing_ok=True)
            return None
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        if hit is not None:
            tmp.unlink(missing_ok=True)
        archive = hit or cache.store(tmp, got.sha256)
        cache.remember(url, source.name, got.sha256)
        if got.scan_verdict not in ("pass", "review", "pending"):
            return None  # warn, malicious, or a registry that does not say: the listing path checks
        manifest = None
        if got.routing_manifest is not False:
            manifest = lambda: self._routing_manifest(client, source.name, got.version)  # noqa: E731
        notices = self._notices(
            client,
            source.name,
            got.version,
            deprecated=got.deprecated,
            test_result=got.test_result or "",
            test_summary=got.test_summary,
        )
        return Fetched(
            archive, got.sha256, source, got.version, recorded, url, routing_manifest=manifest, notices=notices
        )

    def _notices(self, client: Any, name: str, version: str, *, test_summary: str = "", **labels: str) -> list[Notice]:
        """What the registry says about a version being installed, reported once per run (a
        scan warning has been reported with its findings). Failing tests without a summary in
        the answer: the version's detail has the log tail."""
        key = ("notices", client.registry.url, name, version)
        if key in self._answers:
            return self._answers[key]
        if labels.get("test_result") in FAILED_TESTS and not test_summary:
            test_summary = self._test_summary(client, name, version)
        notices = version_notices(name, version, test_summary=test_summary, **labels)
        for notice in notices:
            if notice.code is not Label.SCAN_WARN:
                self.reporter.warn(notice.message)
        self._answers[key] = notices
        return notices

    def _test_summary(self, client: Any, name: str, version: str) -> str:
        try:
            detail = self._memo(("version", client.registry.url, name, version), lambda: client.version(name, version))
        except SkillctlError:
            return ""  # the warning is worth more than the summary: say it without one
        return test_summary((detail.get("checks") or {}).get("tests"))

    def _routing_manifest(self, client: Any, name: str, version: str) -> dict | None:
        """A version's routing manifest: from the batch answer (:meth:`prefetch_manifests`)
        when there is one, else from the version's detail."""
        key = ("manifest", client.registry.url, name, version)
        if key in self._answers:
            return self._answers[key]
        detail = self._memo(("version", client.registry.url, name, version), lambda: client.version(name, version))
        manifest = detail.get("routing_manifest")
        return manifest if isinstance(manifest, dict) else None

    def _refuse_switched_registry(self, source: Source, locked: Locked | None, registry: Any, recorded: str) -> None:
        if not locked or not locked.registry_url or self.force:
            return
        if locked.registry_url.rstrip("/") != registry.url.rstrip("/"):
            raise SkillctlError(
                f"{source.name} was locked from {locked.registry_url}, but registry {recorded!r} is now {registry.url}",
                hint="A skill's registry is never switched silently. Fix the registry's URL in "
                "your config, or pass --force to re-resolve it from the new registry.",
                code="install.registry_changed",
            )

    def _resolve(self, source: Source, info: dict, recorded: str) -> str:
        from skillctl.format import versions

        version = versions.resolve(source.spec, info.get("versions") or [], dist_tags=info.get("dist_tags"))
        if version is None:
            raise SkillctlError(
                f"no version of {source.name} matches {source.spec or 'any'!r} on {recorded}",
                hint=f"Run `skillctl show {source.name}` to see its versions.",
                code="install.no_matching_version",
            )
        return version

    def latest(self, source: Source, locked: Locked) -> tuple[str, str, bool]:
        """(version, sha256) the spec selects today (the locked pair when nothing matches), and
        whether the locked version has been yanked since."""
        from skillctl.format import versions

        info = self.listing(source)
        listed = info.get("versions") or []
        yanked = any(v.get("version") == locked.version and v.get("yanked") for v in listed)
        version = versions.resolve(source.spec, listed, dist_tags=info.get("dist_tags"))
        if version is None:
            return locked.version, locked.sha256, yanked
        entry: dict = next((v for v in listed if v.get("version") == version), {})
        return version, entry.get("sha256") or "", yanked

    def listed(self, source: Source, version: str) -> dict:
        """The registry's listing entry of one version ({} when it does not list it)."""
        return next((v for v in self.listing(source).get("versions") or [] if v.get("version") == version), {})

    def newest(self, source: Source) -> str | None:
        """The newest version a user would get without a range (the `latest` tag's, or the
        highest non-yanked stable one)."""
        from skillctl.format import versions

        info = self.listing(source)
        return versions.resolve("", info.get("versions") or [], dist_tags=info.get("dist_tags"))

    def _check_scan(self, client: Any, name: str, version: str, entry: dict) -> None:
        """The registry's security scan: malicious is refused; warn shows the findings and asks
        on a terminal, else needs --force (docs/scanner.md)."""
        verdict = entry.get("scan_verdict") or ""
        if verdict not in ("warn", "malicious"):
            return
        detail = self._memo(("version", client.registry.url, name, version), lambda: client.version(name, version))
        findings = ((detail.get("checks") or {}).get("scan") or {}).get("findings") or []
        lines = "\n".join(
            f"  {f.get('severity')} {f.get('rule')} {f.get('path')}:{f.get('line') or ''} {f.get('message')}"
            for f in findings[:20]
            if isinstance(f, dict)
        )
        if verdict == "malicious":
            raise SkillctlError(
                f"{name} {version} was found malicious by the registry's security scan:\n{lines}",
                hint="It is not installed. If you think the scan is wrong, tell the registry's operators.",
                code="install.malicious",
            )
        self.reporter.warn(f"{name} {version}: the registry's security scan warns:\n{lines}")
        if self.force or self.reporter.confirm(f"Install {name} {version} anyway?"):
            return
        raise SkillctlError(
            f"{name} {version} has security warnings and was not installed",
            hint="Read the findings above; pass --force to install it anyway.",
            code="install.scan_warn",
        )

    def _memo(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """Registry answers, kept for one run (the concurrent warm-up fills it)."""
        if key not in self._answers:
            self._answers[key] = compute()
        return self._answers[key]

    def _download(self, client: Any, name: str, version: str, expected: str) -> tuple[Path, str]:
        if hit := cache.lookup(expected):
            return hit, expected
        tmp = cache.temp_path()
        try:
            sha = client.download(name, version, tmp, expected_sha256=expected or None, reporter=self.reporter)
            if expected and sha != expected:  # belt and braces: the client checks this too
                raise IntegrityError(
                    f"{name} {version}: sha256 {sha}, expected {expected}",
                    hint="Do not trust this download; try again or report it.",
                    code="integrity.download_sha256",
                )
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        entry = cache.store(tmp, sha)
        cache.remember(client.registry.url, name, sha)
        return entry, sha

    # --- concurrent warm-up -------------------------------------------------------------

    def warm(self, jobs: list[tuple[Source, Locked | None]]) -> None:
        """Resolve and download registry skills concurrently into the cache.

        Placing stays serial under the file lock; this only makes the serial pass find every
        answer and archive ready. Errors are left for the serial pass to report.
        """
        jobs = [(s, lk) for s, lk in jobs if s.kind is SourceKind.REGISTRY and not (lk and cache.lookup(lk.sha256))]
        if len(jobs) < 2:
            return
        from concurrent.futures import ThreadPoolExecutor, as_completed

        with (
            self.reporter.progress(f"downloading {len(jobs)} skills", len(jobs), unit="items") as advance,
            self.reporter.quiet_progress(),
            ThreadPoolExecutor(max_workers=WARM_WORKERS) as pool,
        ):
            fetched = []
            for future in as_completed([pool.submit(self._warm_one, s, lk) for s, lk in jobs]):
                if (one := future.result()) is not None:
                    fetched.append(one)
                advance(1)
        self.prefetch_manifests(fetched)

    def _warm_one(self, source: Source, locked: Locked | None) -> Fetched | None:
        try:
            return self.fetch(source, locked)
        except SkillctlError:
            return None

    def prefetch_manifests(self, fetched: Sequence[Fetched]) -> None:
        """The routing manifests of these registry skills (kept for the run), one request per
        registry and 50 skills instead of a version detail each, when routing could use them.
        A registry without the batch endpoint (404), or any error: each is asked for alone
        when placed, which reports what goes wrong."""
        wanted = [f for f in fetched if f.routing_manifest is not None and f.registry_url]
        if not wanted or not _routing_wanted():
            return
        by_registry: dict[str, list[Fetched]] = {}
        for f in wanted:
            by_registry.setdefault(f.registry_url, []).append(f)
        for url, group in by_registry.items():
            with self._clients_lock:  # the client (and token) that fetched them
                client = next((c for (u, _), c in self._clients.items() if u == url), None)
            if client is None or not hasattr(client, "routing_manifests"):
                continue
            try:
                found = client.routing_manifests([(f.source.name, f.version) for f in group])
            except SkillctlError:
                continue
            for (name, version), manifest in found.items():
                self._answers[("manifest", client.registry.url, name, version)] = manifest


def _routing_wanted() -> bool:
    try:
        import skillctl.routing.manifests  # noqa: F401
    except ImportError:
        return False
    return True
