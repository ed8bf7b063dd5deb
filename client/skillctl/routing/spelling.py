"""Typos read as the installed skills' words: "generaative art" routes as "generative art".

A word of the message that is neither a known word (English, programming and agent-skill words)
nor a word of an installed skill's manifest is read as the skill word one edit away: one letter
dropped, added or replaced, or two neighbours swapped (most typos are one such edit). Among
several, a likely typo wins (a letter dropped, added, swapped, or replaced by its neighbour on the
keyboard: "goid" is good, not guid), then the word most skills use. A typo of a word no skill uses
is read as the one known word a likely typo away, when there is only one ("deskotp": desktop);
that changes what the embedder reads, not which skill words the message has. A British or
American spelling is read as the one the skills use ("summarise" when they say "summarize").

Left as typed: words under four letters (one edit from too many words: "tst" is test, not the
tts skill), the first letter and the
end of a word (rarely the typo; a different ending is another form: serializer, serialized),
capitalised words inside a sentence unless a likely typo of a skill's word (names: Nikola, but
"Pwoer BI"), and the parts of paths, file names, addresses and code
(``run.sh``, ``api/v2``, ``getUser``, ``reconcile(batch)``).

The known words are ``data/known-words.txt`` (133k; ``scripts/known-words.py`` builds it, see the
NOTICE), looked up by binary search in the file's bytes: a process routing one message pays only
for the words it looks up. A spell-checking library loads its whole dictionary first (~170 ms for
pyspellchecker's), on a path that runs on every prompt. Pure code.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from skillctl.routing.manifests import RoutingManifest
from skillctl.routing.text import STOPWORDS, stem

KNOWN_WORDS = Path(__file__).parent / "data" / "known-words.txt"
MIN_LETTERS = 4
# A longer run of letters is not a word with a typo (each of its one-edit candidates costs its
# length again: a pasted run of 30,000 letters took 12 s).
MAX_LETTERS = 30
# Unknown words read per message: a typo sits among known words, while a pasted text of names or
# another language has thousands (each costs ~4 ms of one-edit candidates): the rest stay as typed.
MAX_UNKNOWN_WORDS = 32
# A shorter word is one edit from too many words: only a likely typo of a skill word is read.
MIN_FALLBACK_LETTERS = 5
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_ROWS = ((0.0, "qwertyuiop"), (0.25, "asdfghjkl"), (0.75, "zxcvbnm"))  # QWERTY, each row's offset in keys
_KEYS = {c: (y, offset + x) for y, (offset, row) in enumerate(_ROWS) for x, c in enumerate(row)}
# A run of letters that is a word of prose: not inside a path, file name, address, identifier or call.
_WORD = re.compile(r"(?<![\w./\\@#$%&`=~])(?<!\w\()[A-Za-z]{" + str(MIN_LETTERS) + r",}(?![\w/\\@`(]|\.\w|:/)")
# Where a sentence starts: at the start, or after an end mark, a blank line or a quote.
SENTENCE_LOOKBACK = 100  # a word after this much blank space starts afresh anyway
_SENTENCE_START = re.compile(r"(?:\A|[.!?:;\n\"'(]|\s[-*])\s*\Z")
# British endings, read as American ones to look a word up (the list is American English).
_AMERICAN = {
    "ise": "ize",
    "ised": "ized",
    "ises": "izes",
    "ising": "izing",
    "isation": "ization",
    "yse": "yze",
    "our": "or",
    "ours": "ors",
    "tre": "ter",
    "tres": "ters",
    "ogue": "og",
    "ogues": "ogs",
}
_BRITISH = re.compile(r"(?:isation|ising|ised|ises|ise|yse|ours|our|tres|tre|ogues|ogue)\Z")
# ... and American endings read as British ones, when a skill is written in British English
# (only the unambiguous ones: color is not colour's only reading back).
_BRITISH_OF = {"ize": "ise", "ized": "ised", "izes": "ises", "izing": "ising", "ization": "isation", "yze": "yse"}
_AMERICAN_ENDING = re.compile(r"(?:ization|izing|ized|izes|ize|yze)\Z")
_SKILL_WORD = re.compile(r"[a-z]{" + str(MIN_LETTERS) + ",}")


class KnownWords:
    """A sorted file of lower-case words, one per line, asked ``word in words`` by binary search."""

    def __init__(self, path: Path = KNOWN_WORDS) -> None:
        try:
            self._data = path.read_bytes()
        except OSError:  # a broken install: every word is unknown, typos are still read
            self._data = b""
        self._all: frozenset[str] | None = None

    def __len__(self) -> int:
        return self._data.count(b"\n")

    def all(self) -> frozenset[str]:
        """Every word, as a set (~30 ms, once): for checking hundreds of candidates at a time."""
        if self._all is None:
            self._all = frozenset(self._data.decode("ascii", "replace").split())
        return self._all

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str) or not word.isascii():
            return False
        key, data = word.encode(), self._data
        lo, hi = 0, len(data)  # lo and hi are always at the start of a line
        while lo < hi:
            start = data.rfind(b"\n", lo, (lo + hi) // 2) + 1 or lo
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end
            line = data[start:end]
            if line == key:
                return True
            if line < key:
                lo = end + 1
            else:
                hi = start
        return False


_known: KnownWords | None = None


def known_words() -> KnownWords:
    global _known
    if _known is None:
        _known = KnownWords()
    return _known


def maybe_typos(text: str) -> bool:
    """Has ``text`` a word :meth:`Speller.correct` could read otherwise (one it does not know as
    English or programming, or one spelled differently in British and American English)? Most
    messages have none: then no speller need be built."""
    known = known_words()
    return any(
        (w := m.group().lower()) not in known or _BRITISH.search(w) or _AMERICAN_ENDING.search(w)
        for m in _WORD.finditer(text)
    )


class Speller:
    """Reads a message's typos as words of the installed skills (see the module docstring).

    ``vocabulary``: how many skills use each word (lower case, four letters or more); ``stems``:
    how many use each stem (keywords and phrases are stored stemmed: "deploy" for "deploying")."""

    def __init__(self, vocabulary: Mapping[str, int], stems: Mapping[str, int] | None = None) -> None:
        self.vocabulary = dict(vocabulary)
        self.stems: Counter[str] = Counter(stems or {})
        if stems is None:
            for word, count in self.vocabulary.items():
                self.stems[stem(word)] += count

    @classmethod
    def of(cls, manifests: Iterable[RoutingManifest]) -> Speller:
        """The words of every manifest's name, description, synthetic queries and ``triggers``
        words, and the stems of its keywords and phrases, counted once per skill."""
        used: Counter[str] = Counter()
        stems: Counter[str] = Counter()
        stemmed: dict[str, str] = {}  # stem() is the cost here: once per distinct word
        for m in manifests:
            text = " ".join(
                [m.name.replace("-", " ").replace("_", " "), m.description, m.category, m.negative]
                + [*m.queries, *m.trigger_words]
            )
            own = set(_SKILL_WORD.findall(text.lower()))
            used.update(own)
            roots = {stemmed[w] if w in stemmed else stemmed.setdefault(w, stem(w)) for w in own}
            stems.update(roots | set(_SKILL_WORD.findall(" ".join([*m.keywords, *m.phrases]))))
        return cls(used, stems)

    def correct(self, text: str) -> tuple[str, list[tuple[str, str]]]:
        """``text`` with its typos replaced, and the (typo, word) pairs replaced."""
        fixes: list[tuple[str, str]] = []
        read: dict[tuple[str, bool], str | None] = {}
        unknown = 0  # unknown words read so far

        def fix(match: re.Match[str]) -> str:
            nonlocal unknown
            word = match.group()
            if len(word) > MAX_LETTERS or not word[1:].islower():  # CamelCase or an ACRONYM: a name, not a typo
                return word
            # Capitalised inside a sentence: a name (Nikola, Salah), read only as a likely typo of a
            # skill's word ("Pwoer BI").
            start = match.start()  # what precedes, read from at most SENTENCE_LOOKBACK characters back
            name = word[0].isupper() and not _SENTENCE_START.search(text[max(0, start - SENTENCE_LOOKBACK) : start])
            key = (word.lower(), name)
            if key not in read:
                if not self.known(key[0]):
                    if unknown >= MAX_UNKNOWN_WORDS:
                        return word
                    unknown += 1
                read[key] = self.nearest(key[0], name=name)
            if (found := read[key]) is None:
                return word
            fixes.append((word, found))
            return found.capitalize() if word[0].isupper() else found

        return _WORD.sub(fix, text), fixes

    def nearest(self, word: str, *, name: bool = False) -> str | None:
        """The skill word ``word`` is a typo of, or None (it is known, or no skill word is one
        edit away). ``name``: it may be a name, so only a likely typo of a skill's word counts."""
        if (spelled := self._as_the_skills_spell_it(word)) is not None:
            return spelled  # summarise, when the skills say summarize (or the other way round)
        if self.known(word):
            return None
        found: dict[str, tuple[bool, int]] = {}  # candidate -> (a likely typo of it, how many skills use it)
        for candidate, likely in _edits(word):
            if len(candidate) < MIN_LETTERS or (candidate in found and found[candidate][0] >= likely):
                continue
            if candidate in STOPWORDS or not (likely or (len(word) >= MIN_FALLBACK_LETTERS and not name)):
                continue
            if candidate in self.vocabulary:
                found[candidate] = (likely, self.stems[stem(candidate)])
            elif (root := stem(candidate)) != candidate and root in self.stems and candidate in known_words():
                found[candidate] = (likely, self.stems[root])  # "sliders" when the skills say "slider"
        if found:  # likely typos first, then the word most skills use, then English, then alphabetical (stable)
            return min(found, key=lambda c: (not found[c][0], -found[c][1], c not in known_words(), c))
        # No skill uses it: a known word when only one is a likely typo away ("deskotp"), for
        # what the message means; several ("moorning": morning, mooring) are left to the reader.
        if len(word) < MIN_FALLBACK_LETTERS or name:
            return None
        words = known_words().all()
        near = {c for c, likely in _edits(word) if likely and len(c) >= MIN_LETTERS and c in words}
        return near.pop() if len(near) == 1 else None

    def _as_the_skills_spell_it(self, word: str) -> str | None:
        """The British or American spelling of ``word`` that the skills use, when they use only that one."""
        if word in self.vocabulary:
            return None
        for pattern, endings in ((_BRITISH, _AMERICAN), (_AMERICAN_ENDING, _BRITISH_OF)):
            if (other := _other_spelling(word, pattern, endings)) in self.vocabulary:
                return other
        return None

    def known(self, word: str) -> bool:
        if word in self.vocabulary or stem(word) in self.stems or word in known_words():
            return True
        us = _other_spelling(word, _BRITISH, _AMERICAN)  # apologise, colour, centre
        return us is not None and (us in self.vocabulary or us in known_words())


