"""Toolsets: Python classes a skill names (``toolsets: ["module:Class"]``) whose public methods
become tools while the skill is loaded.

A toolset runs in the agent's own process, so only those the user trusts are loaded, by the
config's allow-list of ``module:Class`` patterns (``*`` wildcards)::

    [runtime]
    trusted_toolsets = ["acme_tools.calc:Calculator", "acme_tools.*"]

The module is imported from the Python path (a package the user installed), never from the
skill folder: a skill cannot bring the code a trusted name lets in. Seed 004's skill-relative
form, ``toolsets/index:Class`` (a path with ``/`` or ending in ``.py``: the file
``toolsets/index.py`` of the skill), is code the skill brings, so it is trusted like an MCP
command: pinned to a digest of the skill's Python files (:func:`skill_code`,
:func:`trust_skill_toolsets`, ``skillctl toolsets trust NAME``, ``[runtime]
trusted_skill_toolsets``), and any change to those
files untrusts it (``toolset.trust_changed``). A toolset that is not
trusted is not imported at all (``toolset.untrusted``); one that cannot be imported or built is
``toolset.load_failed``. Either way the ``load_skill`` result says so and the SkillSet's
Reporter warns; the skill itself still loads.

Seed 001's ``custom`` classes, toolsets for every session whatever skill is loaded, are the
config's ``[runtime] session_toolsets = ["module:Class"]`` (listing one there is the user's trust;
only the Python path is searched). Their tools are ``toolset:_session.<method>`` (no skill name
starts with ``_``), sent as ``toolset___session__<method>``.

The class is built with no arguments. Each public method (no leading underscore, not async,
no ``*args``/``**kwargs``) becomes the tool ``toolset:<skill>.<method>``, sent to the model as
``toolset__<skill>__<method>`` (the wire form of :func:`skillctl.runtime.session.wire_name`).
Its docstring is the description and its parameters' type hints the JSON schema: ``str``,
``int``, ``float``, ``bool``, ``None``, ``list/tuple/set[X]``, ``dict``, ``Literal[...]``, an
``Enum`` (called with the member), ``X | None`` and ``Annotated[X, "description"]``; other
hints accept any JSON value. A call runs synchronously in the caller's thread, with no timeout (in-process code cannot be
stopped safely; slow work belongs behind an MCP server, whose calls have one); a ``str`` result is the text, anything
else goes out as JSON; an exception is a tool error (``toolset.call_failed``). The tool policy
applies: ``group:toolsets`` (in the ``coding`` and ``full`` profiles), and a loaded skill's
``allowed-tools`` keeps its own ``toolset:<skill>.*`` tools.
"""

from __future__ import annotations

import collections.abc
import hashlib
import importlib
import importlib.util
import inspect
import json
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from fnmatch import fnmatchcase
from pathlib import Path

from skillctl.errors import SkillctlError, UsageError

CONFIG_KEY = "trusted_toolsets"  # [runtime] trusted_toolsets = [...]
SKILL_CODE_KEY = "trusted_skill_toolsets"  # [runtime] trusted_skill_toolsets = [{name, digest}]
SESSION_KEY = "session_toolsets"  # [runtime] session_toolsets = ["module:Class"] (seed 001's custom)
SESSION_SKILL = "_session"  # the namespace of session toolsets' tools: never a skill's name
MAX_SKILL_CODE_FILES = 500  # Python files digested for a skill's own toolsets (more: refused)
_ARRAYS = (list, tuple, set, frozenset, collections.abc.Sequence, collections.abc.Set)
_OBJECTS = (dict, collections.abc.Mapping)
_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
_UNSUPPORTED = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD, inspect.Parameter.POSITIONAL_ONLY)


@dataclass(frozen=True)
class ToolsetTool:
    skill: str
    name: str  # the method's name
    description: str
    input_schema: dict
    function: Callable = field(compare=False, repr=False)

    @property
    def qualified(self) -> str:
        return f"toolset:{self.skill}.{self.name}"


def trusted_patterns(config) -> tuple[str, ...]:
    """``[runtime] trusted_toolsets`` of the config (UsageError runtime.config_invalid when wrong)."""
    values = config.values if config is not None else {}
    runtime = values.get("runtime") or {}
    patterns = runtime.get(CONFIG_KEY, []) if isinstance(runtime, dict) else None
    if not isinstance(patterns, list) or not all(isinstance(p, str) and (":" in p or "*" in p) for p in patterns):
        raise UsageError(
            f"[runtime] {CONFIG_KEY} must be a list of 'module:Class' patterns",
            hint='e.g. trusted_toolsets = ["acme_tools.calc:Calculator", "acme_tools.*"]',
            code="runtime.config_invalid",
        )
    return tuple(patterns)


def trusted_by(ref: str, patterns: Sequence[str]) -> str:
    """The pattern that trusts the toolset ``module:Class``, or ""."""
    return next((p for p in patterns if fnmatchcase(ref, p)), "")


