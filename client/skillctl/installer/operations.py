"""The operations the commands call: install, install from the lock, update, uninstall, verify.

:class:`Operations` is composed, not inherited: a :class:`~skillctl.installer.preparer.Preparer`
gets sources into the cache, a :class:`~skillctl.installer.placement.Placer` places and removes
skills under the scope's file lock, and a :class:`~skillctl.installer.verification.Verifier`
checks them against the lock. Every operation runs inside :meth:`Placer.session`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from skillctl import agents as agent_links
from skillctl.errors import SkillctlError, UsageError
from skillctl.installer.arguments import Source, SourceKind, parse_source
from skillctl.installer.audit import Auditor, AuditReport
from skillctl.installer.fetchers import Fetched
from skillctl.installer.placement import Placer
from skillctl.installer.preparer import Preparer
from skillctl.installer.project import Locked, Scope, Wanted, source_kind
from skillctl.installer.records import (
    Action,
    Change,
    LocalChangesError,
    declared_version,
    same_origin,
)
from skillctl.installer.resolution import WARM_WORKERS, RegistryResolver
from skillctl.installer.state import ScopeState
from skillctl.installer.verification import Verifier, local_changes
from skillctl.reporting import Reporter


class Operations:
    """install / sync / update / uninstall / verify for one scope."""

    def __init__(self, state: ScopeState, *, preparer: Preparer, placer: Placer, verifier: Verifier) -> None:
        self.state = state
        self.scope = state.scope
        self.preparer = preparer
        self.placer = placer
        self.verifier = verifier

    @classmethod
    def for_scope(
        cls,
        scope: Scope,
        *,
        config: Any = None,
        client_factory: Callable | None = None,
        reporter: Reporter | None = None,
        force: bool = False,
    ) -> Operations:
        """The usual assembly: one resolver, reporter and ``force`` shared by every part."""
        reporter = reporter or Reporter()
        state = ScopeState(scope)
        resolver = RegistryResolver(config=config, client_factory=client_factory, reporter=reporter, force=force)
        return cls(
            state,
            preparer=Preparer(resolver, reporter),
            placer=Placer(state, reporter=reporter, force=force),
            verifier=Verifier(state, resolver),
        )

    @property
    def force(self) -> bool:
        return self.placer.force

    @force.setter
    def force(self, value: bool) -> None:
        self.placer.force = self.preparer.resolver.force = value

    @property
    def wanted(self) -> dict[str, Wanted]:
        return self.state.wanted

    @property
    def locked(self) -> dict[str, Locked]:
        return self.state.locked

    def session(self):  # noqa: ANN201 - a context manager
        return self.placer.session(on_start=self.preparer.resolver.forget_answers)

    # -- install --

    def install(
        self,
        args: Sequence[str],
        *,
        registry: str = "",
        agents: Sequence[str] = (),
        pick: Sequence[str] = (),
        take_all: bool = False,
    ) -> list[Change]:
        """Install each argument; a folder or repository holding several skills installs the
        ``pick``ed ones (names), or all of them with ``take_all``."""
        from skillctl.installer import collections

        links = agent_links.expand(list(agents), scope=self.scope.name, base=self.scope.base)
        parsed: list[Source] = []
        for arg in args:
            source = self._with_registry(parse_source(arg), registry)
            if collections.is_collection(source):
                parsed += collections.expand(source, pick=pick, take_all=take_all)
            else:
                parsed.append(source)
        with self.session():
            # Every skill is resolved, fetched, extracted and validated before the first is
            # placed: a name that does not resolve, a failed download, a sha256 that does not
            # match or an invalid archive leaves everything as it was (like pip and npm), not
            # half of the list installed.
            plans = self._plan_all(parsed, links)
            changes = [place() for place in plans]
        self._warn_gates(changes)
        return changes

    def _warn_gates(self, changes: list[Change]) -> None:
        """Installed, but unusable here: say why now (the reasons and fixes of `skillctl check`),
        not when an agent silently never sees the skill."""
        from skillctl.discovery import load_installed
        from skillctl.gating import Gates, check

        placed = [c for c in changes if c.action in (Action.INSTALLED, Action.UPDATED, Action.RESTORED)]
        installed = set(self.wanted)
        for change in placed:
            manifest = self.placer.placed_manifests.get(change.name)
            if manifest is None:  # not placed by this placer: read what is in place
                skill = load_installed(self.scope.name, self.scope.skills_dir / change.name)
                if skill is None:
                    continue
                manifest = skill.manifest
            config = self.preparer.resolver.config
            result = check(Gates.of(manifest), config=config, installed=installed)
            if result.failures:
                reasons = "; ".join(f.reason + (f" (fix: {f.fix})" if f.fix else "") for f in result.failures)
                self.placer.reporter.warn(f"{change.name} is installed but will not be offered here: {reasons}")

    @staticmethod
    def _with_registry(source: Source, registry: str) -> Source:
        if source.kind is SourceKind.REGISTRY and registry and not source.registry:
            return Source(SourceKind.REGISTRY, name=source.name, spec=source.spec, registry=registry)
        return source

    def _effective(self, source: Source) -> Source:
        """A registry source with the recorded registry and range filled in."""
        current = self.wanted.get(source.name)
        recorded = current.source.get("registry", "") if current else ""
        spec = source.spec or (current.source.get("version", "") if current else "")
        return Source(SourceKind.REGISTRY, name=source.name, spec=spec, registry=source.registry or recorded)

    def _is_current(self, source: Source) -> bool:
        """Installed, intact, from the same registry and inside the asked range."""
        current, locked = self.wanted.get(source.name), self.locked.get(source.name)
        return bool(
            locked
            and current
            and self._satisfies(locked, source.spec)
            and same_origin(current.source, {**current.source, "registry": source.registry})
            and not local_changes(self.scope.skills_dir / source.name, locked.files)
        )

    def _install_one(self, source: Source, agents: list[str]) -> Change:
        return self._plan_one(source, agents)()

    def _plan_all(self, sources: list[Source], agents: list[str]) -> list[Callable[[], Change]]:
        """Check, fetch, extract and validate every skill, in order, before any is placed.

        Registry skills are planned concurrently: their downloads overlap each other and the
        extraction of those already downloaded (a cold install of many skills waits on the
        registry and then on the CPU). Staged folders of a failed run are deleted."""
        plans: list[Callable[[], Change] | None] = [None] * len(sources)
        remote = [i for i, s in enumerate(sources) if s.kind is SourceKind.REGISTRY]
        try:
            if len(remote) < 2:
                return [self._plan_one(source, agents) for source in sources]
            from concurrent.futures import ThreadPoolExecutor

            reporter = self.preparer.reporter
            fetched: list[Fetched] = []  # appended to by the threads (list.append is atomic)
            with (
                reporter.progress(f"downloading {len(remote)} skills", len(remote), unit="items") as advance,
                reporter.quiet_progress(),
                ThreadPoolExecutor(max_workers=WARM_WORKERS) as pool,
            ):
                futures = {i: pool.submit(self._plan_one, sources[i], agents, fetched) for i in remote}
                for future in futures.values():
                    future.add_done_callback(lambda _: advance(1))
                for i, source in enumerate(sources):
                    plans[i] = futures[i].result() if i in futures else self._plan_one(source, agents)
            self.preparer.prefetch_manifests(fetched)  # one request, not one per skill
            return [plan for plan in plans if plan is not None]
        except BaseException:
            self.placer.discard_staging()  # every thread has ended: nothing is placed yet
            raise

    def _plan_one(
        self, source: Source, agents: list[str], fetched_out: list[Fetched] | None = None
    ) -> Callable[[], Change]:
        """Check, fetch and stage one skill now; the returned call swaps it in. A registry
        skill's archive also goes to ``fetched_out`` (its routing manifest is fetched for many
        skills at once before they are placed)."""
        if source.kind is not SourceKind.REGISTRY:
            fetched = self.preparer.fetch(source)
            record = source.record(self.scope.base)
            staged = self.placer.stage(fetched)
            return lambda: self.placer.place(fetched, wanted_source=record, agents=agents, staged=staged)
        self._refuse_registry_switch(source)
        source = self._effective(source)
        locked = self.locked.get(source.name)
        if locked and self._is_current(source):
            return lambda: self._unchanged(source, locked, agents)
        if locked and not self.force:
            self.verifier.refuse_local_changes(source.name, locked)
        fetched = self.preparer.fetch(source)
        if fetched_out is not None:
            fetched_out.append(fetched)
        record = {"registry": fetched.registry_name, "version": source.spec or f"^{fetched.version}"}
        staged = self.placer.stage(fetched, expect_name=source.name)
        return lambda: self.placer.place(
            fetched,
            wanted_source=record,
            agents=agents,
            expect_name=source.name,
            replace=locked is not None,
            staged=staged,
        )

    def _refuse_registry_switch(self, source: Source) -> None:
        current = self.wanted.get(source.name)
        recorded = current.source.get("registry", "") if current else ""
        if source.registry and current and source.registry != recorded and not self.force:
            raise SkillctlError(
                f"{source.name} comes from registry {recorded or 'default'!r}; refusing to switch it to {source.registry!r}",
                hint="A skill's registry is never switched silently (dependency confusion). "
                "Uninstall it first, or pass --force.",
                code="install.collision",
            )

    def _unchanged(self, source: Source, locked: Locked, agents: list[str]) -> Change:
        self._relink(source.name, agents)
        target = str(self.scope.skills_dir / source.name)
        return Change(source.name, Action.UNCHANGED, locked.version, locked.version, source.describe(), target, agents)

    def _satisfies(self, locked: Locked, spec: str) -> bool:
        from skillctl.format import versions

        return not spec or versions.matches(spec, locked.version) or spec == locked.version

    def _relink(self, name: str, agents: list[str]) -> None:
        if agents:
            wanted = self.wanted[name]
            wanted.agents = sorted(set(wanted.agents) | set(agents))
            agent_links.link(
                name,
                self.scope.skills_dir / name,
                wanted.agents,
                scope=self.scope.name,
                base=self.scope.base,
                force=self.force,
            )
            self.state.save()

    # -- `install` with no arguments: exactly the lock --

    def disagreements(self) -> list[tuple[str, str]]:
        """(name, why) for each skill skills.toml and skills.lock disagree on ([] when they agree)."""
        out = []
        for name, wanted in sorted(self.wanted.items()):
            locked = self.locked.get(name)
            if locked is None:
                out.append((name, f"{name} is in skills.toml but not in skills.lock"))
            elif not same_origin(wanted.source, locked.source):
                out.append((name, f"{name}: skills.toml and skills.lock name different sources"))
            elif source_kind(wanted.source) == "registry" and not self._satisfies(
                locked, wanted.source.get("version", "")
            ):
                out.append((name, f"{name}: locked {locked.version} is outside {wanted.source['version']}"))
        out += [
            (n, f"{n} is in skills.lock but not in skills.toml") for n in sorted(set(self.locked) - set(self.wanted))
        ]
        return out

    def sync(self, *, frozen: bool = False) -> list[Change]:
        with self.session():
            if not self.wanted and self.locked and not self.scope.manifest_path.exists():
                self.state.wanted = {n: Wanted(n, dict(e.source)) for n, e in self.locked.items()}
            if not self.wanted and not self.locked:
                raise UsageError(
                    f"nothing to install: no {self.scope.manifest_path.name} here",
                    hint="Run `skillctl install NAME` to add a skill.",
                    code="project.nothing_to_install",
                )
            problems = self.disagreements()
            if frozen and problems:
                raise SkillctlError(
                    "skills.lock does not match skills.toml: " + "; ".join(why for _, why in problems),
                    hint="Run `skillctl install` without --frozen to update the lock, and commit it.",
                    code="project.lock_mismatch",
                )
            stale = {name for name, _ in problems}
            self.preparer.warm(self._sync_jobs(stale))
            changes = [self._sync_one(name, stale) for name in sorted(self.wanted)]
            changes += [self.placer.remove(n) for n in sorted(set(self.locked) - set(self.wanted))]
        return changes

    def _sync_jobs(self, stale: set[str]) -> list[tuple[Source, Locked | None]]:
        return [
            (Source.from_record(n, w.source, self.scope.base), None if n in stale else self.locked[n])
            for n, w in self.wanted.items()
            if n in stale or not (self.scope.skills_dir / n).is_dir()
        ]

    def _sync_one(self, name: str, stale: set[str]) -> Change:
        wanted, locked = self.wanted[name], self.locked.get(name)
        source = Source.from_record(name, wanted.source, self.scope.base)
        target = self.scope.skills_dir / name
        if locked is None or name in stale:
            return self._install_one(source, wanted.agents)
        if not local_changes(target, locked.files):
            agent_links.link(name, target, wanted.agents, scope=self.scope.name, base=self.scope.base, force=self.force)
            return Change(
                name, Action.UNCHANGED, locked.version, locked.version, source.describe(), str(target), wanted.agents
            )
        if target.is_dir() and not self.force:
            self.verifier.refuse_local_changes(name, locked)
        fetched = self.preparer.fetch(source, locked=locked)
        return self.placer.place(
            fetched, wanted_source=wanted.source, agents=wanted.agents, expect_name=name, replace=True
        )

    # -- update --

    def update(self, names: Sequence[str] = (), *, dry_run: bool = False) -> list[Change]:
        with self.session():
            unknown = [n for n in names if n not in self.wanted]
            if unknown:
                raise UsageError(
                    f"not in {self.scope.manifest_path.name}: {', '.join(unknown)}",
                    hint="`skillctl list` shows what is installed.",
                    code="project.not_in_manifest",
                )
            changes: list[Change] = []
            refused: list[LocalChangesError] = []
            for name in names or sorted(self.wanted):
                try:
                    changes.append(self._update_one(name, dry_run=dry_run))
                except LocalChangesError as err:
                    refused.append(err)
            if refused:
                message = "; ".join(e.message for e in refused)
                raise LocalChangesError(message, hint=refused[0].hint, changes=changes)
        return changes

    def _update_one(self, name: str, *, dry_run: bool) -> Change:
        wanted, locked = self.wanted[name], self.locked.get(name)
        source = Source.from_record(name, wanted.source, self.scope.base)
        if locked is None:
            if dry_run:
                return Change(name, Action.WOULD_INSTALL, "", "", source.describe())
            return self._install_one(source, wanted.agents)
        fetched = None
        yanked = False
        if source.kind is SourceKind.REGISTRY:
            new_version, new_sha, yanked = self.preparer.resolver.latest(source, locked)
            if _older(new_version, locked.version) and not yanked:
                new_version, new_sha = locked.version, locked.sha256  # never a silent downgrade
        else:
            fetched = self.preparer.fetch(source)  # local and git sources: the new content's own version
            new_version, new_sha = fetched.version or declared_version(fetched.archive), fetched.sha256
        target = str(self.scope.skills_dir / name)
        if new_sha == locked.sha256 and new_version == locked.version:
            return Change(
                name, Action.UNCHANGED, locked.version, locked.version, source.describe(), target, list(wanted.agents)
            )
        if not self.force:
            self.verifier.refuse_local_changes(name, locked)
        replaces_yanked = yanked and _older(new_version, locked.version)
        if dry_run:
            action = Action.WOULD_REPLACE_YANKED if replaces_yanked else Action.WOULD_UPDATE
            return Change(name, action, locked.version, new_version, source.describe(), target, list(wanted.agents))
        fetched = fetched or self.preparer.fetch(source)
        change = self.placer.place(
            fetched, wanted_source=wanted.source, agents=wanted.agents, expect_name=name, replace=True
        )
        if replaces_yanked:
            change.action = Action.REPLACED_YANKED
        return change

    # -- outdated --

    def outdated(self, names: Sequence[str] = ()) -> list[dict]:
        """Per registry skill: the locked version, the newest its range allows (non-yanked), and
        the newest there is, like `npm outdated`; and the locked version's deprecation message
        and test result."""
        with self.session():
            rows = []
            for name in names or sorted(self.wanted):
                wanted = self.wanted.get(name)
                locked = self.locked.get(name)
                if wanted is None or source_kind(wanted.source) != "registry":
                    continue
                source = Source.from_record(name, wanted.source, self.scope.base)
                in_range = self.preparer.resolver.latest(source, locked)[0] if locked else None
                newest = self.preparer.resolver.newest(source)
                current = self.preparer.resolver.listed(source, locked.version) if locked else {}
                rows.append(
                    {
                        "name": name,
                        "current": locked.version if locked else None,
                        "wanted": in_range,
                        "latest": newest,
                        "range": source.spec or "*",
                        "outdated": bool(
                            locked and newest and (in_range != locked.version or newest != locked.version)
                        ),
                        # What the registry says about `current` ("" / None: nothing, or not known).
                        "deprecated": current.get("deprecated") or "",
                        "test_result": current.get("test_result") or None,
                    }
                )
        return rows

    # -- uninstall and verify --

    def uninstall(self, names: Sequence[str]) -> list[Change]:
        with self.session():
            return [self.placer.remove(name) for name in names]

    def verify(self, names: Sequence[str] = (), *, registry_status: bool = True) -> list[dict]:
        with self.session():
            return self.verifier.verify(names, registry_status=registry_status)

    def audit(self, *, offline: bool = False, quiet_fallback: bool = False) -> AuditReport:
        """What the registries know now about the locked versions (:mod:`.audit`)."""
        from skillctl import paths

        answer_file = paths.audit_answer_file(self.scope.lock_path)
        with self.session():
            auditor = Auditor(self.state, self.preparer.resolver, answer_file=answer_file)
            return auditor.run(offline=offline, quiet_fallback=quiet_fallback)


def _older(version: str, than: str) -> bool:
    from skillctl.format.versions import Version

    a, b = Version.parse(version), Version.parse(than)
    return bool(a and b and a < b)
