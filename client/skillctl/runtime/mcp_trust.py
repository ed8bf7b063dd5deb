"""The user's consent to a skill's MCP command: the ``[runtime] trusted_mcp`` list of config.toml.

A skill's ``mcp`` command runs on this machine, outside the sandbox, with the user's rights, so
it starts only once the user has trusted that exact command. ``skillctl mcp trust NAME`` shows
the command, its arguments and the names of its environment variables, asks, and writes::

    [runtime]
    trusted_mcp = [{name = "issues", digest = "sha256:..."}]

The digest covers what decides what runs: the ``mcp`` block (command, args, env names and
templates, url, transport; not the timeouts, which change when it stops, not what runs) and the
bytes of the files in the skill folder its command or arguments name (in ``python3 server.py``,
a rewritten server.py is another program). A skill whose block or those files changed since
(an update, an edit) is ``mcp.trust_changed`` until trusted again; one never trusted is
``mcp.untrusted``. One entry per skill name: trusting again replaces it.

Only ``skillctl mcp trust`` writes the list: installs, updates and ``skill_management`` never do.
A SkillSet reads the list from the config it is given (none: nothing is trusted). This module
never prompts; the CLI asks.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from skillctl.errors import SkillctlError, UsageError

CONFIG_KEY = "trusted_mcp"  # [runtime] trusted_mcp = [{name, digest}, ...]
DIGEST_PREFIX = "sha256:"
VAR_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")  # ${VAR} in an env value


class Trust(Enum):
    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"  # never trusted
    CHANGED = "changed"  # trusted once; the block or the files it runs changed since


@dataclass(frozen=True)
class ServerCommand:
    """What trusting a skill's server consents to: what ``skillctl mcp trust`` shows and pins."""

    skill: str
    command: str
    args: tuple[str, ...]
    env_names: tuple[str, ...]
    vars_used: tuple[str, ...]  # the ${VAR} names its env reads
    cwd: Path
    files: dict[str, str]  # relative path -> sha256 of a skill file the command line names
    digest: str

    @property
    def line(self) -> str:
        import shlex

        return shlex.join([self.command, *self.args])

    def to_dict(self) -> dict:
        return {
            "skill": self.skill,
            "command": self.command,
            "args": list(self.args),
            "env": list(self.env_names),
            "vars": list(self.vars_used),
            "cwd": str(self.cwd),
            "files": dict(self.files),
            "digest": self.digest,
        }


