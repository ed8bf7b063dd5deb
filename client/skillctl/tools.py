"""Tool definitions for function calling (OpenAI and Anthropic) and their handlers.

Two tools let a model pull a skill in on demand: ``load_skill(name)`` returns the skill's
instructions (vars substituted, secrets masked, resources listed), ``read_skill_file(name,
path)`` one file inside the skill folder. A path that leaves the folder, by ``..``, an absolute
path or a symlink pointing outside, is refused with a stable error code.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from skillctl.errors import SkillctlError, UsageError

MAX_FILE_BYTES = 256 * 1024  # a model's context is the limit; bigger files are for scripts, not reading

_SPECS = [
    {
        "name": "load_skill",
        "description": "Load the full instructions of an available skill by name. Call it before "
        "doing a task one of the available skills covers.",
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "The skill's name."}},
            "required": ["name"],
            "additionalProperties": False,
        },
    },
    {
        "name": "read_skill_file",
        "description": "Read a file inside a skill's folder (a script, reference or asset the "
        "skill's instructions mention), by a path relative to the skill folder.",
        "parameters": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The skill's name."},
                "path": {"type": "string", "description": "Relative path, e.g. references/api.md."},
            },
            "required": ["name", "path"],
            "additionalProperties": False,
        },
    },
]
TOOL_NAMES = tuple(s["name"] for s in _SPECS)


def specs(*, skills_available: bool = True) -> list[dict]:
    """The provider-neutral specs (name, description, JSON-schema parameters) of these tools;
    none when no skill is available to load."""
    return [dict(s) for s in _SPECS] if skills_available else []


def openai_tools(specs: list[dict] | None = None) -> list[dict]:
    """Chat Completions ``tools=`` entries (of ``specs``, by default this module's tools)."""
    return [
        {
            "type": "function",
            "function": {"name": s["name"], "description": s["description"], "parameters": s["parameters"]},
        }
        for s in (_SPECS if specs is None else specs)
    ]


def anthropic_tools(specs: list[dict] | None = None) -> list[dict]:
    """Messages API ``tools=`` entries (of ``specs``, by default this module's tools)."""
    return [
        {"name": s["name"], "description": s["description"], "input_schema": s["parameters"]}
        for s in (_SPECS if specs is None else specs)
    ]


def tool_definitions(provider: str = "openai", specs: list[dict] | None = None) -> list[dict]:
    if provider == "openai":
        return openai_tools(specs)
    if provider == "anthropic":
        return anthropic_tools(specs)
    raise UsageError(
        f"unknown tool provider {provider!r}", hint="Use 'openai' or 'anthropic'.", code="tool.unknown_provider"
    )


def skill_named(skills, name: str):
    """The installed skill called ``name``, or SkillctlError(code=tool.unknown_skill)."""
    skill = skills.get(name) if isinstance(name, str) else None
    if skill is None:
        raise SkillctlError(f"no skill named {name!r}", hint="Use a name from the catalog.", code="tool.unknown_skill")
    return skill


def load_skill(skills, name: str) -> str:
    """The instructions of skill ``name`` as the full prompt tier renders them (markdown)."""
    from skillctl import prompt

    skill = skill_named(skills, name)
    loaded = prompt.load_full(skill, config=getattr(skills, "config", None))
    skills.record_use([skill.name])
    return prompt.full([loaded], "markdown")


def safe_path(base: Path, relative: str) -> Path:
    """``relative`` inside ``base``, or SkillctlError(code=tool.path_refused)."""
    refused = SkillctlError(
        f"refused path {relative!r}: it must stay inside the skill folder",
        hint="Use a relative path such as references/guide.md.",
        code="tool.path_refused",
    )
    if not isinstance(relative, str) or not relative or "\x00" in relative or "\\" in relative:
        raise refused
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts or (pure.parts and ":" in pure.parts[0]):
        raise refused
    root = base.resolve()
    target = (root / pure).resolve()  # follows symlinks: a link pointing outside lands outside
    if target != root and root not in target.parents:
        raise refused
    return target


def read_skill_file(skills, name: str, path: str) -> str:
    skill = skill_named(skills, name)
    target = safe_path(Path(skill.path), path)
    if not target.is_file():
        raise SkillctlError(f"{skill.name} has no file {path!r}", code="tool.file_not_found")
    if target.stat().st_size > MAX_FILE_BYTES:
        raise SkillctlError(f"{path} is larger than {MAX_FILE_BYTES} bytes", code="tool.file_too_large")
    data = target.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillctlError(f"{path} is not a text file", code="tool.binary_file") from None
    return text


def parse_arguments(arguments: dict | str | None) -> dict:
    """A tool call's arguments, given as a JSON object text or a mapping."""
    args = json.loads(arguments) if isinstance(arguments, str) else dict(arguments or {})
    if not isinstance(args, dict):
        raise TypeError("the arguments must be a JSON object")
    return args


def error_reply(err: Exception) -> str:
    """The text a model reads for a failed call: a stable code, what happened, what to do."""
    if isinstance(err, SkillctlError):
        return json.dumps({"error": err.code, "message": err.message, "hint": err.hint})
    return json.dumps({"error": "tool.bad_call", "message": f"{type(err).__name__}: {err}"})


def _text(args: dict, key: str) -> str:
    """A string argument; a missing or non-string one is a bad call (TypeError)."""
    value = args.get(key)
    if not isinstance(value, str):
        raise TypeError(f"{key!r} must be a string")
    return value


BAD_CALL_ERRORS = (ValueError, TypeError, OSError)  # a malformed call, reported as tool.bad_call


def handle_tool_call(skills, tool: str, arguments: dict | str) -> str:
    """Run one tool call; errors come back as text the model can read (never an exception)."""
    try:
        return call_tool(skills, tool, arguments)
    except (SkillctlError, *BAD_CALL_ERRORS) as err:
        return error_reply(err)


def call_tool(skills, tool: str, arguments: dict | str) -> str:
    """Run one tool call; a failure raises SkillctlError (its code) or one of BAD_CALL_ERRORS."""
    args = parse_arguments(arguments)
    if tool == "load_skill":
        return load_skill(skills, _text(args, "name"))
    if tool == "read_skill_file":
        return read_skill_file(skills, _text(args, "name"), _text(args, "path"))
    raise SkillctlError(f"unknown tool {tool!r}", code="tool.unknown")


__all__ = [
    "BAD_CALL_ERRORS",
    "TOOL_NAMES",
    "anthropic_tools",
    "call_tool",
    "error_reply",
    "handle_tool_call",
    "load_skill",
    "openai_tools",
    "parse_arguments",
    "read_skill_file",
    "safe_path",
    "skill_named",
    "specs",
    "tool_definitions",
]
