"""The operations the commands call: install, install from the lock, update, uninstall.

Each runs inside :meth:`Installer.session` and places or removes skills only through
:meth:`Installer.place` and :meth:`Installer.remove` (:mod:`skillctl.installer.placement`).
"""

from __future__ import annotations

from collections.abc import Callable

from skillctl import agents as agent_links
from skillctl import sources
from skillctl.errors import SkillctlError, UsageError
from skillctl.installer.placement import Installer
from skillctl.installer.records import Change, declared_version, same_origin
from skillctl.installer.verification import Verification, local_changes
from skillctl.project import Locked, Wanted, source_kind
from skillctl.sources import Source


class Operations(Verification, Installer):
    """install / sync / update / uninstall / verify for one scope."""

    def install(self, args: list[str], *, registry: str = "", agents: list[str] = ()) -> list[Change]:
        agents = agent_links.expand(list(agents))
        parsed = []
        for arg in args:
            source = sources.parse_source(arg)
            if source.kind == "registry" and registry and not source.registry:
                source = Source("registry", name=source.name, spec=source.spec, registry=registry)
            parsed.append(source)
        with self.session():
            self.warm([(self._effective(s), None) for s in parsed if s.kind == "registry"
                       and not self._is_current(self._effective(s))])
            # Every skill is resolved, fetched and verified before the first is placed: a name
            # that does not resolve, a download that fails or a sha256 that does not match
            # leaves everything as it was (like pip and npm), not half of the list installed.
            placements = [self._plan_one(source, agents) for source in parsed]
            changes = [place() for place in placements]
        return changes

    def _effective(self, source: Source) -> Source:
        """A registry source with the recorded registry and range filled in."""
        current = self.wanted.get(source.name)
        recorded = current.source.get("registry", "") if current else ""
        spec = source.spec or (current.source.get("version", "") if current else "")
        return Source("registry", name=source.name, spec=spec, registry=source.registry or recorded)

    def _is_current(self, source: Source) -> bool:
        """Installed, intact, from the same registry and inside the asked range."""
        current, locked = self.wanted.get(source.name), self.locked.get(source.name)
        return bool(
            locked and current and self._satisfies(locked, source.spec)
            and same_origin(current.source, {**current.source, "registry": source.registry})
            and not local_changes(self.scope.skills_dir / source.name, locked.files))

    def _install_one(self, source: Source, agents: list[str]) -> Change:
        return self._plan_one(source, agents)()

    def _plan_one(self, source: Source, agents: list[str]) -> Callable[[], Change]:
        """Check and fetch one skill now; the returned call places it."""
        if source.kind != "registry":
            fetched = self.fetch(source)
            return lambda: self.place(fetched, wanted_source=source.record(self.scope.base), agents=agents)
        current = self.wanted.get(source.name)
        recorded = current.source.get("registry", "") if current else ""
        if source.registry and current and source.registry != recorded and not self.force:
            raise SkillctlError(
                f"{source.name} comes from registry {recorded or 'default'!r}; refusing to switch "
                f"it to {source.registry!r}",
                hint="A skill's registry is never switched silently (dependency confusion). "
                "Uninstall it first, or pass --force.",
                code="collision",
            )
        source = self._effective(source)
        locked = self.locked.get(source.name)
        if self._is_current(source):
            return lambda: self._unchanged(source, locked, agents)
        if locked and not self.force:
            self._refuse_local_changes(source.name, locked)
        fetched = self.fetch(source)
        record = {"registry": fetched.registry_name, "version": source.spec or f"^{fetched.version}"}
        return lambda: self.place(fetched, wanted_source=record, agents=agents, expect_name=source.name,
                                  replace=locked is not None)

    def _unchanged(self, source: Source, locked: Locked, agents: list[str]) -> Change:
        self._relink(source.name, agents)
        return Change(source.name, "unchanged", locked.version, locked.version,
                      source.describe(), str(self.scope.skills_dir / source.name), agents)

    def _satisfies(self, locked: Locked, spec: str) -> bool:
        from skillctl import versions

        return not spec or versions.matches(spec, locked.version) or spec == locked.version

    def _relink(self, name: str, agents: list[str]) -> None:
        if agents:
            wanted = self.wanted[name]
            wanted.agents = sorted(set(wanted.agents) | set(agents))
            agent_links.link(name, self.scope.skills_dir / name, wanted.agents,
                             scope=self.scope.name, base=self.scope.base, force=self.force)
            self._save()

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
                    locked, wanted.source.get("version", "")):
                out.append((name, f"{name}: locked {locked.version} is outside {wanted.source['version']}"))
        out += [(n, f"{n} is in skills.lock but not in skills.toml")
                for n in sorted(set(self.locked) - set(self.wanted))]
        return out

    def sync(self, *, frozen: bool = False) -> list[Change]:
        with self.session():
            if not self.wanted and self.locked and not self.scope.manifest_path.exists():
                self.wanted = {n: Wanted(n, dict(e.source)) for n, e in self.locked.items()}
            if not self.wanted and not self.locked:
                raise UsageError(f"nothing to install: no {self.scope.manifest_path.name} here",
                                 hint="Run `skillctl install NAME` to add a skill.")
            problems = self.disagreements()
            if frozen and problems:
                raise SkillctlError(
                    "skills.lock does not match skills.toml: " + "; ".join(why for _, why in problems),
                    hint="Run `skillctl install` without --frozen to update the lock, and commit it.",
                    code="lock_mismatch",
                )
            stale = {name for name, _ in problems}
            self.warm(self._sync_jobs(stale))
            changes = [self._sync_one(name, stale) for name in sorted(self.wanted)]
            changes += [self.remove(n) for n in sorted(set(self.locked) - set(self.wanted))]
        return changes

    def _sync_jobs(self, stale: set[str]) -> list[tuple[Source, Locked | None]]:
        return [(Source.from_record(n, w.source, self.scope.base), None if n in stale else self.locked[n])
                for n, w in self.wanted.items()
                if n in stale or not (self.scope.skills_dir / n).is_dir()]

    def _sync_one(self, name: str, stale: set[str]) -> Change:
        wanted, locked = self.wanted[name], self.locked.get(name)
        source = Source.from_record(name, wanted.source, self.scope.base)
        target = self.scope.skills_dir / name
        if locked is None or name in stale:
            return self._install_one(source, wanted.agents)
        edits = local_changes(target, locked.files)
        if not edits:
            agent_links.link(name, target, wanted.agents, scope=self.scope.name,
                             base=self.scope.base, force=self.force)
            return Change(name, "unchanged", locked.version, locked.version, source.describe(),
                          str(target), wanted.agents)
        if target.is_dir() and not self.force:
            self._refuse_local_changes(name, locked)
        fetched = self.fetch(source, locked=locked)
        return self.place(fetched, wanted_source=wanted.source, agents=wanted.agents,
                          expect_name=name, replace=True)

    # -- update --

    def update(self, names: list[str] = (), *, dry_run: bool = False) -> list[Change]:
        with self.session():
            unknown = [n for n in names if n not in self.wanted]
            if unknown:
                raise UsageError(f"not in {self.scope.manifest_path.name}: {', '.join(unknown)}",
                                 hint="`skillctl list` shows what is installed.")
            changes, refused = [], []
            for name in names or sorted(self.wanted):
                try:
                    changes.append(self._update_one(name, dry_run=dry_run))
                except SkillctlError as err:
                    if err.code != "local_changes":
                        raise
                    refused.append(err)
            if refused:
                err = refused[0] if len(refused) == 1 else SkillctlError(
                    "; ".join(e.message for e in refused), hint=refused[0].hint,
                    code="local_changes")
                err.changes = changes  # what did happen, for the command's report
                raise err
        return changes

    def _update_one(self, name: str, *, dry_run: bool) -> Change:
        wanted, locked = self.wanted[name], self.locked.get(name)
        source = Source.from_record(name, wanted.source, self.scope.base)
        if locked is None:
            return Change(name, "would-install", "", "", source.describe()) if dry_run \
                else self._install_one(source, wanted.agents)
        if source.kind == "registry":
            new_version, new_sha = self._latest(source, locked)
        else:
            fetched = self.fetch(source)  # local and git sources: the new content's own version
            new_version, new_sha = fetched.version or declared_version(fetched.archive), fetched.sha256
        target = self.scope.skills_dir / name
        if new_sha == locked.sha256 and new_version == locked.version:
            return Change(name, "unchanged", locked.version, locked.version, source.describe(),
                          str(target))
        if not self.force:
            self._refuse_local_changes(name, locked)
        if dry_run:
            return Change(name, "would-update", locked.version, new_version, source.describe(),
                          str(target))
        fetched = self.fetch(source) if source.kind == "registry" else fetched
        return self.place(fetched, wanted_source=wanted.source, agents=wanted.agents,
                          expect_name=name, replace=True)

    def _latest(self, source: Source, locked: Locked) -> tuple[str, str]:
        from skillctl import versions

        registry = self.registry(source.registry)
        info = self.client(registry).skill(source.name)
        listed = info.get("versions") or []
        version = versions.resolve(source.spec, listed, dist_tags=info.get("dist_tags"))
        if version is None:
            return locked.version, locked.sha256
        entry = next((v for v in listed if v.get("version") == version), {})
        return version, entry.get("sha256") or ""

    # -- uninstall --

    def uninstall(self, names: list[str]) -> list[Change]:
        with self.session():
            return [self.remove(name) for name in names]
