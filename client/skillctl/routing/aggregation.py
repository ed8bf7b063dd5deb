"""Fragmented input: "and for staging too" means nothing alone; route it with what came before.

A message is a continuation when it is short and opens like one ("and ...", "also ...",
"what about ...", "same for ...", "too"). Then the previous user message(s) the caller passes
as ``history`` are routed together with it. Pure code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_CONTINUATION_WORDS = 8  # longer messages say enough to be routed on their own
MAX_JOINED = 2  # how many earlier messages a chain of continuations may reach back
# A message longer than this (a pasted document or log) is routed on its opening and its end,
# where the ask is; the middle adds time (typo reading, BM25), not meaning.
MAX_ROUTED_CHARS = 8_000
ROUTED_TAIL_CHARS = 2_000
_OPENERS = re.compile(
    r"^\s*(?:and|also|plus|or|but|then|same|again|what about|how about|now|ok(?:ay)?,? (?:and|now)"
    r"|as well|too|likewise|for (?:the )?\w+ too)\b",
    re.IGNORECASE,
)
_CLOSERS = re.compile(r"\b(?:too|as well|also|again)\W*$", re.IGNORECASE)


def is_continuation(message: str) -> bool:
    """True for a short follow-up that leans on the previous message."""
    words = message.split()
    if not words or len(words) > MAX_CONTINUATION_WORDS:
        return False
    return bool(_OPENERS.search(message) or _CLOSERS.search(message))


def routing_text(message: str, history: Sequence[str] = ()) -> str:
    """The text to route: the message, preceded by earlier messages it continues; of a very
    long one, its opening and its end (``MAX_ROUTED_CHARS`` in all)."""
    if len(message) > MAX_ROUTED_CHARS:
        head = MAX_ROUTED_CHARS - ROUTED_TAIL_CHARS
        return message[:head] + "\n\n" + message[-ROUTED_TAIL_CHARS:]
    if not history or not is_continuation(message):
        return message
    parts = [message]
    for previous in reversed(history[-MAX_JOINED:]):
        parts.insert(0, previous)
        if not is_continuation(previous):
            break
    return "\n".join(parts)
