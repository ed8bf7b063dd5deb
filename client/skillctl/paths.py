"""Where skillctl keeps things. One place, so every command agrees.

- project skills: ``<project>/.agents/skills/<name>/`` (default scope)
- user skills:    ``~/.agents/skills/<name>/`` (``-g/--global``)
- config:         the user config dir (platformdirs), ``config.toml`` + ``credentials.toml`` (0600)
- state:          client state outside skill folders (routing index, recent use, session approvals,
                  the last audit answer per project)
- cache:          downloads, content-addressed by sha256

``SKILLYARD_HOME`` moves config, state and cache under one folder (tests, CI, containers).
"""

from __future__ import annotations

import os
from pathlib import Path

APP = "skillyard"
PROJECT_SKILLS = Path(".agents") / "skills"
MANIFEST_FILE = "skills.toml"
LOCK_FILE = "skills.lock"


def _home_override() -> Path | None:
    value = os.environ.get("SKILLYARD_HOME")
    return Path(value).expanduser() if value else None


def config_dir() -> Path:
    if home := _home_override():
        return home / "config"
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP))


def state_dir() -> Path:
    if home := _home_override():
        return home / "state"
    from platformdirs import user_state_dir

    return Path(user_state_dir(APP))


def cache_dir() -> Path:
    if home := _home_override():
        return home / "cache"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir(APP))


def user_skills_dir() -> Path:
    return Path(os.environ.get("SKILLYARD_USER_SKILLS") or Path.home() / PROJECT_SKILLS)


def project_root(start: Path | None = None) -> Path:
    """The current project: the nearest folder up holding skills.toml/.lock or .agents, else cwd."""
    start = (start or Path.cwd()).resolve()
    home = Path.home().resolve()
    for folder in (start, *start.parents):
        # ~/.agents is the user scope, never a project: stop before home unless we start there.
        if folder == home and folder != start:
            break
        if any((folder / n).exists() for n in (MANIFEST_FILE, LOCK_FILE, ".agents")):
            return folder
    return start


def project_skills_dir(project: Path | None = None) -> Path:
    return (project or project_root()) / PROJECT_SKILLS


def audit_answer_file(lock_path: Path) -> Path:
    """The registries' last audit answer for one skills.lock (read by ``skillctl audit
    --offline``): in the state dir, keyed by the lock's path, never inside a skill folder."""
    import hashlib

    key = hashlib.sha256(str(lock_path.resolve()).encode()).hexdigest()[:24]
    return state_dir() / "audit" / f"{key}.json"
