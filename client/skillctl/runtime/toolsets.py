"""Toolsets: Python classes a skill names (``toolsets: ["module:Class"]``) whose public methods
become tools while the skill is loaded.

A toolset runs in the agent's own process, so only those the user trusts are loaded, by the
config's allow-list of ``module:Class`` patterns (``*`` wildcards)::

    [runtime]
    trusted_toolsets = ["acme_tools.calc:Calculator", "acme_tools.*"]

The module is imported from the Python path (a package the user installed), never from the
skill folder: a skill cannot bring the code a trusted name lets in. A toolset that is not
trusted is not imported at all (``toolset.untrusted``); one that cannot be imported or built is
``toolset.load_failed``. Either way the ``load_skill`` result says so and the SkillSet's
Reporter warns; the skill itself still loads.

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
import importlib
import inspect
import json
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from fnmatch import fnmatchcase

from skillctl.errors import SkillctlError, UsageError

CONFIG_KEY = "trusted_toolsets"  # [runtime] trusted_toolsets = [...]
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


def build(ref: str):
    """An instance of the class ``module:Class`` names (SkillctlError toolset.load_failed)."""
    module_name, _, class_name = ref.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
        return cls()
    except Exception as exc:  # noqa: BLE001 - importing and building run someone else's code
        raise SkillctlError(
            f"the toolset {ref} could not be loaded: {type(exc).__name__}: {exc}",
            hint="Install its package in the agent's Python environment.",
            code="toolset.load_failed",
        ) from None


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

    def __init__(self, *, trusted: Sequence[str], reporter) -> None:
        self.trusted = tuple(trusted)
        self.reporter = reporter
        self._tools: dict[str, ToolsetTool] = {}  # qualified name -> tool
        self._loaded: set[str] = set()

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
                self._load_one(skill.name, ref)
            except SkillctlError as err:
                self.reporter.warn(
                    f"the toolset {ref} of skill {skill.name!r} is not loaded: {err.message} [{err.code}]"
                )
                problems.append(f"The toolset {ref} is not loaded: {err.message} [{err.code}].")
        return problems

    def _load_one(self, skill: str, ref: str) -> None:
        if not trusted_by(ref, self.trusted):
            raise SkillctlError(
                f"{ref} is not in the config's [runtime] {CONFIG_KEY}",
                code="toolset.untrusted",
                hint=f"A toolset runs in the agent's process; trust it with [runtime] {CONFIG_KEY} = [{ref!r}].",
            )
        for tool in method_tools(skill, build(ref)):
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
