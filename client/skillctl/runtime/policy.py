"""Tool policy: which tools a session may offer the model and run (pure: data in, verdicts out).

A tool is allowed when all of these hold, checked in this order (the first that fails is the
reason given, with the stable code ``tool.not_allowed``):

1. no ``deny`` pattern matches it (global ``[tools]`` and the agent's; deny always wins);
2. the profile (the agent's, else the global one, else ``full``) or an ``also_allow`` pattern
   covers it;
3. every ``allow`` list that is set (global and agent's) covers it: an agent can narrow the
   global lists, never lift them;
4. every loaded skill that declares ``allowed-tools`` covers it, together with
   ``group:skills`` and the skill's own ``mcp:<skill>.*`` and ``toolset:<skill>.*`` tools. A
   skill only ever narrows.

Patterns are tool names, ``group:<name>`` or wildcards (``mcp:github.*``, ``*``), compared
case-insensitively; Claude Code and OpenClaw names map to ours (``Bash`` -> ``exec``,
``WebFetch`` -> ``web_fetch``; ``Bash(git:*)`` is ``exec``: argument patterns are for the tool
itself to enforce). The names not provided by skillctl (``read``, ``exec``, ``message``...)
are the agent's own tools: ``policy.allows("exec")`` tells an agent builder whether to offer
its own exec tool.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase

from skillctl.errors import SkillctlError, UsageError

GROUPS: dict[str, tuple[str, ...]] = {
    "group:skills": (
        "load_skill",
        "read_skill_file",
        "find_skills",
        "skill_transition",
    ),  # reading and following skills
    "group:fs": ("read", "write", "edit", "apply_patch"),  # the agent's file tools
    "group:runtime": ("exec", "process", "run_skill"),  # running code (run_skill: sandboxed)
    "group:web": ("web_search", "web_fetch"),
    "group:messaging": ("message",),
    "group:mcp": ("mcp:*",),  # every tool of the loaded skills' MCP servers
    "group:toolsets": ("toolset:*",),  # the methods of the loaded skills' trusted toolsets
    "group:management": ("skill_management",),  # enabling, installing and creating skills (full only)
}
PROFILES: dict[str, tuple[str, ...]] = {
    "minimal": ("group:skills",),
    "coding": ("group:skills", "group:fs", "group:runtime", "group:mcp", "group:toolsets"),
    "messaging": ("group:skills", "group:messaging"),
    "full": ("*",),
}
DEFAULT_PROFILE = "full"  # no [tools] in the config: nothing is restricted
ALIASES = {
    "bash": "exec",
    "shell": "exec",
    "apply-patch": "apply_patch",
    "webfetch": "web_fetch",
    "websearch": "web_search",
    "multiedit": "edit",
}
RULE_KEYS = ("profile", "allow", "also_allow", "deny")
_GROUP_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_ARGUMENTS = re.compile(r"\(.*\)$")  # Bash(git add:*) -> Bash


def normalise(name: str) -> str:
    """The canonical, lower-case form of a tool name or pattern."""
    bare = _ARGUMENTS.sub("", name.strip()).strip().lower()
    return ALIASES.get(bare, bare)


@dataclass(frozen=True)
class Rules:
    """One layer of configuration: ``[tools]`` or ``[agents.<name>.tools]``."""

    source: str = "[tools]"
    profile: str | None = None
    allow: tuple[str, ...] | None = None  # None: not set (the profile decides)
    also_allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


@dataclass(frozen=True)
class SkillLimit:
    """A loaded skill's ``allowed-tools``: the session may use only these (and reading skills)."""

    skill: str
    allowed: tuple[str, ...]

    def patterns(self) -> tuple[str, ...]:
        return (*self.allowed, "group:skills", f"mcp:{self.skill}.*", f"toolset:{self.skill}.*")


