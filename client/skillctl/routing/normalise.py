"""Stage 1, normalise: the text routing reads of a message. Pure code.

A short continuation is joined with the messages it leans on and a very long one cut to its
opening and end (:mod:`skillctl.routing.aggregation`); typos are read as the installed skills'
words (:mod:`skillctl.routing.spelling`); pasted code and logs are left out of what semantic
routing reads (:func:`skillctl.routing.text.prose`). A message with several requests ("book the
flight, then check the weather there") is split where one request ends and another begins:
sentence ends and connectors ("then", "also", "as well as"; not a bare "and", which joins nouns as
often as requests). That is structure, not phrasing: the gate, not a list of phrases, decides
what a message needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from skillctl.routing.aggregation import routing_text
from skillctl.routing.text import prose

MIN_PART_WORDS = 3  # "thanks." or "please" is not a request of its own
MAX_PARTS = 4  # each part is one more text to encode (one batch per message) and to score
MAX_SENTENCES = 6  # ... and so does each sentence of a long message (one batch)
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
_SENTENCE_ENDS = re.compile(r"(?<=[.!?;:])\s+|\n+")
# A match starts at a comma or where a run of spaces starts: linear on a message of many spaces
# (",?\s+" tried every space of a run again: 20,000 spaces took 30 s).
_CONNECTORS = re.compile(
    r"(?:,|(?<![\s,]))\s+(?:and then|and also|then|also|as well as|after that|afterwards|plus|but first)\s+",
    re.IGNORECASE,
)
# The same shape for a bare "and" (linear as above).
_AND = re.compile(r"(?:,|(?<![\s,]))\s+and\s+", re.IGNORECASE)

Typos = list[tuple[str, str]]


@dataclass
class Normalised:
    """What the later stages read of one message."""

    text: str  # joined with what it continues, typos read as the skills' words
    typos: Typos = field(default_factory=list)  # (as typed, as read)
    parts: list[str] = field(default_factory=list)  # its requests, when it has several


def normalise(message: str, history: Sequence[str], read: Callable[[str], tuple[str, Typos]]) -> Normalised | None:
    """``message`` as routing reads it, or None when there is nothing to route; ``read`` reads
    typos (:meth:`skillctl.routing.spelling.Speller.correct`, or the text as it is)."""
    text = routing_text(message, history)
    if not text.strip():
        return None
    text, typos = read(text)
    return Normalised(text, typos, split_intents(prose(text)))


def split_intents(text: str) -> list[str]:
    """The requests in ``text`` (at most ``MAX_PARTS``); one element or none: nothing to split.
    Where no sentence end or connector splits it, a bare "and" between two runs of words does:
    half of the two-request messages of the training data say both in one sentence joined so.
    A bare "and" joins nouns as often ("the pdf and docx files"); such halves are still read
    by the gate, and a request's skill joins the answer only as a follower of the whole
    message's (:mod:`skillctl.routing.select`)."""
    return split_at_connectors(text) or split_at_and(text)


def split_at_connectors(text: str) -> list[str]:
    """The requests of ``text`` split at sentence ends and connectors only (as :func:`split_intents`)."""
    return _at_most(_long_enough([c for s in _SENTENCES.split(text) for c in _CONNECTORS.split(s)]))


def split_at_and(text: str) -> list[str]:
    """The requests of ``text`` split at a bare "and" (as :func:`split_intents`)."""
    return _at_most(_long_enough(_AND.split(text)))


def _long_enough(parts: list[str]) -> list[str]:
    return [p.strip() for p in parts if len(p.split()) >= MIN_PART_WORDS]


def _at_most(parts: list[str]) -> list[str]:
    return parts[:MAX_PARTS] if len(parts) >= 2 else []


def views(text: str, *, sentences_too: bool) -> list[str]:
    """What semantic routing encodes of ``text``: its prose (pasted code and logs left out),
    then, with ``sentences_too`` (some skill lacks synthetic queries), its sentences."""
    own = prose(text)
    return [own, *sentences(own)] if sentences_too else [own]


def sentences(text: str) -> list[str]:
    """The sentences of a message that has several (each of ``MIN_PART_WORDS`` words or more);
    none for a message of one. A long message tells its story around one sentence that asks, and
    that sentence alone is closer to the right skill than the whole is. Past ``MAX_SENTENCES``,
    the first and the last ones: the ask opens a message or closes it."""
    found = [s.strip() for s in _SENTENCE_ENDS.split(text) if len(s.split()) >= MIN_PART_WORDS]
    if len(found) > MAX_SENTENCES:
        found = found[: MAX_SENTENCES // 2] + found[-(MAX_SENTENCES - MAX_SENTENCES // 2) :]
    return found if len(found) >= 2 else []
