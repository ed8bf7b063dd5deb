"""Stage 4, select: at most ``limit`` skills for a message, its several requests each heard. Pure code.

A message with several requests (:func:`skillctl.routing.normalise.split_intents`) also has each
request routed alone: the best skill of each joins the answer after the whole message's best.
When the whole message routes nothing, two requests routed to two different skills still make
an answer; one alone does not (a long chatty message is not a request).
"""

from __future__ import annotations

from collections.abc import Sequence

from skillctl.routing.match import Match, Stage


def select(whole: list[Match], parts: Sequence[list[Match]], limit: int) -> list[Match]:
    """The answer: the whole message's best, each request's best, then the whole's others."""
    firsts: dict[str, Match] = {}
    for found in parts:
        if found and found[0].name not in firsts:
            firsts[found[0].name] = found[0]
    if not parts:
        return whole[:limit]
    if not whole and len(firsts) < 2:
        return []
    merged = {m.name: m for m in whole[:1]}
    for name, match in firsts.items():
        if name not in merged:
            match.reasons.append("one of several requests in the message")
            match.stage = Stage.SELECT
            merged[name] = match
    for match in whole[1:]:
        merged.setdefault(match.name, match)
    return list(merged.values())[:limit]
