"""``skillctl list``: installed skills with scope, version, source and gating status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillctl.installer import project
from skillctl.installer.project import Locked, Scope
from skillctl.installer.records import describe_locked


def list_installed(
    *,
    project_root: Path | None = None,
    include_user: bool = False,
    only_user: bool = False,
    extra_dirs: list[Path] = (),
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
    names = {s.name for s in skills}
    rows = [_row(s, locks.get(s.scope, {}).get(s.name), config, names) for s in skills]
    collisions = [
        {"name": c.name, "used": str(c.used), "shadowed": [str(p) for p in c.shadowed]} for c in found.collisions
    ]
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
    return {"ok": result.ok, "failures": [{"gate": f.gate, "reason": f.reason, "fix": f.fix} for f in result.failures]}
