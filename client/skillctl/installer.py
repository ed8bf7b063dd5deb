"""install / update / uninstall / verify: the operations behind the CLI commands.

Every placement follows one path: resolve → archive in the cache (sha256 checked) →
``extract_archive`` into a staging folder beside the skills folder → validate → swap:

1. write a journal naming the new lock entry          (``<work>/journal-<name>.json``)
2. exchange the staging folder and ``.agents/skills/<name>`` in one atomic step (Linux
   ``renameat2(RENAME_EXCHANGE)``), so the folder is always there, old or new; where that is
   not available: rename the old folder aside (``<work>/old-<name>``), rename the new one in
3. delete the old folder, write skills.lock and skills.toml, delete the journal.

``<work>`` is ``.agents/.skillyard-tmp`` (same file system, outside the folder agents scan).
A crash at any point leaves the old or the new folder whole; the next run, holding the file
lock, repairs leftovers: an ``old-`` folder is put back if the new one never arrived (else
deleted), a journal whose files match the folder in place is applied to the lock (else
dropped), staging folders are deleted. A ``filelock.FileLock`` in ``<work>`` serialises runs.

Test-only hook: ``SKILLYARD_TEST_CRASH_AT=<point>`` SIGKILLs the process at that point
(``after_extract``, ``after_journal``, ``after_rename_old``, ``after_swap``,
``after_delete_old``, ``after_lock``, ``uninstall_after_rename``), for the atomicity tests;
``SKILLYARD_TEST_PAUSE_AT=<point>`` sleeps a second there instead (lock contention tests) and
``SKILLYARD_TEST_NO_EXCHANGE=1`` forces the two-rename fallback.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillctl import agents as agent_links
from skillctl import console, project, sources
from skillctl.errors import SkillctlError, UsageError
from skillctl.project import Locked, Scope, Wanted, source_kind
from skillctl.sources import Fetched, Fetcher, Source

CRASH_ENV = "SKILLYARD_TEST_CRASH_AT"
LOCK_WAIT_NOTICE_SECONDS = 0.2  # after this, tell the user we are waiting for another run
PAUSE_ENV = "SKILLYARD_TEST_PAUSE_AT"  # test-only: sleep a second there (holding the lock)
NO_EXCHANGE_ENV = "SKILLYARD_TEST_NO_EXCHANGE"  # test-only: use the two-rename fallback


def crash_point(name: str) -> None:
    """Test-only: die here, hard, when SKILLYARD_TEST_CRASH_AT names this point."""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
    if os.environ.get(PAUSE_ENV) == name:
        import time

        time.sleep(1.0)


def exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one atomic step (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    if sys.platform != "linux" or os.environ.get(NO_EXCHANGE_ENV):
        return False
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return rc == 0  # EINVAL/ENOSYS (file system or kernel without it): use the fallback


@dataclass
class Change:
    name: str
    action: str  # installed | updated | restored | unchanged | removed | would-update | would-install
    old: str = ""  # version before ("" when none)
    new: str = ""  # version after
    source: str = ""
    path: str = ""
    agents: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "action": self.action, "from": self.old or None,
                "to": self.new or None, "source": self.source, "path": self.path,
                "agents": self.agents}


def describe_locked(entry: Locked) -> str:
    kind = source_kind(entry.source)
    if kind == "registry":
        return f"registry {entry.source.get('registry') or entry.registry_url}"
    if kind == "git":
        return f"git {entry.source['git']}@{entry.commit[:12]}"
    return f"{kind} {entry.source.get({'folder': 'path'}.get(kind, kind), '')}"


def local_changes(folder: Path, files: dict[str, str]) -> list[tuple[str, str]]:
    """[(status, path)] where status is changed | missing | extra, against the locked digests."""
    from skillctl.format import folder_files

    if not folder.is_dir():
        return [("missing", p) for p in sorted(files)]
    found = {f.path: f.sha256 for f in folder_files(folder)}
    out = [("changed", p) for p in sorted(files) if p in found and found[p] != files[p]]
    out += [("missing", p) for p in sorted(files) if p not in found]
    out += [("extra", p) for p in sorted(found) if p not in files]
    return sorted(out, key=lambda item: item[1])


class Installer(Fetcher):
    """Placing and removing skills in one scope (project or user), under its file lock."""

    def __init__(self, scope: Scope, *, config: Any = None, client_factory: Callable | None = None,
                 progress: bool = True, force: bool = False) -> None:
        super().__init__(config=config, client_factory=client_factory, progress=progress,
                         force=force)
        self.scope = scope
        self.wanted: dict[str, Wanted] = {}
        self.locked: dict[str, Locked] = {}


    # --- the file lock, recovery and state ----------------------------------------------

    @contextmanager
    def session(self) -> Iterator[None]:
        """Hold the scope's file lock, repair what a crashed run left, load the state."""
        from filelock import FileLock, Timeout

        self.scope.work_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.scope.work_dir / "lock"))
        try:
            lock.acquire(timeout=LOCK_WAIT_NOTICE_SECONDS)
        except Timeout:
            console.info(f"waiting for another skillctl working in {self.scope.skills_dir} ...")
            lock.acquire()
        try:
            self._answers = {}  # registry answers are fresh for every run
            self.wanted = project.read_manifest(self.scope.manifest_path)
            self.locked = project.read_lock(self.scope.lock_path)
            self.recover()
            yield
        finally:
            lock.release()

    def recover(self) -> None:
        work = self.scope.work_dir
        for old in sorted(work.glob("old-*")):
            target = self.scope.skills_dir / old.name[len("old-"):]
            if target.exists():
                _delete(old)  # the new version arrived whole: the old one goes
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.rename(old, target)  # the new one never arrived: the old one comes back
        for journal in sorted(work.glob("journal-*.json")):
            self._replay(json.loads(journal.read_text("utf-8")))
            journal.unlink()
        for leftover in [*work.glob("new-*"), *work.glob(".new-*"), *work.glob("trash-*")]:
            _delete(leftover)

    def _replay(self, entry: dict) -> None:
        name = entry["name"]
        target = self.scope.skills_dir / name
        if entry.get("remove"):
            if not target.exists():
                self._forget(name)
            return
        locked = Locked.from_toml(name, entry["lock"])
        if target.is_dir() and not local_changes(target, locked.files):
            self._remember(locked, Wanted.from_toml(name, entry["wanted"]))

    def _remember(self, locked: Locked, wanted: Wanted) -> None:
        self.locked[locked.name] = locked
        self.wanted[wanted.name] = wanted
        self._save()

    def _forget(self, name: str) -> None:
        self.locked.pop(name, None)
        self.wanted.pop(name, None)
        self._save()

    def _save(self) -> None:
        project.write_lock(self.scope.lock_path, self.locked)
        project.write_manifest(self.scope.manifest_path, self.wanted)
    # --- placing ------------------------------------------------------------------------

    def place(self, fetched: Fetched, *, wanted_source: dict[str, str], agents: list[str],
              expect_name: str = "", replace: bool = False) -> Change:
        """Extract, validate and swap one skill into place, then record it."""
        from skillctl.format import folder_files

        staging = self.scope.work_dir / f"new-{secrets.token_hex(6)}"
        root = self._extract(fetched.archive, staging)
        name = self._validate(root, expect_name)
        previous = self.locked.get(name)
        if not replace:
            self._check_collision(name, fetched.source, wanted_source)
        locked = Locked(
            name=name, version=fetched.version or _manifest_version(root), sha256=fetched.sha256,
            source={k: v for k, v in wanted_source.items() if k != "version"},
            registry_url=fetched.registry_url, commit=fetched.commit,
            files={f.path: f.sha256 for f in folder_files(root)},
        )
        old_agents = self.wanted[name].agents if name in self.wanted else []
        wanted = Wanted(name, wanted_source, sorted(set(old_agents) | set(agents)),
                        self.wanted[name].extra if name in self.wanted else {})
        crash_point("after_extract")
        self._swap(name, root, locked, wanted)
        shutil.rmtree(staging, ignore_errors=True)
        target = self.scope.skills_dir / name
        agent_links.link(name, target, wanted.agents, scope=self.scope.name, base=self.scope.base,
                         force=self.force)
        self._save_routing_manifest(fetched, name)
        action = "installed" if previous is None else "updated"
        if previous and previous.sha256 == locked.sha256:
            action = "restored"  # the locked version, put back (folder deleted or edited)
        return Change(name, action, previous.version if previous else "", locked.version,
                      describe_locked(locked), str(target), wanted.agents)

    def _extract(self, archive: Path, staging: Path) -> Path:
        from skillctl.format import ArchiveError, extract_archive

        try:
            root = Path(extract_archive(archive, staging))
        except ArchiveError as err:
            shutil.rmtree(staging, ignore_errors=True)
            raise SkillctlError(f"refused archive {archive.name}: {err}",
                                hint="The archive breaks the archive rules; nothing was installed.",
                                code="archive_refused") from err
        if not (root / "SKILL.md").is_file():
            inner = [p for p in root.iterdir() if (p / "SKILL.md").is_file()]
            root = inner[0] if len(inner) == 1 else root
        return root

    def _validate(self, root: Path, expect_name: str) -> str:
        from skillctl.format import load_skill

        report = load_skill(root)
        if not report.valid:
            codes = ", ".join(f"{f.code} ({f.message})" for f in report.errors)
            raise SkillctlError(f"not a valid skill: {codes}", code="invalid_skill",
                                hint="Nothing was installed. `skillctl validate` shows every finding.")
        name = report.name or ""
        if expect_name and name != expect_name:
            raise SkillctlError(f"asked for {expect_name!r} but the archive holds skill {name!r}",
                                hint="Nothing was installed; report this to the registry's owner.",
                                code="name_mismatch")
        return name

    def _check_collision(self, name: str, source: Source, wanted_source: dict[str, str]) -> None:
        current = self.wanted.get(name)
        target = self.scope.skills_dir / name
        if current is None and name not in self.locked and not target.exists():
            return
        if current is not None and _same_origin(current.source, wanted_source):
            return
        if self.force:
            return
        where = describe_locked(self.locked[name]) if name in self.locked else (
            f"folder {target}" if current is None else "skills.toml")
        raise SkillctlError(
            f"collision: {name} is already installed from {where}; refusing to replace it with "
            f"{source.describe()}",
            hint="Two sources provide a skill of this name. Uninstall the first, or pass --force "
            "to replace it.",
            code="collision",
        )

    def _swap(self, name: str, new_root: Path, locked: Locked, wanted: Wanted) -> None:
        work, target = self.scope.work_dir, self.scope.skills_dir / name
        journal = work / f"journal-{name}.json"
        project.atomic_write_text(journal, json.dumps(
            {"name": name, "lock": locked.to_toml(), "wanted": wanted.to_toml()}))
        crash_point("after_journal")
        if target.is_dir() and not target.is_symlink() and exchange(new_root, target):
            crash_point("after_swap")  # new_root now holds the old version
            shutil.rmtree(new_root)
            crash_point("after_delete_old")
        else:
            self._swap_by_renames(new_root, target, work / f"old-{name}")
        self._remember(locked, wanted)
        crash_point("after_lock")
        journal.unlink()

    @staticmethod
    def _swap_by_renames(new_root: Path, target: Path, old: Path) -> None:
        """Where folders cannot be exchanged: old aside, new in, old deleted (see recover)."""
        if old.exists():
            _delete(old)
        had_old = target.exists() or target.is_symlink()
        if had_old:
            os.rename(target, old)
            crash_point("after_rename_old")
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(new_root, target)
        crash_point("after_swap")
        if had_old:
            _delete(old)
            crash_point("after_delete_old")

    def _save_routing_manifest(self, fetched: Fetched, name: str) -> None:
        if fetched.detail is None:
            return
        try:
            from skillctl.routing.manifests import save_registry_manifest
        except ImportError:
            return
        try:
            data = fetched.detail().get("routing_manifest")
            if data:
                save_registry_manifest(name, fetched.sha256, data)
        except SkillctlError as err:  # routing falls back to an offline manifest
            console.warn(f"{name}: routing manifest not saved ({err.message})")

    # --- removing -----------------------------------------------------------------------

    def remove(self, name: str) -> Change:
        target = self.scope.skills_dir / name
        if name not in self.locked and name not in self.wanted and not target.exists():
            raise SkillctlError(f"{name} is not installed in {self.scope.skills_dir}",
                                hint="`skillctl list` shows what is installed.", code="not_installed")
        old = self.locked.get(name)
        agents = self.wanted[name].agents if name in self.wanted else []
        journal = self.scope.work_dir / f"journal-{name}.json"
        project.atomic_write_text(journal, json.dumps({"name": name, "remove": True}))
        trash = self.scope.work_dir / f"trash-{name}-{secrets.token_hex(4)}"
        if target.exists() or target.is_symlink():
            os.rename(target, trash)
            crash_point("uninstall_after_rename")
        agent_links.unlink(name, self.scope.skills_dir, agents, scope=self.scope.name,
                           base=self.scope.base)
        self._forget(name)
        journal.unlink()
        _delete(trash)
        return Change(name, "removed", old.version if old else "", "",
                      describe_locked(old) if old else "", str(target))


