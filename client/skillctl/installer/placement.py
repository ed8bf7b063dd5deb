"""Placing and removing skills in one scope, under its file lock, so a crash never loses one.

Every placement follows one path: resolve → archive in the cache (sha256 checked) →
``extract_archive`` into a staging folder beside the skills folder → validate → swap:

1. write a journal naming the new lock entry          (``<work>/journal-<name>.json``)
2. exchange the staging folder and ``.agents/skills/<name>`` in one atomic step (Linux
   ``renameat2(RENAME_EXCHANGE)``), so the folder is always there, old or new; where that is
   not available: rename the old folder aside (``<work>/old-<name>``), rename the new one in
3. delete the old folder; once per operation, write skills.lock and skills.toml, then delete
   the journals of the skills it placed (until then a journal stands for its lock entry).

``<work>`` is ``.agents/.skillyard-tmp`` (same file system, outside the folder agents scan).
A crash at any point leaves the old or the new folder whole; the next run, holding the file
lock, repairs leftovers: an ``old-`` folder is put back if the new one never arrived (else
deleted), a journal whose files match the folder in place is applied to the lock (else
dropped), staging folders are deleted. A ``filelock.FileLock`` in ``<work>`` serialises runs.

The named crash points are test-only (:mod:`skillctl.installer.crashpoints`).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from skillctl import agents as agent_links
from skillctl import fileio
from skillctl.errors import SkillctlError
from skillctl.format.names import NAME_FINDINGS, normalise_name
from skillctl.installer import worklock
from skillctl.installer.arguments import Source
from skillctl.installer.crashpoints import crash_point
from skillctl.installer.fetchers import Fetched
from skillctl.installer.project import Locked, Wanted
from skillctl.installer.records import (
    Action,
    Change,
    declared_version,
    describe_locked,
    same_origin,
)
from skillctl.installer.state import ScopeState
from skillctl.installer.swap import delete, exchange, swap_by_renames
from skillctl.installer.verification import local_changes
from skillctl.reporting import Reporter

if TYPE_CHECKING:
    from skillctl.format.manifest import Manifest


@dataclass(frozen=True)
class Staged:
    """An archive extracted and validated in the work folder, not yet in place."""

    fetched: Fetched
    staging: Path  # the folder to delete when it is not placed
    root: Path  # the skill's folder inside it
    name: str  # the folder name it goes by here
    declared: str  # the name SKILL.md declares
    manifest: Manifest | None = None  # SKILL.md's, as validated

    def discard(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)


class Placer:
    """Placing and removing skills in one scope (project or user), under its file lock."""

    def __init__(self, state: ScopeState, *, reporter: Reporter | None = None, force: bool = False) -> None:
        self.state = state
        self.scope = state.scope
        self.reporter = reporter or Reporter()
        self.force = force
        self._settled: list[Path] = []  # journals whose entries the next flush writes
        # The manifest of each skill placed, as validated when staged: the same files are in
        # place, so what is said about them afterwards (gates) need not parse SKILL.md again.
        self.placed_manifests: dict[str, Manifest | None] = {}

    # --- the file lock, recovery and state ----------------------------------------------

    @contextmanager
    def session(self, on_start: Callable[[], None] = lambda: None) -> Iterator[None]:
        """Hold the scope's file lock, repair what a crashed run left, load the state."""
        with worklock.held(self.scope, self.reporter):
            try:
                on_start()
                self.state.load()
                self.recover()
                yield
            finally:
                self.flush()

    def flush(self) -> None:
        """Write skills.lock and skills.toml if anything changed, then drop the journals they cover."""
        if self.state.dirty:
            self.state.save()
        for journal in self._settled:
            journal.unlink(missing_ok=True)
        self._settled.clear()

    def recover(self) -> None:
        work = self.scope.work_dir
        for old in sorted(work.glob("old-*")):
            target = self.scope.skills_dir / old.name[len("old-") :]
            if target.exists():
                delete(old)  # the new version arrived whole: the old one goes
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.rename(old, target)  # the new one never arrived: the old one comes back
        for journal in sorted(work.glob("journal-*.json")):
            self._replay(json.loads(journal.read_text("utf-8")))
            self._settled.append(journal)
        self.flush()
        for leftover in [*work.glob("new-*"), *work.glob(".new-*"), *work.glob("trash-*")]:
            delete(leftover)

    def _replay(self, entry: dict) -> None:
        name = entry["name"]
        target = self.scope.skills_dir / name
        if entry.get("remove"):
            if not target.exists():
                self.state.forget(name)
            return
        locked = Locked.from_toml(name, entry["lock"])
        if target.is_dir() and not local_changes(target, locked.files):
            self.state.remember(locked, Wanted.from_toml(name, entry["wanted"]))

    # --- placing ------------------------------------------------------------------------

    def discard_staging(self) -> None:
        """Delete every staged folder of this run (the file lock is held: they are all ours)."""
        for leftover in self.scope.work_dir.glob("new-*"):
            shutil.rmtree(leftover, ignore_errors=True)

    def stage(self, fetched: Fetched, *, expect_name: str = "") -> Staged:
        """Extract and validate one archive into a staging folder of the work folder, ready to
        swap in. Touches nothing the agents read; safe to run for several skills at once."""
        staging = self.scope.work_dir / f"new-{secrets.token_hex(6)}"
        root = self._extract(fetched.archive, staging)
        try:
            name, declared, manifest = self._validate(root, expect_name, _folder_name(fetched, root, staging))
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return Staged(fetched, staging, root, name, declared, manifest)

    def place(
        self,
        fetched: Fetched,
        *,
        wanted_source: dict[str, str],
        agents: list[str],
        expect_name: str = "",
        replace: bool = False,
        staged: Staged | None = None,
    ) -> Change:
        """Swap one skill into place (extracted and validated first, unless ``staged`` is),
        then record it."""
        from skillctl.format import folder_files

        staged = staged or self.stage(fetched, expect_name=expect_name)
        staging, root, name, declared = staged.staging, staged.root, staged.name, staged.declared
        previous = self.state.locked.get(name)
        if not replace:
            self._check_collision(name, fetched.source, wanted_source)
        locked = Locked(
            name=name,
            version=fetched.version or declared_version(root),
            sha256=fetched.sha256,
            source={k: v for k, v in wanted_source.items() if k != "version"},
            registry_url=fetched.registry_url,
            commit=fetched.commit,
            files={f.path: f.sha256 for f in folder_files(root)},
            declared_name=declared if declared != name else "",
        )
        old_agents = self.state.wanted[name].agents if name in self.state.wanted else []
        wanted = Wanted(
            name,
            wanted_source,
            sorted(set(old_agents) | set(agents)),
            self.state.wanted[name].extra if name in self.state.wanted else {},
        )
        crash_point("after_extract")
        self._swap(name, root, locked, wanted)
        shutil.rmtree(staging, ignore_errors=True)
        target = self.scope.skills_dir / name
        agent_links.link(name, target, wanted.agents, scope=self.scope.name, base=self.scope.base, force=self.force)
        self._save_routing_manifest(fetched, name)
        self._warn_python_without_docker(name, staged.manifest, target)
        self.placed_manifests[name] = staged.manifest
        action = Action.INSTALLED if previous is None else Action.UPDATED
        if previous and previous.sha256 == locked.sha256:
            action = Action.RESTORED  # the locked version, put back (folder deleted or edited)
        return Change(
            name,
            action,
            previous.version if previous else "",
            locked.version,
            describe_locked(locked),
            str(target),
            wanted.agents,
            list(fetched.notices),
        )

    def _extract(self, archive: Path, staging: Path) -> Path:
        from skillctl.format import ArchiveError, extract_archive

        try:
            root = Path(extract_archive(archive, staging))
        except ArchiveError as err:
            shutil.rmtree(staging, ignore_errors=True)
            raise SkillctlError(
                f"refused archive {archive.name}: {err}",
                hint="The archive breaks the archive rules; nothing was installed.",
                code="install.archive_refused",
            ) from err
        if not (root / "SKILL.md").is_file():
            inner = [p for p in root.iterdir() if (p / "SKILL.md").is_file()]
            root = inner[0] if len(inner) == 1 else root
        return root

    def _validate(self, root: Path, expect_name: str, folder_name: str) -> tuple[str, str, Manifest | None]:
        """(the folder name to use, the name SKILL.md declares, its manifest)."""
        from skillctl.format import load_skill

        report = load_skill(root, folder_name=folder_name)
        name = report.name or ""
        for finding in (f for f in report.warnings if f.code == "name.from_folder"):
            self.reporter.warn(f"{name}: {finding.message} [{finding.code}]")
        if report.manifest is not None and report.errors and all(f.code in NAME_FINDINGS for f in report.errors):
            name = self._normalised(name)
        elif not report.valid:
            codes = ", ".join(f"{f.code} ({f.message})" for f in report.errors)
            raise SkillctlError(
                f"not a valid skill: {codes}",
                code="install.invalid_skill",
                hint="Nothing was installed. `skillctl validate` shows every finding.",
            )
        if expect_name and name != expect_name:
            raise SkillctlError(
                f"asked for {expect_name!r} but the archive holds skill {name!r}",
                hint="Nothing was installed; report this to the registry's owner.",
                code="install.name_mismatch",
            )
        return name, report.name or "", report.manifest

    def _normalised(self, declared: str) -> str:
        """The folder name for a skill whose declared name breaks the rule ("Ahrefs Automation")."""
        name = normalise_name(declared)
        if not name:
            raise SkillctlError(
                f"the skill's name {declared!r} has no letters or digits to name a folder with",
                hint="Nothing was installed.",
                code="install.invalid_skill",
            )
        self.reporter.warn(
            f"{declared!r} is not a valid skill name; installed as {name} (skills.lock keeps the original)"
        )
        return name

    def _check_collision(self, name: str, source: Source, wanted_source: dict[str, str]) -> None:
        current = self.state.wanted.get(name)
        target = self.scope.skills_dir / name
        if current is None and name not in self.state.locked and not target.exists():
            return
        if current is not None and same_origin(current.source, wanted_source):
            return
        if self.force:
            return
        where = (
            describe_locked(self.state.locked[name])
            if name in self.state.locked
            else (f"folder {target}" if current is None else "skills.toml")
        )
        raise SkillctlError(
            f"collision: {name} is already installed from {where}; refusing to replace it with {source.describe()}",
            hint="Two sources provide a skill of this name. Uninstall the first, or pass --force to replace it.",
            code="install.collision",
        )

    def _swap(self, name: str, new_root: Path, locked: Locked, wanted: Wanted) -> None:
        work, target = self.scope.work_dir, self.scope.skills_dir / name
        journal = work / f"journal-{name}.json"
        fileio.atomic_write(journal, json.dumps({"name": name, "lock": locked.to_toml(), "wanted": wanted.to_toml()}))
        crash_point("after_journal")
        if target.is_dir() and not target.is_symlink() and exchange(new_root, target):
            crash_point("after_swap")  # new_root now holds the old version
            shutil.rmtree(new_root)
            crash_point("after_delete_old")
        else:
            swap_by_renames(new_root, target, work / f"old-{name}")
        self.state.remember(locked, wanted)
        crash_point("after_lock")
        self._settled.append(journal)

    def _save_routing_manifest(self, fetched: Fetched, name: str) -> None:
        """The registry's routing manifest, else one made here by the registry's own generator
        (a folder, archive, URL or git source; a registry that has none)."""
        from skillctl.routing.manifests import save_registry_manifest

        try:
            data = fetched.routing_manifest() if fetched.routing_manifest is not None else None
            if not data:
                data = self._generated_manifest(name)
            if data:
                save_registry_manifest(name, fetched.sha256, data)
        except SkillctlError as err:  # routing falls back to an offline manifest
            self.reporter.warn(f"{name}: routing manifest not saved ({err.message})")

    def _warn_python_without_docker(self, name: str, manifest, folder: Path) -> None:
        """Seed 000 warns at install that a Python skill will not get a container here."""
        from skillctl.sandbox.skill_kind import docker_missing_notice, skill_kind

        if manifest is not None and (notice := docker_missing_notice(name, skill_kind(manifest, folder))):
            self.reporter.warn(notice)

    def _generated_manifest(self, name: str) -> dict | None:
        from skillctl.routing.llm_manifest import LLMConfig
        from skillctl.routing.manifests import installed_manifest

        data = installed_manifest(self.scope.skills_dir / name, llm=LLMConfig.from_env())
        if data and data.get("note"):
            self.reporter.warn(f"{name}: {data['note']}")
        return data

    # --- removing -----------------------------------------------------------------------

    def remove(self, name: str) -> Change:
        target = self.scope.skills_dir / name
        if name not in self.state.locked and name not in self.state.wanted and not target.exists():
            raise SkillctlError(
                f"{name} is not installed in {self.scope.skills_dir}",
                hint="`skillctl list` shows what is installed.",
                code="install.not_installed",
            )
        old = self.state.locked.get(name)
        agents = self.state.wanted[name].agents if name in self.state.wanted else []
        journal = self.scope.work_dir / f"journal-{name}.json"
        fileio.atomic_write(journal, json.dumps({"name": name, "remove": True}))
        trash = self.scope.work_dir / f"trash-{name}-{secrets.token_hex(4)}"
        if target.exists() or target.is_symlink():
            os.rename(target, trash)
            crash_point("uninstall_after_rename")
        agent_links.unlink(name, self.scope.skills_dir, agents, scope=self.scope.name, base=self.scope.base)
        self.state.forget(name)
        self._settled.append(journal)
        delete(trash)
        return Change(
            name, Action.REMOVED, old.version if old else "", "", describe_locked(old) if old else "", str(target)
        )


def _folder_name(fetched: Fetched, root: Path, staging: Path) -> str:
    """The name of the skill's own folder (a skill without ``name`` goes by it, seed 003): the
    archive's top folder, else the folder (or git subfolder) installed from; never the staging
    folder's."""
    from skillctl.installer.arguments import SourceKind

    source = fetched.source
    if root != staging:
        return root.name
    if source.kind is SourceKind.FOLDER:
        return Path(source.location).resolve().name
    return Path(source.subdir).name if source.kind is SourceKind.GIT and source.subdir else ""