def _other_spelling(word: str, ending: re.Pattern[str], other: Mapping[str, str]) -> str | None:
    """``word`` with its British (or American) ending swapped for the other, or None. Three letters
    at least come before the ending: "four" is not "for", nor "size" "sise"."""
    found = ending.search(word)
    return word[: found.start()] + other[found.group()] if found is not None and found.start() >= 3 else None


def _edits(word: str) -> Iterable[tuple[str, bool]]:
    """Every string one Damerau edit away from ``word`` inside it (deletes, swaps, replaces,
    inserts), each with whether the edit is a likely typo: all but a letter replaced by a distant
    key's. The first letter is kept (it is rarely the typo), and the last is neither replaced nor
    dropped, nor one added after it: that makes another form of a word (serializer, serialized,
    docstrings), not a typo of it."""
    for i in range(1, len(word)):
        left, right = word[:i], word[i:]
        if len(right) > 1:
            yield left + right[1:], True
            yield left + right[1] + right[0] + right[2:], True
        for c in _LETTERS:
            if c != right[0] and len(right) > 1:
                yield left + c + right[1:], _adjacent(c, right[0])
            yield left + c + right, True


def _adjacent(a: str, b: str) -> bool:
    """Are ``a`` and ``b`` neighbours on a QWERTY keyboard (same row, or the rows above and below)?"""
    (ya, xa), (yb, xb) = _KEYS.get(a, (9, 0.0)), _KEYS.get(b, (-9, 0.0))
    return (ya == yb and abs(xa - xb) == 1) or (abs(ya - yb) == 1 and abs(xa - xb) <= 0.75)
