"""Skill authors' ``triggers`` patterns, run on every message with a time limit.

A pattern is the author's own regular expression, and some backtrack for ever on some input
("^(a|aa)+$" on a line of a's): with the standard library, one such skill would hang every
route, every hook call and the registry's catalog search. The ``regex`` engine checks a time
limit while it matches; a pattern that runs out of time is dropped for the rest of the process,
with a warning naming the skill. A match must have some text (``"x*"`` matches everywhere) and
must not sit inside a longer word ("pe" in "type"); between characters of scripts without
spaces (Chinese "市值") it may. Pure code.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

TIMEOUT = 0.02  # seconds per pattern per message: ordinary patterns take microseconds
MAX_TEXT = 4_000  # characters of the message a pattern sees (a pasted log is not a trigger)
MAX_MATCHES = 20  # matches inside words looked past before the pattern counts as no hit


@dataclass
class TriggerPattern:
    source: str
    skill: str
    compiled: Any = field(repr=False)  # a regex.Pattern
    dropped: bool = False

    def hit(self, message: str) -> bool:
        """Does the pattern match a whole stretch of ``message`` in time? A pattern that ran
        out of time is dropped: it never matches again in this process."""
        if self.dropped:
            return False
        text = message[:MAX_TEXT]
        try:
            for n, found in enumerate(self.compiled.finditer(text, timeout=TIMEOUT)):
                if found.end() > found.start() and not _inside_a_word(text, found.start(), found.end()):
                    return True
                if n + 1 >= MAX_MATCHES:
                    break
        except TimeoutError:
            self.dropped = True
            log.warning(
                "skill %r: its trigger pattern %r took longer than %g ms on a message and is ignored from "
                "now on; tell the skill's author (a pattern that can backtrack for ever)",
                self.skill,
                self.source,
                TIMEOUT * 1000,
            )
        return False


def compile_patterns(skill: str, patterns: Sequence[str]) -> list[TriggerPattern]:
    """The patterns that compile, case-insensitive (the validator reports the others)."""
    import regex  # only installs with trigger patterns pay for the import

    compiled = []
    for source in patterns:
        try:
            compiled.append(TriggerPattern(source, skill, regex.compile(source, regex.IGNORECASE | regex.VERSION0)))
        except (regex.error, RecursionError, OverflowError, ValueError, TypeError):
            continue
    return compiled


def _inside_a_word(text: str, start: int, end: int) -> bool:
    """Does the match start or end between two ASCII letters or digits ("pe" in "type")?"""

    def joined(i: int) -> bool:
        return 0 < i < len(text) and _word_char(text[i - 1]) and _word_char(text[i])

    return joined(start) or joined(end)


def _word_char(c: str) -> bool:
    return c.isascii() and c.isalnum()
