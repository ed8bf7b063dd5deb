"""Checking installed skills against skills.lock: local-change detection and ``verify``.

:class:`Verifier` reads the scope's state and asks the registry (through the resolver) whether
a locked version was yanked, deprecated, removed or changed; :class:`~skillctl.installer.operations.Operations`
runs it inside the scope's session.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from skillctl.errors import SkillctlError
from skillctl.installer.project import Locked, source_kind
from skillctl.installer.records import LocalChangesError
from skillctl.installer.resolution import RegistryResolver
from skillctl.installer.state import ScopeState


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


class Verifier:
    """verify, and the refusal to overwrite a skill someone edited."""

    def __init__(self, state: ScopeState, resolver: RegistryResolver) -> None:
        self.state = state
        self.scope = state.scope
        self.resolver = resolver

    def refuse_local_changes(self, name: str, locked: Locked) -> None:
        edits = local_changes(self.scope.skills_dir / name, locked.files)
        if edits and (self.scope.skills_dir / name).is_dir():
            listed = ", ".join(f"{path} ({status})" for status, path in edits)
            raise LocalChangesError(
                f"{name} has local changes: {listed}",
                hint="Keep a copy of your edits, then pass --force to replace them.",
            )

    def verify(self, names: Sequence[str] = (), *, registry_status: bool = True) -> list[dict]:
        """One result per skill: {name, version, ok, problems: [{code, message, path}]}.
        Call it inside the scope's session."""
        chosen = list(names) or sorted(set(self.state.locked) | set(self.state.wanted))
        return [self._verify_one(name, registry_status) for name in chosen]

    def _verify_one(self, name: str, registry_status: bool) -> dict:
        locked = self.state.locked.get(name)
        problems: list[dict] = []
        if locked is None:
            problems.append(_problem("not_locked", f"{name} is not in skills.lock"))
        else:
            target = self.scope.skills_dir / name
            if not target.is_dir():
                problems.append(_problem("missing", f"{name} is not installed at {target}"))
            else:
                problems += [
                    _problem(f"file_{status}", f"{path} {status}", path)
                    for status, path in local_changes(target, locked.files)
                ]
            if registry_status and source_kind(locked.source) == "registry":
                problems += self._registry_problems(locked)
        return {"name": name, "version": locked.version if locked else None, "ok": not problems, "problems": problems}

    def _registry_problems(self, locked: Locked) -> list[dict]:
        try:
            resolver = self.resolver
            registry = (
                resolver.config.registry_for_url(locked.registry_url)
                if locked.registry_url
                else resolver.registry(locked.source.get("registry", ""))
            )
            info = resolver.client(registry).skill(locked.name)
        except SkillctlError as err:
            self.resolver.reporter.warn(f"{locked.name}: could not ask the registry ({err.message})")
            return []
        entry = next((v for v in info.get("versions") or [] if v.get("version") == locked.version), None)
        if entry is None:
            return [_problem("version_gone", f"{locked.version} is no longer listed by the registry")]
        out = []
        if entry.get("yanked"):
            reason = entry.get("yanked_reason") or entry.get("reason") or "no reason given"
            out.append(_problem("yanked", f"{locked.version} was yanked: {reason}"))
        if entry.get("deprecated"):
            out.append(_problem("deprecated", f"{locked.version} is deprecated: {entry['deprecated']}"))
        status = (entry.get("status") or "").lower()
        if status and status not in ("published", "ok", "active", "available", "yanked"):
            out.append(_problem(f"status_{status}", f"{locked.version} is {status} on the registry"))
        if entry.get("sha256") and entry["sha256"] != locked.sha256:
            out.append(
                _problem("sha256_mismatch", f"the registry lists sha256 {entry['sha256']}, the lock {locked.sha256}")
            )
        return out


def _problem(code: str, message: str, path: str = "") -> dict:
    return {"code": code, "message": message, "path": path or None}
