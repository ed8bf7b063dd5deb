"""Stage 5, explain: what matched, and for a skill left out, what stopped it. Pure code.

Every routed :class:`~skillctl.routing.match.Match` names the stage that put it in the answer
(``Match.stage``); :func:`why_not_routed` says, of a skill ranked but not routed, which stage's
number kept it out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillctl.routing.weights import DEFAULT_WEIGHTS, Weights

if TYPE_CHECKING:
    from skillctl.routing.lexical import _Hits
    from skillctl.routing.match import Match


def explain_lexical(hit: _Hits) -> list[str]:
    reasons = []
    if hit.named:
        reasons.append("name mentioned")
    if hit.invoked:
        reasons.append("invoked by name")
    if hit.keywords:
        reasons.append("keywords: " + ", ".join(hit.keywords))
    if hit.phrases:
        reasons.append("phrases: " + ", ".join(hit.phrases))
    if hit.triggers:
        reasons.append("triggers: " + ", ".join(hit.triggers))
    if hit.negative:
        reasons.append("negative constraint: " + ", ".join(hit.negative))
    return reasons


def decided_by(match: Match) -> str:
    """The stage that routed ``match``, in words (``route --explain``)."""
    return f"decided by: {match.stage.value}" if match.stage else "not routed"


def why_not_routed(match: Match, *, best: bool, w: Weights = DEFAULT_WEIGHTS, threshold: float | None = None) -> str:
    """The stage that kept a ranked skill out: the lexical threshold, or the gate with its
    probability (``threshold``: the gate's)."""
    c = match.components
    if "gate" not in c:  # lexical-only
        if match.score >= w.lexical.threshold or c.get("trigger"):
            return "passes the threshold"  # the message routes (asked about a message that does)
        return f"lexical stage: {match.score:.2f} points, below the threshold {w.lexical.threshold:g}"
    p, limit = c["gate"], threshold if threshold is not None else 0.5
    if p >= limit:
        return "passes the gate" if best else f"passes the gate ({p:.2f}), after the best {w.limit}"
    return (
        f"gate: needs it with probability {p:.2f}, below {limit:.2f} "
        f"(evidence {c['evidence']:.3f}, generic-chat likeness {c['no_skill']:.3f})"
    )
