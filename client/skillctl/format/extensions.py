"""Extension fields (DESIGN section 3): read from the frontmatter, from OpenClaw-style gating
blocks under ``metadata`` (``openclaw``, ``clawdbot``, ``moltbot`` and their earlier names),
from ``metadata`` itself (seed 002's form, for :data:`METADATA_FIELDS` only) and from
``skill.json`` (the runtime block), into one typed manifest.

Precedence (docs/skill-fields.md): top level > a gating block > ``metadata`` directly. Type
problems in top-level fields are errors (``field.type``); inside ``metadata`` they are warnings,
because ``metadata`` is free-form in the specification and other clients read it loosely.
Shorthands accepted: ``requires.binary``/``binaries``/``commands`` for ``bins``; a list for
``requires`` (the bins); ``vars`` as ``{NAME: "default"}`` (seed 003) or a list of names; ``triggers``
as a list of keywords; ``install`` as ``{kind: package}``; ``mcp`` as a command line.

Versions: semver 2.0 that ``packaging`` also parses. ``v1.2.3`` and ``1.2`` are accepted and
normalised (to ``1.2.3`` and ``1.2.0``) with a ``version.normalised`` warning; anything else is
``version.invalid`` (an error at the top level, a warning for ``metadata.version``).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from packaging.version import InvalidVersion, Version

from skillctl.format.coerce import Reader, dict_at, first
from skillctl.format.findings import error, warning
from skillctl.format.manifest import (
    ConditionalNext,
    InstallSpec,
    Manifest,
    McpSpec,
    Requires,
    RuntimeSpec,
    Triggers,
    VarSpec,
)
from skillctl.format.semver import semver_problem

GATING_BLOCKS = ("openclaw", "clawdbot", "moltbot", "clawdis", "clawdhub")

ALIASES: dict[str, tuple[str, ...]] = {
    "version": ("version",),
    "homepage": ("homepage",),
    "emoji": ("emoji",),
    "os": ("os",),
    "requires": ("requires",),
    "primary_env": ("primaryEnv", "primary_env", "primary-env"),
    "install": ("install",),
    "always": ("always",),
    "skill_key": ("skillKey", "skill_key", "skill-key"),
    "vars": ("vars", "variables"),
    "mcp": ("mcp",),
    "next_skill": ("next_skill", "next-skill", "nextSkill"),
    "conditional_next_skills": ("conditional_next_skills", "conditional-next-skills"),
    "triggers": ("triggers",),
    "toolsets": ("toolsets",),
    "scripts": ("scripts",),
    "default_enabled": ("default_enabled", "default-enabled", "defaultEnabled"),
    "brief_description": ("brief_description", "brief-description", "briefDescription"),
    "user_invocable": ("user-invocable", "user_invocable", "userInvocable"),
    "disable_model_invocation": (
        "disable-model-invocation",
        "disable_model_invocation",
        "disableModelInvocation",
    ),
    "runtime": ("runtime",),
    "category": ("category",),
    "tags": ("tags",),
}
# The gating fields seed 002 puts directly under `metadata:` (and `anyBins` beside `requires`).
METADATA_FIELDS = ("homepage", "emoji", "os", "requires", "primary_env", "install", "always", "skill_key")
METADATA_KEYS = frozenset(k for f in METADATA_FIELDS for k in ALIASES[f]) | {"anyBins", "any_bins"}
# Keys other systems define that we read no further; they get no unknown-key warning.
OTHER_KNOWN = (
    "author", "authors", "argument-hint", "model", "context", "agent", "hooks", "keywords",
    "repository", "command-dispatch", "command-tool", "command-arg-mode",
)  # fmt: skip
KNOWN_KEYS = frozenset(k for keys in ALIASES.values() for k in keys) | set(OTHER_KNOWN)

OS_NAMES = {
    "darwin": "darwin", "macos": "darwin", "mac": "darwin", "osx": "darwin", "macosx": "darwin",
    "linux": "linux",
    "win32": "win32", "windows": "win32", "win": "win32", "win64": "win32",
}  # fmt: skip
INSTALL_KINDS = {"brew": "brew", "apt": "apt", "npm": "npm", "node": "npm", "go": "go",
                 "uv": "uv", "pip": "uv", "pipx": "uv", "download": "download"}  # fmt: skip
_PACKAGE_KEYS = ("formula", "cask", "package", "module", "url", "command", "archive")
_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# `module:Class` from the Python path, or seed 004's skill-relative `toolsets/index:Class` (a
# file of the skill: plain path segments, never `..` or absolute; runtime/toolsets.py loads it).
_TOOLSET = re.compile(r"^(?:[A-Za-z_][\w.]*|[A-Za-z0-9_][\w-]*(?:/[A-Za-z0-9_][\w-]*)*(?:\.py)?):[A-Za-z_]\w*$")
_RUNTIME_KEYS = {
    "runtime": ("runtime",),
    "entrypoint": ("entrypoint", "entry", "main"),
    "requires_network": ("requires_network", "requiresNetwork", "network"),
    "requires_write_access": ("requires_write_access", "requiresWriteAccess"),
    "max_memory_mb": ("max_memory_mb", "maxMemoryMb", "memory_mb"),
    "timeout_seconds": ("timeout_seconds", "timeoutSeconds", "timeout"),
    "test": ("test",),
}


class _Fields:
    """Looks a field up in the frontmatter, then in each gating block, and names its path."""

    def __init__(self, fm: dict, r: Reader) -> None:
        metadata = dict_at(fm, "metadata")
        self.sources: list[tuple[str, dict]] = [("", fm)]
        self.sources += [(f"metadata.{b}.", metadata[b]) for b in GATING_BLOCKS if isinstance(metadata.get(b), dict)]
        self.metadata = metadata
        self.r = r

    def get(self, field: str) -> tuple[Any, str, bool]:
        """(value, path for messages, soft) for the first source that has the field."""
        sources = self.sources + ([("metadata.", self.metadata)] if field in METADATA_FIELDS else [])
        for prefix, source in sources:
            value, key = first([source], *ALIASES[field])
            if value is not None:
                return value, prefix + key, bool(prefix)
        return None, ALIASES[field][0], False

    def requires(self) -> Requires:
        """``requires``, with an ``anyBins`` written beside it (seed 002) in the same source."""
        value, path, soft = self.get("requires")
        requires = _requires(value, path, soft, self.r)
        if not requires.any_bins:
            prefix = path[: -len("requires")] if path.endswith("requires") else ""
            source = next((s for p, s in [*self.sources, ("metadata.", self.metadata)] if p == prefix), {})
            beside, key = first([source], "anyBins", "any_bins")
            requires.any_bins = self.r.strings(beside, prefix + key, soft=soft)
        return requires


def read_extensions(fm: dict, m: Manifest, r: Reader, *, skill_json: dict) -> None:
    f = _Fields(fm, r)
    for attr in ("homepage", "emoji", "primary_env", "skill_key", "next_skill", "brief_description", "category"):
        value, path, soft = f.get(attr)
        setattr(m, attr, r.text(value, path, soft=soft))
    for attr, default in (("always", False), ("default_enabled", True), ("user_invocable", True),
                          ("disable_model_invocation", False)):  # fmt: skip
        value, path, soft = f.get(attr)
        setattr(m, attr, r.flag(value, path, default, soft=soft))
    value, path, soft = f.get("tags")
    m.tags = r.strings(value, path, soft=soft)
    m.version = _version(fm, f, r)
    m.os = _os_list(*f.get("os"), r)
    m.requires = f.requires()
    m.install = _install(*f.get("install"), r)
    m.vars = _vars(*f.get("vars"), r)
    m.mcp = _mcp(*f.get("mcp"), r)
    m.conditional_next_skills = _conditional(*f.get("conditional_next_skills"), r)
    m.triggers = _triggers(*f.get("triggers"), r)
    m.toolsets = _toolsets(*f.get("toolsets"), r)
    m.scripts = _scripts(*f.get("scripts"), r)
    m.runtime = _runtime(fm.get("runtime"), skill_json, r)


def normalise_version(text: str) -> tuple[str | None, bool]:
    """(semver or None, whether it had to be cleaned: `v` prefix dropped, `1.2` completed)."""
    cleaned = text.strip()
    if cleaned[:1] in ("v", "V"):
        cleaned = cleaned[1:]
    if re.fullmatch(r"\d{1,15}(\.\d{1,15})?", cleaned):
        cleaned += ".0" * (2 - cleaned.count("."))
    if semver_problem(cleaned):
        return None, False
    try:
        Version(cleaned)
    except InvalidVersion:
        return None, False
    return cleaned, cleaned != text


def _version(fm: dict, f: _Fields, r: Reader) -> str:
    metadata = dict_at(fm, "metadata")
    candidates = [("version", fm.get("version"), False), ("metadata.version", metadata.get("version"), True)]
    candidates += [(p + "version", s.get("version"), True) for p, s in f.sources[1:]]
    for path, raw, soft in candidates:
        if raw is None:
            continue
        text = r.text(raw, path, soft=soft)
        version, cleaned = normalise_version(text) if text else (None, False)
        if version is None:
            if text:
                make = warning if soft else error
                r.findings.append(make("version.invalid", f"{path} {text!r} is not a semantic version", r.where(path)))
            if soft:
                continue
            return ""
        if cleaned:
            r.findings.append(warning("version.normalised", f"{path} {text!r} read as {version}", r.where(path)))
        return version
    return ""


def _os_list(value: Any, path: str, soft: bool, r: Reader) -> list[str]:
    result = []
    for name in r.strings(value, path, soft=soft):
        normal = OS_NAMES.get(name.lower().replace(" ", "").replace("-", ""))
        if normal is None:
            r.value_error(path, f"unknown operating system {name!r} (darwin, linux, win32)")
        elif normal not in result:
            result.append(normal)
    return result


def _requires(value: Any, path: str, soft: bool, r: Reader) -> Requires:
    if isinstance(value, (list, str)):  # shorthand: a list of binaries
        return Requires(bins=r.strings(value, path, soft=soft))
    block = r.mapping(value, path, soft=soft)
    get = lambda *keys: first([block], *keys)  # noqa: E731
    return Requires(
        bins=r.strings(*get("bins", "binary", "binaries", "commands"), soft=soft),
        any_bins=r.strings(*get("anyBins", "any_bins", "anyBinaries"), soft=soft),
        env=r.strings(*get("env"), soft=soft),
        config=r.strings(*get("config"), soft=soft),
        skills=r.strings(*get("skills"), soft=soft),
        mcp=r.strings(*get("mcp"), soft=soft),
    )


def _install(value: Any, path: str, soft: bool, r: Reader) -> list[InstallSpec]:
    if value is None:
        return []
    if isinstance(value, dict) and "kind" not in value:  # shorthand: {brew: jq, pip: [a, b]}
        value = [{"kind": k, "package": p} for k, v in value.items() for p in r.strings(v, path, soft=soft)]
    elif isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        r.type_error(path, "a list of install specs", value, soft=soft)
        return []
    specs = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
            r.type_error(path, "a list of mappings with a kind", item, soft=soft)
            continue
        kind = INSTALL_KINDS.get(item["kind"].strip().lower())
        if kind is None:
            r.value_error(path, f"install kind {item['kind']!r} is not one of brew/apt/npm/go/uv/download")
            kind = item["kind"].strip().lower()
        package, _ = first([item], *_PACKAGE_KEYS)
        specs.append(
            InstallSpec(
                kind=kind,
                package=r.text(package, path, soft=soft),
                bins=r.strings(item.get("bins"), path, soft=soft),
                label=r.text(item.get("label"), path, soft=soft),
                os=_os_list(item.get("os"), path, soft, r),
                id=r.text(item.get("id"), path, soft=soft),
                sha256=r.text(item.get("sha256"), path, soft=soft).lower(),
            )
        )
    return specs


def _vars(value: Any, path: str, soft: bool, r: Reader) -> dict[str, VarSpec]:
    if value is None:
        return {}
    if isinstance(value, list):  # shorthand: [NAME, ...] or [{name: NAME, ...}, ...]
        pairs = [(i.get("name"), i) if isinstance(i, dict) else (i, None) for i in value]
        value = {str(k) if isinstance(k, (str, int)) else repr(k): spec for k, spec in pairs}
    if not isinstance(value, dict):
        r.type_error(path, "a mapping of variable names", value, soft=soft)
        return {}
    result = {}
    for name, spec in value.items():
        if not isinstance(name, str) or not _VAR_NAME.match(name):
            r.value_error(path, f"{name!r} is not a variable name")
            continue
        if spec is None or isinstance(spec, (str, int, float)):  # shorthand: {NAME: default}
            result[name] = VarSpec(default=None if spec is None else r.text(spec, f"{path}.{name}", soft=soft))
            continue
        if not isinstance(spec, dict):
            r.type_error(f"{path}.{name}", "a mapping or a description", spec, soft=soft)
            continue
        default = spec.get("default")
        result[name] = VarSpec(
            description=r.text(spec.get("description"), f"{path}.{name}", soft=soft),
            default=None if default is None else r.text(default, f"{path}.{name}", soft=soft),
            required=r.flag(spec.get("required"), f"{path}.{name}.required", False, soft=soft),
            secret=r.flag(spec.get("secret"), f"{path}.{name}.secret", False, soft=soft),
        )
    return result


def _mcp(value: Any, path: str, soft: bool, r: Reader) -> McpSpec | None:
    from skillctl.format.mcp_block import read_mcp

    return read_mcp(value, path, soft, r)


def _conditional(value: Any, path: str, soft: bool, r: Reader) -> list[ConditionalNext]:
    if value is None:
        return []
    if isinstance(value, dict):  # shorthand: {"when text": skill}
        value = [{"when": k, "skill": v} for k, v in value.items()]
    if not isinstance(value, list):
        r.type_error(path, "a list of {when, skill}", value, soft=soft)
        return []
    result = []
    for item in value:
        when, _ = first([item], "when", "condition", "if") if isinstance(item, dict) else (None, "")
        skill, _ = first([item], "skill", "next_skill", "then") if isinstance(item, dict) else (None, "")
        if not isinstance(when, str) or not isinstance(skill, str):
            r.type_error(path, "a list of {when, skill} strings", item, soft=soft)
            continue
        result.append(ConditionalNext(when=when.strip(), skill=skill.strip()))
    return result


def _triggers(value: Any, path: str, soft: bool, r: Reader) -> Triggers:
    triggers = Triggers()
    if isinstance(value, (str, list)):  # shorthand: keywords, or [{pattern: ...}, ...]
        items = [value] if isinstance(value, str) else value
        for item in items:
            if isinstance(item, dict):
                triggers.patterns += r.strings(item.get("pattern"), path, soft=soft, split="")
                triggers.keywords += r.strings(item.get("keyword"), path, soft=soft)
            else:
                triggers.keywords += r.strings([item] if not isinstance(item, str) else item, path, soft=soft)
    elif value is not None:
        block = r.mapping(value, path, soft=soft)
        triggers.keywords = r.strings(block.get("keywords"), f"{path}.keywords", soft=soft)
        triggers.verbs = r.strings(block.get("verbs"), f"{path}.verbs", soft=soft)
        triggers.patterns = r.strings(block.get("patterns"), f"{path}.patterns", soft=soft, split="")
    valid = []
    for pattern in triggers.patterns:
        try:
            re.compile(pattern)
            valid.append(pattern)
        except (re.error, RecursionError, OverflowError):
            r.value_error(path, f"pattern {pattern!r} is not a valid regular expression (dropped)")
    triggers.patterns = valid
    words = len(dict.fromkeys([*triggers.keywords, *triggers.verbs]))
    if words > Triggers.MAX_WORDS:
        r.value_error(
            path, f"{words} trigger words; routing uses the first {Triggers.MAX_WORDS} (keywords, then verbs)"
        )
    if len(set(valid)) > Triggers.MAX_PATTERNS:
        r.value_error(path, f"{len(set(valid))} trigger patterns; routing uses the first {Triggers.MAX_PATTERNS}")
    return triggers


def _toolsets(value: Any, path: str, soft: bool, r: Reader) -> list[str]:
    result = []
    for item in r.strings(value, path, soft=soft):
        if _TOOLSET.match(item):
            result.append(item)
        else:
            r.value_error(path, f"toolset {item!r} is not 'module:Class' (dropped)")
    return result


def _scripts(value: Any, path: str, soft: bool, r: Reader) -> dict[str, str]:
    if isinstance(value, (list, str)):  # shorthand: a list of paths, named by their stem
        return {PurePosixPath(p).stem: p for p in r.strings(value, path, soft=soft)}
    block = r.mapping(value, path, soft=soft)
    return {str(k): r.text(v, f"{path}.{k}", soft=soft) for k, v in block.items()}


def _runtime(value: Any, skill_json: dict, r: Reader) -> RuntimeSpec | None:
    """The runtime block: skill.json (its `runtime` object, or itself) under the frontmatter's."""
    base = skill_json["runtime"] if isinstance(skill_json.get("runtime"), dict) else skill_json
    merged = {k: v for k, v in base.items() if any(k in keys for keys in _RUNTIME_KEYS.values())}
    if isinstance(value, str):
        merged["runtime"] = value
    elif value is not None:
        merged.update(r.mapping(value, "runtime"))
    if not merged:
        return None
    get = lambda name: first([merged], *_RUNTIME_KEYS[name])[0]  # noqa: E731
    spec = RuntimeSpec(
        entrypoint=r.text(get("entrypoint"), "runtime.entrypoint"),
        requires_network=r.flag(get("requires_network"), "runtime.requires_network", False),
        requires_write_access=r.flag(get("requires_write_access"), "runtime.requires_write_access", False),
        max_memory_mb=r.number(get("max_memory_mb"), "runtime.max_memory_mb", integer=True),
        timeout_seconds=r.number(get("timeout_seconds"), "runtime.timeout_seconds"),
        test=r.text(get("test"), "runtime.test"),
    )
    spec.runtime = r.text(get("runtime"), "runtime.runtime") or spec.runtime
    if spec.entrypoint.startswith("/") or ".." in PurePosixPath(spec.entrypoint).parts:
        r.findings.append(
            error("field.value", "runtime.entrypoint must be a path inside the skill", r.where("runtime"))
        )
    return spec
