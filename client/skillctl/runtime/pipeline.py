"""Skill pipelines: the active skill of a session, and where it hands the conversation over.

The active skill is the one whose instructions the conversation got last: from a ``load_skill``
call, ``session.activate(name)`` or a transition. A skill may name what follows it:

- ``next_skill``: when the active skill's turn ends without tool calls
  (``session.on_turn_end(had_tool_calls=False)``), that skill becomes active and the agent adds
  ``transition.message`` (its instructions) to the conversation and asks the model again;
- ``conditional_next_skills`` (``[{when, skill}]``): while the active skill has some, the session
  offers the ``skill_transition`` tool, whose ``skill`` parameter enumerates the targets with
  their conditions; the model calls it to branch, and gets the target's instructions as the
  result. An explicit transition comes first; ``next_skill`` is the fallback when the turn ends.

Every transition is checked, and a refusal carries a stable code (the model gets it as a tool
error; an automatic one is reported through the session's Reporter and does not happen):

- ``pipeline.depth_limit``: more than :data:`MAX_DEPTH` transitions since the user's message
  (``session.begin``);
- ``pipeline.unknown_skill``: the target is not among the skills the session started with;
- ``pipeline.skill_disabled`` / ``pipeline.skill_gated``: disabled in config, or failing a
  gate of ``skillctl check`` on this machine (OS, binaries, env, config, other skills);
- ``pipeline.not_a_next_skill``: ``skill_transition`` to a skill the active one does not list;
- ``pipeline.no_next_skills``: ``skill_transition`` while the active skill lists none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from skillctl.errors import SkillctlError

if TYPE_CHECKING:
    from skillctl.format.manifest import Manifest

MAX_DEPTH = 5  # transitions per user message: a loop (A -> B -> A ...) ends here, a real pipeline fits
TRANSITION_TOOL = "skill_transition"


class TransitionKind(Enum):
    NEXT = "next_skill"  # automatic, when the turn ends without tool calls
    CONDITIONAL = "conditional_next_skills"  # the model called skill_transition


@dataclass(frozen=True)
class Transition:
    source: str
    target: str
    kind: TransitionKind
    depth: int  # 1 for the first transition after the user's message
    reason: str  # the condition that held (and the model's reason), or "next_skill"
    instructions: str  # the target's instructions, as load_skill gives them

    @property
    def message(self) -> str:
        """The text an agent adds to the conversation for this transition."""
        why = "its next_skill" if self.kind is TransitionKind.NEXT else f"because {self.reason}"
        return (
            f"[skill pipeline] The skill {self.source!r} hands over to {self.target!r} ({why}; "
            f"step {self.depth} of at most {MAX_DEPTH}). Follow these instructions now:\n\n{self.instructions}"
        )


class TransitionRefused(SkillctlError):
    """A transition that did not happen; ``code`` says why (pipeline.*)."""

    def __init__(self, message: str, *, code: str, source: str | None, target: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint, code=code)
        self.source = source
        self.target = target


# What a pipeline needs from its session, given as functions (no session import, easy to fake):
ManifestOf = Callable[[str], "Manifest"]  # name -> the skill's manifest (next_skill, conditional_next_skills)
Refusal = Callable[[str], tuple[str, str] | None]  # name -> (code, reason) when it may not become active
Activate = Callable[[str], str]  # name -> its instructions; makes it the active skill


class Pipeline:
    def __init__(self, *, manifest: ManifestOf, refusal: Refusal, activate: Activate, reporter) -> None:
        self._manifest = manifest
        self._refusal = refusal
        self._activate = activate
        self.reporter = reporter
        self.active: str | None = None
        self.transitions: list[Transition] = []  # since the user's message
        self.refused: list[SkillctlError] = []  # automatic transitions that did not happen, since then

    def begin(self) -> None:
        """A new user message: the depth counts from zero again; the active skill stays."""
        self.transitions, self.refused = [], []

    def conditions(self) -> dict[str, list[str]]:
        """target -> its conditions, for the active skill (empty when it lists none)."""
        found: dict[str, list[str]] = {}
        if self.active is not None:
            for item in self._manifest(self.active).conditional_next_skills:
                found.setdefault(item.skill, []).append(item.when)
        return found

    def tool_spec(self) -> dict | None:
        """The ``skill_transition`` spec while the active skill has conditional next skills."""
        targets = self.conditions()
        if not targets:
            return None
        listed = "; ".join(f"{skill!r} when {' or '.join(whens)}" for skill, whens in targets.items())
        return {
            "name": TRANSITION_TOOL,
            "description": f"Hand the conversation over from the skill {self.active!r} to the next skill whose "
            f"condition holds: {listed}. The result is that skill's instructions; follow them.",
            "parameters": {
                "type": "object",
                "properties": {
                    "skill": {
                        "type": "string",
                        "enum": list(targets),
                        "description": "The next skill: " + listed + ".",
                    },
                    "reason": {"type": "string", "description": "Why its condition holds, in one sentence."},
                },
                "required": ["skill"],
                "additionalProperties": False,
            },
        }

    def call(self, args: dict) -> str:
        """The ``skill_transition`` tool: the target's instructions, or TransitionRefused."""
        target, reason = args.get("skill"), args.get("reason")
        if not isinstance(target, str) or not target:
            raise TypeError("skill_transition needs the name of the next skill as 'skill'")
        targets = self.conditions()
        if not targets:
            raise TransitionRefused(
                f"the active skill {self.active!r} lists no conditional next skills",
                code="pipeline.no_next_skills",
                source=self.active,
                target=target,
            )
        if target not in targets:
            raise TransitionRefused(
                f"{target!r} is not a next skill of {self.active!r} (it lists {', '.join(targets)})",
                code="pipeline.not_a_next_skill",
                source=self.active,
                target=target,
            )
        condition = " or ".join(targets[target]) + (f" ({reason})" if isinstance(reason, str) and reason else "")
        return self._transition(target, TransitionKind.CONDITIONAL, condition).message

    def on_turn_end(self, had_tool_calls: bool) -> Transition | None:
        """The ``next_skill`` transition when the active skill's turn ended without tool calls."""
        if had_tool_calls or self.active is None:
            return None
        target = self._manifest(self.active).next_skill
        if not target:
            return None
        try:
            return self._transition(target, TransitionKind.NEXT, "next_skill")
        except SkillctlError as err:
            self.refused.append(err)
            self.reporter.warn(f"no transition from {self.active!r} to {target!r}: {err.message} [{err.code}]")
            return None

    def _transition(self, target: str, kind: TransitionKind, reason: str) -> Transition:
        source = self.active or ""
        if len(self.transitions) >= MAX_DEPTH:
            raise TransitionRefused(
                f"the pipeline already made {MAX_DEPTH} transitions for this message (the limit)",
                hint="Answer the user now; a new message starts a new count.",
                code="pipeline.depth_limit",
                source=source,
                target=target,
            )
        if refused := self._refusal(target):
            code, why = refused
            raise TransitionRefused(
                f"cannot hand over to {target!r}: {why}",
                code=code,
                source=source,
                target=target,
                hint="Carry on with the active skill, or tell the user what is missing.",
            )
        instructions = self._activate(target)
        self.active = target
        transition = Transition(source, target, kind, len(self.transitions) + 1, reason, instructions)
        self.transitions.append(transition)
        return transition