def _delete(path: Path) -> None:
    """Remove a folder, or a symlink someone put where a skill folder was (never its target)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def _archive_version(archive: Path) -> str:
    from skillctl.format import load_skill

    return load_skill(archive).version or ""


def _manifest_version(root: Path) -> str:
    from skillctl.format import load_skill

    return load_skill(root).version or ""


def _same_origin(a: dict[str, str], b: dict[str, str]) -> bool:
    """Same place, ignoring the version range: a registry name, a path, a URL or a repository."""
    keys = ("registry", "path", "archive", "url", "git", "subdir")
    return all((a.get(k) or "") == (b.get(k) or "") for k in keys)


# --- the operations the commands call ---------------------------------------------------


class Operations(Installer):
    """install / sync / update / uninstall / verify for one scope."""

    def install(self, args: list[str], *, registry: str = "", agents: list[str] = ()) -> list[Change]:
        agents = agent_links.expand(list(agents))
        changes = []
        parsed = []
        for arg in args:
            source = sources.parse_source(arg)
            if source.kind == "registry" and registry and not source.registry:
                source = Source("registry", name=source.name, spec=source.spec, registry=registry)
            parsed.append(source)
        with self.session():
            self.warm([(self._effective(s), None) for s in parsed if s.kind == "registry"
                       and not self._is_current(self._effective(s))])
            for source in parsed:
                changes.append(self._install_one(source, agents))
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
            and _same_origin(current.source, {**current.source, "registry": source.registry})
            and not local_changes(self.scope.skills_dir / source.name, locked.files))

    def _install_one(self, source: Source, agents: list[str]) -> Change:
        if source.kind != "registry":
            fetched = self.fetch(source)
            return self.place(fetched, wanted_source=source.record(self.scope.base), agents=agents)
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
        spec = source.spec
        locked = self.locked.get(source.name)
        if self._is_current(source):
            self._relink(source.name, agents)
            return Change(source.name, "unchanged", locked.version, locked.version,
                          source.describe(), str(self.scope.skills_dir / source.name), agents)
        if locked and not self.force:
            self._refuse_local_changes(source.name, locked)
        fetched = self.fetch(source)
        record = {"registry": fetched.registry_name, "version": spec or f"^{fetched.version}"}
        return self.place(fetched, wanted_source=record, agents=agents, expect_name=source.name,
                          replace=locked is not None)

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

    def _refuse_local_changes(self, name: str, locked: Locked) -> None:
        edits = local_changes(self.scope.skills_dir / name, locked.files)
        if edits and (self.scope.skills_dir / name).is_dir():
            listed = ", ".join(f"{path} ({status})" for status, path in edits)
            raise SkillctlError(
                f"{name} has local changes: {listed}",
                hint="Keep a copy of your edits, then pass --force to replace them.",
                code="local_changes",
            )

    # -- `install` with no arguments: exactly the lock --

    def disagreements(self) -> list[str]:
        """Why skills.toml and skills.lock do not describe the same skills ([] when they do)."""
        out = []
        for name, wanted in sorted(self.wanted.items()):
            locked = self.locked.get(name)
            if locked is None:
                out.append(f"{name} is in skills.toml but not in skills.lock")
            elif not _same_origin(wanted.source, locked.source):
                out.append(f"{name}: skills.toml and skills.lock name different sources")
            elif source_kind(wanted.source) == "registry" and not self._satisfies(
                    locked, wanted.source.get("version", "")):
                out.append(f"{name}: locked {locked.version} is outside {wanted.source['version']}")
        out += [f"{n} is in skills.lock but not in skills.toml"
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
                    "skills.lock does not match skills.toml: " + "; ".join(problems),
                    hint="Run `skillctl install` without --frozen to update the lock, and commit it.",
                    code="lock_mismatch",
                )
            self.warm(self._sync_jobs())
            changes = [self._sync_one(name) for name in sorted(self.wanted)]
            changes += [self.remove(n) for n in sorted(set(self.locked) - set(self.wanted))]
        return changes

    def _sync_jobs(self) -> list[tuple[Source, Locked | None]]:
        stale = {p.split(" ")[0].rstrip(":") for p in self.disagreements()}
        return [(Source.from_record(n, w.source, self.scope.base), None if n in stale else self.locked[n])
                for n, w in self.wanted.items()
                if n in stale or not (self.scope.skills_dir / n).is_dir()]

    def _sync_one(self, name: str) -> Change:
        wanted, locked = self.wanted[name], self.locked.get(name)
        source = Source.from_record(name, wanted.source, self.scope.base)
        target = self.scope.skills_dir / name
        if locked is None or name in [p.split(" ")[0].rstrip(":") for p in self.disagreements()]:
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
            new_version, new_sha = fetched.version or _archive_version(fetched.archive), fetched.sha256
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

    # -- verify --

    def verify(self, names: list[str] = (), *, registry_status: bool = True) -> list[dict]:
        """One result per skill: {name, version, ok, problems: [{code, message, path}]}."""
        with self.session():
            chosen = names or sorted(set(self.locked) | set(self.wanted))
            results = [self._verify_one(name, registry_status) for name in chosen]
        return results

    def _verify_one(self, name: str, registry_status: bool) -> dict:
        locked = self.locked.get(name)
        problems: list[dict] = []
        if locked is None:
            problems.append(_problem("not_locked", f"{name} is not in skills.lock"))
        else:
            target = self.scope.skills_dir / name
            if not target.is_dir():
                problems.append(_problem("missing", f"{name} is not installed at {target}"))
            else:
                problems += [_problem(f"file_{status}", f"{path} {status}", path)
                             for status, path in local_changes(target, locked.files)]
            if registry_status and source_kind(locked.source) == "registry":
                problems += self._registry_problems(locked)
        return {"name": name, "version": locked.version if locked else None,
                "ok": not problems, "problems": problems}

    def _registry_problems(self, locked: Locked) -> list[dict]:
        try:
            registry = self.config.registry_for_url(locked.registry_url) if locked.registry_url \
                else self.registry(locked.source.get("registry", ""))
            info = self.client(registry).skill(locked.name)
        except SkillctlError as err:
            console.warn(f"{locked.name}: could not ask the registry ({err.message})")
            return []
        entry = next((v for v in info.get("versions") or [] if v.get("version") == locked.version),
                     None)
        if entry is None:
            return [_problem("version_gone", f"{locked.version} is no longer listed by the registry")]
        out = []
        if entry.get("yanked"):
            reason = entry.get("yanked_reason") or entry.get("reason") or "no reason given"
            out.append(_problem("yanked", f"{locked.version} was yanked: {reason}"))
        status = (entry.get("status") or "").lower()
        if status and status not in ("published", "ok", "active", "available", "yanked"):
            out.append(_problem(f"status_{status}", f"{locked.version} is {status} on the registry"))
        if entry.get("sha256") and entry["sha256"] != locked.sha256:
            out.append(_problem("sha256_mismatch",
                                f"the registry lists sha256 {entry['sha256']}, the lock {locked.sha256}"))
        return out


def _problem(code: str, message: str, path: str = "") -> dict:
    return {"code": code, "message": message, "path": path or None}


# --- list -------------------------------------------------------------------------------


def list_installed(*, project_root: Path | None = None, include_user: bool = False,
                   only_user: bool = False, extra_dirs: list[Path] = (), config: Any = None) -> dict:
    """Installed skills with scope, version, source and gating status, plus collisions."""
    from skillctl import discovery

    project_scope = Scope.project(project_root)
    if only_user:
        found = discovery.discover_in(discovery.locate([("user", Scope.user().skills_dir)]))
    else:
        found = discovery.discover(project_dir=project_scope.base, include_user=include_user,
                                   extra_dirs=extra_dirs)
    skills = found.skills
    locks = {"project": project.read_lock(project_scope.lock_path),
             "user": project.read_lock(Scope.user().lock_path)}
    names = {s.name for s in skills}
    rows = [_row(s, locks.get(s.scope, {}).get(s.name), config, names) for s in skills]
    collisions = [{"name": c.name, "used": str(c.used), "shadowed": [str(p) for p in c.shadowed]}
                  for c in found.collisions]
    return {"skills": rows, "collisions": collisions}


def _row(skill, locked: Locked | None, config: Any, installed: set[str]) -> dict:
    manifest = skill.manifest
    return {
        "name": skill.name,
        "scope": skill.scope,
        "version": (locked.version if locked else manifest.version) or None,
        "source": describe_locked(locked) if locked else "unmanaged",
        "path": str(skill.path),
        "gating": _gating(manifest, skill.path, config, installed),
    }


def _gating(manifest, path: Path, config: Any, installed: set[str]) -> dict:
    try:
        from skillctl.gating import check_gates
    except ImportError:
        return {"ok": None, "failures": []}
    result = check_gates(manifest, path, config=config, installed=installed)
    return {"ok": result.ok,
            "failures": [{"gate": f.gate, "reason": f.reason, "fix": f.fix} for f in result.failures]}
