"""``skillctl list``: installed skills with scope, version, source and gating status."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillctl.installer import project
from skillctl.installer.project import Locked, Scope, Wanted
from skillctl.installer.records import describe_locked


def list_installed(
    *,
    project_root: Path | None = None,
    include_user: bool = False,
    only_user: bool = False,
    extra_dirs: Sequence[Path] = (),
    config: Any = None,
) -> dict:
    """Installed skills with scope, version, source and gating status, plus collisions."""
    from skillctl import discovery

    project_scope = Scope.project(project_root)
    if only_user:
        found = discovery.discover_in(discovery.locate([("user", Scope.user().skills_dir)]))
    else:
        found = discovery.discover(project_dir=project_scope.base, include_user=include_user, extra_dirs=extra_dirs)
    skills = found.skills
    locks = {"project": project.read_lock(project_scope.lock_path), "user": project.read_lock(Scope.user().lock_path)}
    wanted = {
        "project": project.read_manifest(project_scope.manifest_path),
        "user": project.read_manifest(Scope.user().manifest_path),
    }
    names = {s.name for s in skills}
    rows = [
        _row(s, locks.get(s.scope, {}).get(s.name), wanted.get(s.scope, {}).get(s.name), config, names) for s in skills
    ]
    # A locked skill discovery cannot read (its SKILL.md edited into nonsense, or deleted) is
    # still installed: listed with its files' state, never left out.
    listed = {(s.scope, s.name) for s in skills}
    scopes = [("user", Scope.user())] if only_user else [("project", project_scope)]
    if include_user and not only_user:
        scopes.append(("user", Scope.user()))
    for scope_name, scope in scopes:
        for name, locked in sorted(locks[scope_name].items()):
            if (scope_name, name) not in listed:
                rows.append(
                    _unreadable_row(name, scope_name, scope.skills_dir / name, locked, wanted[scope_name].get(name))
                )
    collisions = [
        {"name": c.name, "used": str(c.used), "shadowed": [str(p) for p in c.shadowed]} for c in found.collisions
    ]
    return {"skills": rows, "collisions": collisions}


def _row(skill, locked: Locked | None, wanted: Wanted | None, config: Any, installed: set[str]) -> dict:  # noqa: ANN001
    from skillctl.installer.verification import local_changes

    manifest = skill.manifest
    changes = local_changes(Path(skill.path), locked.files) if locked else []
    return {
        "name": skill.name,
        "scope": skill.scope,
        "version": (locked.version if locked else manifest.version) or None,
        "source": describe_locked(locked) if locked else "unmanaged",
        "path": str(skill.path),
        # What `skillctl verify --offline` would say about the files: ok, or changed since locked.
        "state": "unlocked" if locked is None else ("changed" if changes else "ok"),
        "changes": [{"status": status, "path": path} for status, path in changes],
        "agents": list(wanted.agents) if wanted else [],
        "gating": _gating(manifest, skill.path, config, installed),
    }


def _unreadable_row(name: str, scope: str, folder: Path, locked: Locked, wanted: Wanted | None) -> dict:
    from skillctl.installer.verification import local_changes

    present = (folder / "SKILL.md").is_file()
    changes = local_changes(folder, locked.files) if folder.is_dir() else []
    reason = "its SKILL.md does not parse" if present else "its folder or SKILL.md is missing"
    return {
        "name": name,
        "scope": scope,
        "version": locked.version or None,
        "source": describe_locked(locked),
        "path": str(folder),
        "state": "changed" if folder.is_dir() else "missing",
        "changes": [{"status": status, "path": path} for status, path in changes],
        "agents": list(wanted.agents) if wanted else [],
        "gating": {
            "ok": False,
            "failures": [
                {"gate": "skill_md", "reason": reason, "fix": f"`skillctl install --force {name}` installs it again"}
            ],
        },
    }


def _gating(manifest, path: Path, config: Any, installed: set[str]) -> dict:
    try:
        from skillctl.gating import check_gates
    except ImportError:
        return {"ok": None, "failures": []}
    result = check_gates(manifest, path, config=config, installed=installed)
    return {"ok": result.ok, "failures": [{"gate": f.gate, "reason": f.reason, "fix": f.fix} for f in result.failures]}
