"""Routing inside an agent, before its model is called: Claude Code's ``UserPromptSubmit`` hook.

Claude Code runs a command on every prompt with the event as JSON on stdin (``prompt``, ``cwd``,
``session_id``, ``transcript_path``) and adds what the command prints as
``hookSpecificOutput.additionalContext`` to the model's context. ``skillctl hook claude`` routes
the prompt over the skills installed for ``cwd`` (project, then user) and answers with the
instructions of the skills it needs, or with nothing. Instructions beyond the context budget
are replaced by the path of their SKILL.md, for the model to read. A skill whose instructions
were already given in this session gets one line pointing back to them instead of a second
copy. A short continuation ("and for staging too") is routed together with the previous
prompts of the transcript.

:func:`install_claude` writes the hook into ``.claude/settings.json`` (project) or
``~/.claude/settings.json`` (user), keeping everything else in the file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from skillctl import fileio
from skillctl.errors import SkillctlError

EVENT = "UserPromptSubmit"
HOOK_ARGS = "hook claude"  # what identifies our entry in settings.json
# For a project's settings, which teams commit: no machine's path in it, and a teammate without
# skillctl gets no hook error on every prompt.
PORTABLE_COMMAND = f"command -v skillctl >/dev/null 2>&1 && skillctl {HOOK_ARGS} || true"
HOOK_TIMEOUT_S = 30  # Claude Code waits this long at most; a cold semantic route takes ~1 s
TRANSCRIPT_TAIL_BYTES = 256 * 1024  # the previous prompts are at the end; never read it all
HISTORY_MESSAGES = 2  # continuations join at most this many earlier prompts
# Claude Code passes a long hook context on as a short preview (seen beyond ~10,000 characters):
# skills that do not fit are named with the path of their SKILL.md for the model to read.
CONTEXT_BUDGET_CHARS = 9000
_FIX_HINT = "Fix the file by hand, then run `skillctl hook install claude` again."


@dataclass(frozen=True)
class PromptEvent:
    prompt: str
    cwd: Path | None
    session: str | None
    transcript: Path | None


def parse_event(text: str) -> PromptEvent:
    """The hook's stdin; a malformed event is an error (the caller turns it into "no context")."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SkillctlError(f"the hook event is not JSON: {exc}", code="hook.bad_event") from None
    if not isinstance(data, dict) or not isinstance(data.get("prompt"), str):
        raise SkillctlError("the hook event has no `prompt` string", code="hook.bad_event")

    def path(key: str) -> Path | None:
        value = data.get(key)
        return Path(value) if isinstance(value, str) and value else None

    session = data.get("session_id")
    return PromptEvent(
        data["prompt"], path("cwd"), session if isinstance(session, str) and session else None, path("transcript_path")
    )


