"""What starts one skill's MCP server: its trusted command, and the environment it gets.

:func:`server_spec` builds a :class:`ServerSpec` only for a command the user trusted as it is now
(:mod:`skillctl.runtime.mcp_trust`; else ``mcp.untrusted`` / ``mcp.trust_changed``, before any var
is read). ``${VAR}`` in the block's ``env`` is expanded only from the vars the skill declares
(:mod:`skillctl.vars`: vars.json, variables.json, the environment for those names, the default);
an undeclared name becomes "" with a warning (``mcp.undeclared_var``), a declared one without a
value is ``mcp.missing_env``. The server's environment is those values plus ``INHERITED_ENV``,
never the rest of ours. Running the servers is :mod:`skillctl.runtime.mcp_clients`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from skillctl.errors import SkillctlError
from skillctl.runtime.mcp_trust import VAR_REFERENCE, require_trusted

DEFAULT_STARTUP_TIMEOUT_S = 30.0  # servers run through npx/uvx may install themselves first
DEFAULT_IDLE_TIMEOUT_S = 600.0  # as the hook helper: warm through a conversation's pauses
UNDECLARED_VAR = "mcp.undeclared_var"  # the code of the warning for an undeclared ${VAR}
# What a server inherits from us: enough to find programs, a home, a locale and a temp folder;
# never the rest of our environment (tokens, cloud keys), which reaches it only as declared vars.
INHERITED_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")


class McpServerError(SkillctlError):
    """A per-skill MCP server failed; ``code`` says how (mcp.start_failed, mcp.crashed...)."""

    code = "mcp.error"


@dataclass(frozen=True)
class ServerSpec:
    """What starts one skill's server. ``env`` holds secrets: never logged, never in a repr."""

    skill: str
    command: str
    args: tuple[str, ...]
    cwd: Path
    startup_timeout: float
    idle_timeout: float
    env: dict[str, str] = field(repr=False, default_factory=dict)  # all it gets: inherited_env + its own
    secrets: frozenset[str] = field(repr=False, default=frozenset())
    warnings: tuple[str, ...] = ()  # what the caller reports (an undeclared ${VAR} left empty)
    files: dict[str, str] = field(default_factory=dict)  # the trusted sha256 of the skill files it runs

    def mask(self, text: str) -> str:
        from skillctl.vars import ResolvedVars

        return ResolvedVars(secrets=set(self.secrets)).mask(text)


def server_spec(skill, *, config=None, environ: dict[str, str] | None = None) -> ServerSpec:
    """The spec of an installed skill's ``mcp`` block, ``${VAR}`` expanded from its declared
    vars: only for a command the user trusted as it is now (:mod:`skillctl.runtime.mcp_trust`)."""
    from skillctl.config import Config
    from skillctl.vars import env_for_skill, resolve_vars

    trusted = require_trusted(skill, config)  # before any var is read: nothing of an untrusted skill runs
    spec = skill.manifest.mcp
    environment = env_for_skill(skill.manifest, config or Config(), environ)
    resolved = resolve_vars(skill.manifest, Path(skill.path), env=environment, config=config)
    declared = {name: resolved.values.get(name) for name in skill.manifest.vars}  # never other names
    secrets, env, warnings = set(resolved.secrets), {}, list[str]()
    for key, template in spec.env.items():
        env[key] = _expand(skill.name, key, template, declared, secrets, warnings)
    return ServerSpec(
        skill=skill.name,
        command=trusted.command,
        args=trusted.args,
        cwd=trusted.cwd,
        startup_timeout=spec.startup_timeout or DEFAULT_STARTUP_TIMEOUT_S,
        idle_timeout=spec.idle_timeout or DEFAULT_IDLE_TIMEOUT_S,
        env={**inherited_env(os.environ if environ is None else environ), **env},
        secrets=frozenset(s for s in secrets if s),
        warnings=tuple(warnings),
        files=trusted.files,
    )


def inherited_env(environ: Mapping[str, str]) -> dict[str, str]:
    """What a server gets of our environment: enough to find programs, a home and a locale."""
    return {name: environ[name] for name in INHERITED_ENV if environ.get(name)}


def _expand(skill: str, key: str, template: str, declared: dict, secrets: set, warnings: list) -> str:
    """``template`` with each ``${VAR}`` replaced: a declared var's value (mcp.missing_env when it
    has none), an undeclared name by "" and a warning, never a value from our environment."""
    from skillctl.config import is_secret_key

    def value(match: re.Match) -> str:
        name = match.group(1)
        if name not in declared:
            warnings.append(
                f"${{{name}}} (in {key}) is not a var the skill {skill} declares: left empty "
                f"[{UNDECLARED_VAR}]; the author declares it under `vars:` in SKILL.md"
            )
            return ""
        found = declared.get(name)
        if not found:
            raise McpServerError(
                f"the MCP server of {skill} needs ${{{name}}} (for {key}) and it has no value",
                hint=f"Set {name} in the skill's vars.json, variables.json or the environment.",
                code="mcp.missing_env",
            )
        if is_secret_key(name) or is_secret_key(key):
            secrets.add(found)
        return found

    return VAR_REFERENCE.sub(value, template)
