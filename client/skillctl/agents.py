"""``--agent``: link an installed skill into the folders other agents read.

The skill itself lives once, in ``.agents/skills/<name>/`` (or ``~/.agents/skills/<name>/``);
each agent gets a relative symlink ``<agent folder>/<name> -> that folder`` (a copy where the
file system cannot link). Documented folders, project scope and user scope:

=========  ======================  ==============================  ===========================
agent      project folder          user folder (-g)                also reads .agents/skills
=========  ======================  ==============================  ===========================
claude     .claude/skills/         ~/.claude/skills/               no
codex      .agents/skills/         ~/.agents/skills/               it is its own folder
cursor     .cursor/skills/         ~/.cursor/skills/               yes
copilot    .github/skills/         ~/.copilot/skills/              yes
gemini     .gemini/skills/         ~/.gemini/skills/               yes (alias)
opencode   .opencode/skills/       ~/.config/opencode/skills/      yes
openclaw   skills/ (workspace)     ~/.openclaw/skills/             yes (recent versions)
=========  ======================  ==============================  ===========================

A link is only ever replaced when it is one of ours (a symlink into our skills folder); a real
folder of the same name belongs to someone else and is reported as a collision.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from skillctl.errors import SkillctlError, UsageError


@dataclass(frozen=True)
class Agent:
    name: str
    project_dir: str  # relative to the project root
    user_dir: str  # relative to the home folder


AGENTS: dict[str, Agent] = {
    a.name: a
    for a in (
        Agent("claude", ".claude/skills", ".claude/skills"),
        Agent("codex", ".agents/skills", ".agents/skills"),
        Agent("cursor", ".cursor/skills", ".cursor/skills"),
        Agent("copilot", ".github/skills", ".copilot/skills"),
        Agent("gemini", ".gemini/skills", ".gemini/skills"),
        Agent("opencode", ".opencode/skills", ".config/opencode/skills"),
        Agent("openclaw", "skills", ".openclaw/skills"),
    )
}
CHOICES = (*AGENTS, "all")


def expand(names: list[str] | tuple[str, ...]) -> list[str]:
    """Agent names with ``all`` expanded, sorted, unknown ones refused."""
    out: set[str] = set()
    for name in names:
        if name == "all":
            out.update(AGENTS)
        elif name in AGENTS:
            out.add(name)
        else:
            raise UsageError(
                f"unknown agent {name!r}", hint=f"Choose from: {', '.join(CHOICES)}.", code="agents.unknown"
            )
    return sorted(out)


def agent_folder(agent: str, *, scope: str, base: Path) -> Path:
    spec = AGENTS[agent]
    return base / (spec.project_dir if scope == "project" else spec.user_dir)


def _ours(link: Path, skills_dir: Path) -> bool:
    if not link.is_symlink():
        return False
    target = (link.parent / os.readlink(link)).resolve()
    return skills_dir.resolve() in target.parents


def link(name: str, skill_dir: Path, agents: list[str], *, scope: str, base: Path, force: bool = False) -> list[Path]:
    """Link ``skill_dir`` into each agent's folder; returns the links made."""
    made = []
    for agent in expand(agents):
        folder = agent_folder(agent, scope=scope, base=base)
        dest = folder / name
        if dest.resolve() == skill_dir.resolve():
            continue  # this agent reads our folder itself (codex)
        if dest.is_symlink() or dest.exists():
            if not (_ours(dest, skill_dir.parent) or force):
                raise SkillctlError(
                    f"{dest} already exists and is not managed by skillctl",
                    hint=f"Move it away, or pass --force to replace it with a link to {skill_dir}.",
                    code="install.collision",
                )
            _remove(dest)
        folder.mkdir(parents=True, exist_ok=True)
        try:
            dest.symlink_to(os.path.relpath(skill_dir, folder), target_is_directory=True)
        except OSError:  # no symlinks here (some Windows setups): a copy still works
            shutil.copytree(skill_dir, dest)
        made.append(dest)
    return made


def unlink(name: str, skills_dir: Path, agents: list[str], *, scope: str, base: Path) -> None:
    """Remove the links made for ``name`` (only symlinks pointing into our skills folder)."""
    for agent in expand(agents):
        dest = agent_folder(agent, scope=scope, base=base) / name
        if _ours(dest, skills_dir):
            dest.unlink()


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    else:
        shutil.rmtree(path)
