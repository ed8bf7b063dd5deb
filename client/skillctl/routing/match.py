"""What routing answers: a skill, its score, why, and which stage of the pipeline decided. Pure data."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Stage(StrEnum):
    """The stage that put a skill in the answer (``route --explain`` names it)."""

    NAME = "name"  # the message invokes the skill by name
    TRIGGER = "trigger"  # one of the skill's own triggers matched (a keyword, a pattern)
    LEXICAL = "lexical threshold"  # lexical-only routing: its points reached the threshold
    GATE = "gate"  # the learned gate's probability reached its threshold
    FOLLOWER = "follower bar"  # a second or third skill: once one is routed, the gate's lower follower bar
    LLM = "llm classifier"  # the offline gate was unsure and the LLM classifier chose it
    SELECT = "select"  # one of several requests in the message, routed alone


@dataclass
class Match:
    name: str
    score: float
    reasons: list[str] = field(default_factory=list)
    components: dict[str, float] = field(default_factory=dict)
    stage: Stage | None = None  # None: not routed (ranked for an explanation)

    def to_dict(self, *, explain: bool = False) -> dict:
        data: dict = {"name": self.name, "score": round(self.score, 4), "reasons": self.reasons}
        if explain:
            data["components"] = {k: round(v, 4) for k, v in self.components.items()}
            data["stage"] = self.stage.value if self.stage else None
        return data
