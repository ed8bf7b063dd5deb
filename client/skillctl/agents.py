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

and windsurf, cline, roo, kiro, amp, goose, qwen, continue, zed, junie, trae, kilo, augment and
droid (Factory) with the folders in :data:`AGENTS` (those whose project folder is
``.agents/skills`` read ours and need no link). ``--agent auto`` links only into the agents used
here (their config folder exists in the home folder or the project); ``--agent all`` adds those
whose skills folder exists already, and never creates one for an absent agent.

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
    # Signs the agent is used here: folders relative to the home folder ("~/...") or the project.
    markers: tuple[str, ...] = ()


AGENTS: dict[str, Agent] = {
    a.name: a
    for a in (
        Agent("claude", ".claude/skills", ".claude/skills", ("~/.claude", ".claude")),
        Agent("codex", ".agents/skills", ".agents/skills", ("~/.codex",)),
        Agent("cursor", ".cursor/skills", ".cursor/skills", ("~/.cursor", ".cursor")),
        Agent("copilot", ".github/skills", ".copilot/skills", ("~/.copilot",)),
        Agent("gemini", ".gemini/skills", ".gemini/skills", ("~/.gemini", ".gemini")),
        Agent("opencode", ".opencode/skills", ".config/opencode/skills", ("~/.config/opencode", ".opencode")),
        Agent("openclaw", "skills", ".openclaw/skills", ("~/.openclaw", "~/.clawdbot", "~/.moltbot")),
        # Those below read .agents/skills in a project (no link needed there) or their own folder.
        Agent("windsurf", ".windsurf/skills", ".codeium/windsurf/skills", ("~/.codeium/windsurf", ".windsurf")),
        Agent("cline", ".agents/skills", ".agents/skills", ("~/.cline",)),
        Agent("roo", ".roo/skills", ".roo/skills", ("~/.roo", ".roo")),
        Agent("kiro", ".kiro/skills", ".kiro/skills", ("~/.kiro", ".kiro")),
        Agent("amp", ".agents/skills", ".config/agents/skills", ("~/.config/amp",)),
        Agent("goose", ".goose/skills", ".config/goose/skills", ("~/.config/goose", ".goose")),
        Agent("qwen", ".qwen/skills", ".qwen/skills", ("~/.qwen", ".qwen")),
        Agent("continue", ".continue/skills", ".continue/skills", ("~/.continue", ".continue")),
        Agent("zed", ".agents/skills", ".agents/skills", ("~/.config/zed",)),
        Agent("junie", ".junie/skills", ".junie/skills", ("~/.junie", ".junie")),
        Agent("trae", ".trae/skills", ".trae/skills", ("~/.trae", ".trae")),
        Agent("kilo", ".agents/skills", ".kilo/skills", ("~/.kilo", "~/.kilocode")),
        Agent("augment", ".augment/skills", ".augment/skills", ("~/.augment", ".augment")),
        Agent("droid", ".agents/skills", ".factory/skills", ("~/.factory",)),
    )
}
CHOICES = (*AGENTS, "auto", "all")
SHARED_DIR = ".agents/skills"  # where skillctl installs; several agents read it themselves


def expand(names: list[str] | tuple[str, ...], *, scope: str = "project", base: Path | None = None) -> list[str]:
    """Agent names with ``auto`` (the agents found on this machine or in the project) and ``all``
    (those, plus any whose skills folder exists already) expanded, sorted; unknown ones refused.
    Neither creates a folder for an agent that is not there."""
    out: set[str] = set()
    for name in names:
        if name in ("auto", "all"):
            out.update(a for a in AGENTS if present(a, base=base) or (name == "all" and _folder_exists(a, scope, base)))
        elif name in AGENTS:
            out.add(name)
        else:
            raise UsageError(
                f"unknown agent {name!r}", hint=f"Choose from: {', '.join(CHOICES)}.", code="agents.unknown"
            )
    return sorted(out)


def present(agent: str, *, base: Path | None = None) -> bool:
    """Whether the agent is used here: one of its folders exists in the home folder or the project."""
    home, project = Path.home(), base or Path.cwd()
    return any((home / m[2:] if m.startswith("~/") else project / m).is_dir() for m in AGENTS[agent].markers)


def _folder_exists(agent: str, scope: str, base: Path | None) -> bool:
    """The agent's own skills folder is there (the shared .agents/skills says nothing of who reads it)."""
    if base is None:
        return False
    folder = agent_folder(agent, scope=scope, base=base)
    return folder != base / SHARED_DIR and folder.is_dir()


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
    """Remove the links made for ``name`` (only symlinks pointing into our skills folder), and
    the agent's skills folder when that leaves it empty. Never the agent's own folder
    (``.claude/``): it is how ``--agent auto`` knows the agent is used here."""
    for agent in expand(agents):
        folder = agent_folder(agent, scope=scope, base=base)
        dest = folder / name
        if _ours(dest, skills_dir):
            dest.unlink()
        if folder.resolve() == skills_dir.resolve():
            continue  # our own folder (agents that read .agents/skills)
        if folder != base and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    else:
        shutil.rmtree(path)