def session_refs(config) -> tuple[str, ...]:
    """``[runtime] session_toolsets`` (UsageError runtime.config_invalid when wrong)."""
    runtime = (config.values if config is not None else {}).get("runtime") or {}
    refs = runtime.get(SESSION_KEY, []) if isinstance(runtime, dict) else None
    if not isinstance(refs, list) or not all(isinstance(r, str) and ":" in r and "*" not in r for r in refs):
        raise UsageError(
            f"[runtime] {SESSION_KEY} must be a list of 'module:Class' names",
            hint='e.g. session_toolsets = ["my_project.tools:Weather"]',
            code="runtime.config_invalid",
        )
    return tuple(refs)


def skill_relative(ref: str) -> bool:
    """Does ``ref`` name a file of the skill (seed 004's ``toolsets/index:Class``)?"""
    module = ref.partition(":")[0]
    return "/" in module or module.endswith(".py")


def skill_code_files(skill) -> dict[str, str]:
    """Every Python file of the skill (its path in the skill: sha256), what trusting its own
    toolsets consents to (a toolset file imports its neighbours)."""
    root = Path(skill.path).resolve()
    files = sorted(p for p in root.rglob("*.py") if p.is_file() and not p.is_symlink())
    if len(files) > MAX_SKILL_CODE_FILES:
        raise SkillctlError(
            f"{skill.name} has {len(files)} Python files; its toolsets are not loaded",
            hint=f"A skill's own toolsets are trusted by a digest of its Python files (at most {MAX_SKILL_CODE_FILES}).",
            code="toolset.load_failed",
        )
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def own_toolsets(skill) -> list[str]:
    """The skill's skill-relative toolsets (code it brings), sorted."""
    return sorted(r for r in skill.manifest.toolsets if skill_relative(r))


def skill_code(skill) -> str:
    """The digest trusting a skill's own toolsets pins: its toolset names and the bytes of every
    Python file in the skill."""
    canonical = json.dumps({"toolsets": own_toolsets(skill), "files": skill_code_files(skill)}, sort_keys=True)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def trust_skill_toolsets(skill) -> bool:
    """Pin the skill's own toolsets as they are now in config.toml (what the user consents to
    after reading them); False when pinned so already."""
    from skillctl.runtime.mcp_trust import TrustedEntry, pin_write

    return pin_write(TrustedEntry(skill.name, skill_code(skill)), SKILL_CODE_KEY)


def require_skill_code_trusted(skill, config) -> None:
    """SkillctlError ``toolset.untrusted`` / ``toolset.trust_changed`` unless the user pinned
    the skill's Python files as they are now."""
    from skillctl.runtime.mcp_trust import trusted_entries

    pinned = [e.digest for e in trusted_entries(config, SKILL_CODE_KEY) if e.name == skill.name]
    if skill_code(skill) in pinned:
        return
    raise SkillctlError(
        f"{skill.name}'s own toolset code would run in the agent's process, and "
        + ("it changed since the user trusted it" if pinned else "the user has not trusted it"),
        hint=f"Read the skill's Python files, then trust them: skillctl toolsets trust {skill.name} "
        f"(pins them in [runtime] {SKILL_CODE_KEY}).",
        code="toolset.trust_changed" if pinned else "toolset.untrusted",
    )


def build(ref: str, skill_dir: Path | None = None):
    """An instance of the class ``module:Class`` names, from the Python path or (a skill-relative
    ``ref``) from a file in ``skill_dir`` (SkillctlError toolset.load_failed)."""
    module_name, _, class_name = ref.partition(":")
    try:
        module = _skill_module(skill_dir, module_name) if skill_dir else importlib.import_module(module_name)
        cls = getattr(module, class_name)
        return cls()
    except Exception as exc:  # noqa: BLE001 - importing and building run someone else's code
        raise SkillctlError(
            f"the toolset {ref} could not be loaded: {type(exc).__name__}: {exc}",
            hint="Install its package in the agent's Python environment.",
            code="toolset.load_failed",
        ) from None


def _skill_module(skill_dir: Path, module_path: str):
    root = Path(skill_dir).resolve()
    path = (root / module_path).with_suffix(".py").resolve()
    if not path.is_relative_to(root) or not path.is_file():
        raise FileNotFoundError(f"no {module_path.removesuffix('.py')}.py in the skill")
    name = "skillctl_skill_toolsets." + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path.name}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def method_tools(skill: str, instance) -> list[ToolsetTool]:
    """The public methods of ``instance`` as tools of ``skill``."""
    found = []
    for name, function in inspect.getmembers(type(instance), inspect.isfunction):
        if name.startswith("_") or inspect.iscoroutinefunction(function):
            continue
        method = getattr(instance, name)
        parameters = list(inspect.signature(method).parameters.values())
        if any(p.kind in _UNSUPPORTED for p in parameters):
            continue
        hints = _hints(function)
        schema = {
            "type": "object",
            "properties": {p.name: json_schema(hints.get(p.name, typing.Any)) for p in parameters},
            "required": [p.name for p in parameters if p.default is inspect.Parameter.empty],
            "additionalProperties": False,
        }
        description = inspect.getdoc(function) or f"{type(instance).__name__}.{name}"
        found.append(ToolsetTool(skill, name, description, schema, method))
    return found