def server_command(skill) -> ServerCommand:
    """The command an installed skill's ``mcp`` block runs, with its digest."""
    spec = skill.manifest.mcp
    if spec is None or not (spec.command or spec.url):
        raise SkillctlError(f"{skill.name} declares no MCP server", code="mcp.no_server")
    if not spec.command:
        raise SkillctlError(
            f"{skill.name}'s MCP server is remote ({spec.url}); only commands are started",
            hint="Connect your agent to that URL itself.",
            code="mcp.unsupported",
        )
    cwd = Path(skill.path).resolve()
    files = named_files(cwd, [spec.command, *spec.args])
    block = {
        "command": spec.command,
        "args": list(spec.args),
        "env": dict(sorted(spec.env.items())),
        "url": spec.url,
        "transport": spec.transport,
        "files": files,
    }
    canonical = json.dumps(block, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return ServerCommand(
        skill=skill.name,
        command=spec.command,
        args=tuple(spec.args),
        env_names=tuple(spec.env),
        vars_used=tuple(dict.fromkeys(n for v in spec.env.values() for n in VAR_REFERENCE.findall(v))),
        cwd=cwd,
        files=files,
        digest=DIGEST_PREFIX + hashlib.sha256(canonical.encode()).hexdigest(),
    )


def named_files(root: Path, words: list[str]) -> dict[str, str]:
    """sha256 of each regular file inside ``root`` that a word of the command line names."""
    found = {}
    for word in words:
        if not word or word.startswith("-") or "\x00" in word:
            continue
        try:
            path = (root / word).resolve()
        except (OSError, ValueError):
            continue
        if path != root and path.is_relative_to(root) and path.is_file():
            found[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return dict(sorted(found.items()))


@dataclass(frozen=True)
class TrustedEntry:
    name: str
    digest: str

    def to_dict(self) -> dict:
        return {"name": self.name, "digest": self.digest}


def trusted_entries(config, key: str = CONFIG_KEY) -> tuple[TrustedEntry, ...]:
    """``[runtime] trusted_mcp`` of the config, or another list of pins ``key`` names
    (``trusted_skill_toolsets``); UsageError runtime.config_invalid when wrong."""
    values = config.values if config is not None else {}
    runtime = values.get("runtime") or {}
    raw = runtime.get(key, []) if isinstance(runtime, dict) else None
    if not isinstance(raw, list) or not all(_is_entry(e) for e in raw):
        raise UsageError(
            f"[runtime] {key} must be a list of {{name, digest}} tables",
            hint=f"Remove it and trust the skills again; only skillctl writes {key}.",
            code="runtime.config_invalid",
        )
    return tuple(TrustedEntry(str(e["name"]), str(e["digest"])) for e in raw)


def _is_entry(value) -> bool:
    return isinstance(value, dict) and isinstance(value.get("name"), str) and isinstance(value.get("digest"), str)


def trust_of(command: ServerCommand, config) -> Trust:
    pinned = [e.digest for e in trusted_entries(config) if e.name == command.skill]
    if command.digest in pinned:
        return Trust.TRUSTED
    return Trust.CHANGED if pinned else Trust.UNTRUSTED


def require_trusted(skill, config) -> ServerCommand:
    """The skill's command when the user trusted it as it is now; else SkillctlError
    ``mcp.untrusted`` or ``mcp.trust_changed``, whose hint is the command that trusts it."""
    command = server_command(skill)
    trust = trust_of(command, config)
    if trust is Trust.TRUSTED:
        return command
    why = (
        "its mcp block or the files it runs changed since the user trusted it"
        if trust is Trust.CHANGED
        else "the user has not trusted that command"
    )
    raise _untrusted(command, why, config, "mcp.trust_changed" if trust is Trust.CHANGED else "mcp.untrusted")


def _untrusted(command: ServerCommand, why: str, config, code: str) -> SkillctlError:
    hint = f"To use its tools, the user runs `skillctl mcp trust {command.skill}` (it shows the command and asks)."
    if config is None:
        hint += " This SkillSet was given no config: pass config=load_config() so it reads the trust list."
    return SkillctlError(
        f"the MCP server of skill {command.skill!r} (`{command.line}`) would run on this machine outside "
        f"the sandbox, and {why}; the skill is loaded as instructions only",
        hint=hint,
        code=code,
    )


# --- config.toml: written only by `skillctl mcp trust/untrust` --------------------------------


def trust_write(command: ServerCommand) -> bool:
    """Pin ``command`` in config.toml (replacing an older entry of its skill); False when it
    was pinned exactly so already."""
    return pin_write(TrustedEntry(command.skill, command.digest))


def pin_write(entry: TrustedEntry, key: str = CONFIG_KEY) -> bool:
    """Pin ``entry`` in the ``key`` list of config.toml (replacing an older entry of its skill);
    False when it was pinned exactly so already."""
    entries = _stored_entries(key)
    if entry in entries:
        return False
    _store_entries([*(e for e in entries if e.name != entry.name), entry], key)
    return True


def untrust_write(name: str, key: str = CONFIG_KEY) -> bool:
    """Remove ``name``'s entry from config.toml; False when there was none."""
    entries = _stored_entries(key)
    kept = [e for e in entries if e.name != name]
    if len(kept) == len(entries):
        return False
    _store_entries(kept, key)
    return True


def _stored_entries(key: str = CONFIG_KEY) -> list[TrustedEntry]:
    from skillctl.config import Config, config_path, read_toml

    return list(trusted_entries(Config(values=read_toml(config_path())), key))


def _store_entries(entries: list[TrustedEntry], key: str = CONFIG_KEY) -> None:
    from skillctl.config import config_path, edit_toml, write_toml

    data = edit_toml(config_path())
    runtime = data.setdefault("runtime", {})
    if not isinstance(runtime, dict):
        raise UsageError(
            "`runtime` in config.toml holds a value, not a table",
            hint="Run `skillctl config get runtime` to see it.",
            code="config.not_a_table",
        )
    runtime[key] = [e.to_dict() for e in entries]
    write_toml(config_path(), data)
