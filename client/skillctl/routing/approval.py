"""``skillctl route --ask``: ask before a skill enters the context.

For each routed skill: ``Load 'x' skill (~N tokens)? [Y/n/a/?]``. Enter or ``y`` loads it,
``n`` skips it, ``a`` loads it and remembers the approval for this session (see
``routing.state.session_id``) so it is not asked again, ``?`` shows why it matched and asks
again. Reading and writing go through callables so this runs under a terminal or a test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from skillctl.routing.scoring import Match

ANSWERS = {"": "yes", "y": "yes", "yes": "yes", "n": "no", "no": "no", "a": "always", "always": "always"}


@dataclass
class Approval:
    loaded: list[str] = field(default_factory=list)
    declined: list[str] = field(default_factory=list)
    remembered: list[str] = field(default_factory=list)  # answered "a" now


def ask(
    matches: Sequence[Match],
    tokens: Callable[[str], int],
    *,
    read: Callable[[], str | None],
    write: Callable[[str], None],
    approved: frozenset[str] = frozenset(),
) -> Approval:
    result = Approval()
    for match in matches:
        if match.name in approved:
            write(f"Loading '{match.name}' (approved for this session)\n")
            result.loaded.append(match.name)
            continue
        answer = _answer(match, tokens(match.name), read, write)
        if answer == "no":
            result.declined.append(match.name)
            continue
        result.loaded.append(match.name)
        if answer == "always":
            result.remembered.append(match.name)
    return result


def _answer(match: Match, tokens: int, read, write) -> str:
    while True:
        write(f"Load '{match.name}' skill (~{tokens} tokens)? [Y/n/a/?] ")
        line = read()
        if line is None:  # end of input: the safe answer
            write("\n")
            return "no"
        reply = line.strip().lower()
        if reply == "?":
            write(f"'{match.name}' matched (score {match.score:.3f}):\n")
            write("".join(f"  - {r}\n" for r in match.reasons))
            write("  y = load it, n = skip it, a = load it and don't ask again this session\n")
            continue
        if reply in ANSWERS:
            return ANSWERS[reply]
        write("Please answer y, n, a or ?.\n")