def json_schema(hint) -> dict:
    """The JSON schema of a type hint ({} for any JSON value)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        notes = [a for a in args[1:] if isinstance(a, str)]
        return {**json_schema(args[0]), **({"description": notes[0]} if notes else {})}
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if isinstance(hint, type) and issubclass(hint, Enum):
        return {"enum": [member.value for member in hint]}
    if origin in (typing.Union, types.UnionType):
        options = [json_schema(a) for a in args]
        return options[0] if len(options) == 1 else {"anyOf": options}
    if hint in _ARRAYS or origin in _ARRAYS:
        return {"type": "array", **({"items": json_schema(args[0])} if args else {})}
    if hint in _OBJECTS or origin in _OBJECTS:
        return {"type": "object"}
    return {}


def _hints(function) -> dict:
    try:
        return typing.get_type_hints(function, include_extras=True)
    except Exception:  # noqa: BLE001 - a hint that does not resolve accepts any value
        return {}


class Toolsets:
    """The toolsets of one session's loaded skills."""

    def __init__(self, *, trusted: Sequence[str], reporter, config=None) -> None:
        self.trusted = tuple(trusted)
        self.reporter = reporter
        self.config = config  # its trusted_skill_toolsets pins skills' own toolset code
        self._tools: dict[str, ToolsetTool] = {}  # qualified name -> tool
        self._loaded: set[str] = set()

    @classmethod
    def for_session(cls, config, *, reporter) -> Toolsets:
        """A session's toolsets: the config's trust lists, and its session toolsets loaded now."""
        toolsets = cls(trusted=trusted_patterns(config), reporter=reporter, config=config)
        for ref in session_refs(config):
            try:
                for tool in method_tools(SESSION_SKILL, build(ref)):
                    toolsets._tools.setdefault(tool.qualified, tool)
            except SkillctlError as err:
                reporter.warn(f"the session toolset {ref} is not loaded: {err.message} [{err.code}]")
        return toolsets

    def tools(self) -> list[ToolsetTool]:
        return list(self._tools.values())

    def load(self, skill) -> list[str]:
        """Load the toolsets of ``skill`` (once); one line per toolset not loaded, with why."""
        if skill.name in self._loaded:
            return []
        self._loaded.add(skill.name)
        problems = []
        for ref in skill.manifest.toolsets:
            try:
                self._load_one(skill, ref)
            except SkillctlError as err:
                self.reporter.warn(
                    f"the toolset {ref} of skill {skill.name!r} is not loaded: {err.message} [{err.code}]"
                )
                hint = f" {err.hint}" if err.hint else ""
                problems.append(f"The toolset {ref} is not loaded: {err.message} [{err.code}].{hint}")
        return problems

    def _load_one(self, skill, ref: str) -> None:
        if skill_relative(ref):
            require_skill_code_trusted(skill, self.config)
            for tool in method_tools(skill.name, build(ref, Path(skill.path))):
                self._tools.setdefault(tool.qualified, tool)
            return
        if not trusted_by(ref, self.trusted):
            raise SkillctlError(
                f"{ref} is not in the config's [runtime] {CONFIG_KEY}",
                code="toolset.untrusted",
                hint=f"A toolset runs in the agent's process; trust it with [runtime] {CONFIG_KEY} = [{ref!r}].",
            )
        for tool in method_tools(skill.name, build(ref)):
            self._tools.setdefault(tool.qualified, tool)  # two toolsets of one skill: the first keeps a name

    def call(self, qualified: str, arguments: dict) -> str:
        tool = self._tools.get(qualified)
        if tool is None:
            raise SkillctlError(f"unknown tool {qualified!r}", hint="Load the skill first.", code="tool.unknown")
        signature = inspect.signature(tool.function)
        try:
            bound = signature.bind(**arguments)
        except TypeError as exc:
            raise TypeError(f"{qualified}: {exc}") from None
        for name, value in bound.arguments.items():
            hint = _hints(tool.function).get(name)
            if isinstance(hint, type) and issubclass(hint, Enum):
                bound.arguments[name] = hint(value)  # ValueError for a value not in it: tool.bad_call
        try:
            result = tool.function(*bound.args, **bound.kwargs)
        except Exception as exc:  # noqa: BLE001 - the toolset's own failure, for the model to read
            raise SkillctlError(
                f"{qualified} failed: {type(exc).__name__}: {exc}", code="toolset.call_failed"
            ) from None
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