@dataclass(frozen=True)
class ToolPolicy:
    layers: tuple[Rules, ...] = ()
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(GROUPS))
    limits: tuple[SkillLimit, ...] = ()

    @classmethod
    def from_config(cls, config, *, agent: str | None = None) -> ToolPolicy:
        """The policy of ``[tools]`` and, for ``agent``, ``[agents.<agent>.tools]``."""
        values = config.values if config is not None else {}
        table = _table(values.get("tools"), "[tools]")
        groups = {**GROUPS, **_user_groups(table.get("groups"))}
        layers = [_rules(table, "[tools]", extra=("groups",))]
        if agent:
            agent_table = _table(
                ((values.get("agents") or {}).get(agent) or {}).get("tools"), f"[agents.{agent}.tools]"
            )
            layers.append(_rules(agent_table, f"[agents.{agent}.tools]"))
        policy = cls(tuple(layers), groups)
        policy._check_groups()
        return policy

    @property
    def profile(self) -> str:
        return next((r.profile for r in reversed(self.layers) if r.profile), DEFAULT_PROFILE)

    def allows(self, tool: str) -> bool:
        return not self.why_refused(tool)

    def why_refused(self, tool: str) -> str:
        """Empty when ``tool`` is allowed, else the rule that refuses it."""
        name = normalise(tool)
        for rules in self.layers:
            if pattern := self._match(name, rules.deny):
                return f"denied by {rules.source} deny ({pattern})"
        also = tuple(p for r in self.layers for p in r.also_allow)
        if not self._match(name, (*PROFILES[self.profile], *also)):
            return f"not in the {self.profile!r} tool profile"
        for rules in self.layers:
            if rules.allow is not None and not self._match(name, rules.allow):
                return f"not in {rules.source} allow"
        for limit in self.limits:
            if not self._match(name, limit.patterns()):
                return f"not in the allowed-tools of the loaded skill {limit.skill!r}"
        return ""

    def check(self, tool: str) -> None:
        """SkillctlError(code=tool.not_allowed) unless ``tool`` is allowed."""
        if why := self.why_refused(tool):
            raise SkillctlError(
                f"the tool {tool!r} is not allowed here: {why}",
                hint="The tool policy is [tools] in skillctl's config.toml.",
                code="tool.not_allowed",
            )

    def tightened(self, skill: str, allowed_tools: Sequence[str]) -> ToolPolicy:
        """This policy narrowed by a loaded skill's ``allowed-tools`` (unchanged when it has none)."""
        if not allowed_tools or any(limit.skill == skill for limit in self.limits):
            return self
        return replace(self, limits=(*self.limits, SkillLimit(skill, tuple(allowed_tools))))

    def allows_server(self, skill: str) -> bool:
        """Could any tool of ``skill``'s MCP server be allowed? (Asked before starting it.)"""
        return self._allows_some(f"mcp:{skill}")

    def allows_toolsets(self, skill: str) -> bool:
        """Could any tool of ``skill``'s toolsets be allowed? (Asked before importing them.)"""
        return self._allows_some(f"toolset:{skill}")

    def _allows_some(self, prefix: str) -> bool:
        if self.allows(f"{prefix}.*"):
            return True
        named = [
            p
            for r in self.layers
            for p in (*(r.allow or ()), *r.also_allow)
            if normalise(p).startswith(f"{prefix}.".lower())
        ]
        return any(self.allows(p) for p in named)

    def _match(self, name: str, patterns: Sequence[str]) -> str:
        """The first pattern (groups expanded) that covers ``name``, or ""."""
        for pattern in patterns:
            for member in self._expand(normalise(pattern)):
                if fnmatchcase(name, member):
                    return pattern
        return ""

    def _expand(self, pattern: str, seen: frozenset[str] = frozenset()) -> list[str]:
        """A pattern, or the members of a group (nested groups too; a cycle ends where it loops)."""
        if not pattern.startswith("group:"):
            return [pattern]
        if pattern in seen:
            return []
        return [m for member in self.groups.get(pattern, ()) for m in self._expand(normalise(member), seen | {pattern})]

    def _check_groups(self) -> None:
        for rules in self.layers:
            for pattern in (*(rules.allow or ()), *rules.also_allow, *rules.deny):
                if normalise(pattern).startswith("group:") and normalise(pattern) not in self.groups:
                    raise UsageError(
                        f"{rules.source}: unknown group {pattern!r}",
                        code="policy.unknown_group",
                        hint=f"Known groups: {', '.join(sorted(self.groups))}; define more in [tools.groups].",
                    )


def _table(value, source: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _invalid(f"{source} must be a table")
    return value


def _rules(table: dict, source: str, *, extra: tuple[str, ...] = ()) -> Rules:
    unknown = sorted(set(table) - set(RULE_KEYS) - set(extra))
    if unknown:
        raise _invalid(f"{source}: unknown key {unknown[0]!r} (known: {', '.join(RULE_KEYS + extra)})")
    profile = table.get("profile")
    if profile is not None and profile not in PROFILES:
        raise UsageError(
            f"{source}: unknown profile {profile!r}",
            code="policy.unknown_profile",
            hint=f"Use one of {', '.join(PROFILES)}.",
        )
    allow = table.get("allow")
    return Rules(
        source,
        profile,
        None if allow is None else _names(allow, f"{source} allow"),
        _names(table.get("also_allow", []), f"{source} also_allow"),
        _names(table.get("deny", []), f"{source} deny"),
    )


def _names(value, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _invalid(f"{where} must be a list of tool names or patterns")
    return tuple(value)


def _user_groups(value) -> dict[str, tuple[str, ...]]:
    groups = {}
    for name, members in _table(value, "[tools.groups]").items():
        if not _GROUP_NAME.match(name) or f"group:{name}" in GROUPS:
            raise _invalid(f"[tools.groups]: {name!r} is not a new group name (lower case, not a built-in group)")
        groups[f"group:{name}"] = _names(members, f"[tools.groups] {name}")
    return groups


def _invalid(message: str) -> UsageError:
    return UsageError(
        message, hint="Fix the tool policy in skillctl's config.toml (see `skillctl config`).", code="policy.invalid"
    )