def transcript_prompts(path: Path | None, *, current: str, limit: int = HISTORY_MESSAGES) -> list[str]:
    """The user's last ``limit`` prompts before ``current``, oldest first ([] when unreadable).

    The transcript is Claude Code's JSONL; only ``user`` entries with text count (tool results
    are ``user`` entries too, without text). Its format is not ours: anything odd is skipped.
    """
    if path is None:
        return []
    try:
        with path.open("rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - TRANSCRIPT_TAIL_BYTES))
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    prompts = [text for line in lines if (text := _user_text(line))]
    if prompts and prompts[-1].strip() == current.strip():
        prompts.pop()  # the current prompt may already be written
    return prompts[-limit:] if limit > 0 else []


def _user_text(line: str) -> str:
    try:
        entry = json.loads(line)
    except ValueError:
        return ""
    message = entry.get("message") if isinstance(entry, dict) and entry.get("type") == "user" else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return " ".join(p for p in parts if isinstance(p, str)).strip()
    return ""


def context_for(skills, event: PromptEvent, *, history: Sequence[str] = ()) -> str:
    """What the model should see for this prompt: new skills in full (within the budget, else
    the path to read), skills already given in this session as a one-line reminder."""
    matches = skills.route(event.prompt, history=list(history))
    if not matches:
        return ""
    # Imported only for a prompt that needs a skill: prompt's XML escaping loads urllib.request
    # (~10 ms of a cold hook).
    from skillctl import prompt
    from skillctl.routing import state

    session = f"claude-{event.session}" if event.session else None
    loaded = state.loaded_skills(session)
    full, pointers = _within_budget(skills, [m for m in matches if m.name not in loaded])
    parts = []
    if full:
        why = " | ".join(f"{m.name}: {_why(m)}" for m in matches if m.name in {s.name for s in full})
        parts += [
            f"skillctl routed this request to these skills ({why}). Follow their instructions.",
            prompt.full(full, "xml"),
        ]
    parts += pointers
    for m in matches:
        if m.name in loaded and (entry := skills.entry(m.name)):
            parts.append(
                f"The {m.name!r} skill applies again; its instructions were given earlier ({Path(entry.path) / 'SKILL.md'})."
            )
    skills.record_use([m.name for m in matches])
    state.remember_loaded([s.name for s in full], session)
    return "\n\n".join(parts)


def _within_budget(skills, matches) -> tuple[list, list[str]]:
    """(skills given in full, best first, while they fit; a "read it" line for each other)."""
    from skillctl import prompt

    full, pointers, budget = [], [], CONTEXT_BUDGET_CHARS
    for m in matches:
        if (skill := skills.get(m.name)) is None:
            continue
        given = prompt.load_full(skill, config=skills.config)
        size = len(prompt.full([given], "xml"))
        if size <= budget:
            full.append(given)
            budget -= size
        else:
            pointers.append(f"The {m.name!r} skill applies ({_why(m)}); read {given.location} before you start.")
    return full, pointers


_WORDY_REASONS = ("name mentioned", "keywords:", "phrases:", "triggers:", "one of several requests")


def _why(match) -> str:
    """The reasons a model can use (matched words), not the scores behind them."""
    words = [r for r in match.reasons if r.startswith(_WORDY_REASONS)]
    return "; ".join(words[:2]) or "close to what it is for"


def claude_output(context: str) -> dict:
    return {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": context}}


def claude_settings_path(*, user: bool, project: Path) -> Path:
    return (Path.home() if user else project) / ".claude" / "settings.json"


def claude_installed(settings: Path) -> bool:
    """Does this Claude Code settings file run our hook? (False when absent or unreadable.)"""
    try:
        data = json.loads(settings.read_text("utf-8"))
        groups = data["hooks"][EVENT]
        return any(HOOK_ARGS in str(h.get("command", "")) for g in groups for h in g.get("hooks", []))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def install_claude(settings: Path, command: str) -> bool:
    """Add (or update) our ``UserPromptSubmit`` hook in a Claude Code settings file; True when
    the file changed. Other hooks and settings stay as they are; invalid JSON is refused."""
    try:
        data = json.loads(settings.read_text("utf-8")) if settings.exists() else {}
    except (OSError, ValueError) as exc:
        raise SkillctlError(
            f"{settings} is not readable JSON: {exc}", hint=_FIX_HINT, code="hook.settings_invalid"
        ) from None
    hooks = data.setdefault("hooks", {}) if isinstance(data, dict) else None
    groups = hooks.setdefault(EVENT, []) if isinstance(hooks, dict) else None
    if not isinstance(groups, list):
        raise SkillctlError(
            f"{settings}: `hooks.{EVENT}` is not a list of hook groups", hint=_FIX_HINT, code="hook.settings_invalid"
        )
    ours = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}
    found = next(
        (
            (group["hooks"], i)
            for group in groups
            if isinstance(group, dict) and isinstance(group.get("hooks"), list)
            for i, hook in enumerate(group["hooks"])
            if isinstance(hook, dict) and HOOK_ARGS in str(hook.get("command", ""))
        ),
        None,
    )
    if found is None:
        groups.append({"hooks": [ours]})
    elif found[0][found[1]] == ours:
        return False
    else:
        found[0][found[1]] = ours
    fileio.atomic_write(settings, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return True
