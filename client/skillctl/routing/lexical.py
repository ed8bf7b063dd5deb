"""Stage 2a, lexical candidates: a message's words against every skill's manifest. Pure code.

Points: a keyword is worth 1, a phrase 2, an author's ``triggers`` word 2 and a ``triggers``
pattern 3; a keyword most installed skills share counts for less (:func:`keyword_weight`).
BM25 over each skill's own text (name, description, keywords, phrases, synthetic queries; IDF
over the installed skills) adds up to ``bm25_points`` where two or more words match. A match of
the negative constraint costs points; recent use adds a little to a skill that already matched.
A skill's trigger (a ``triggers`` keyword, or pattern; a verb only beside one of its keywords)
marks it ``triggered``: the gate never drops it (:mod:`skillctl.routing.gate`).
:func:`rank_lexical` is lexical-only routing: points, the threshold, at most ``limit`` skills.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from skillctl.routing.compiled import CompiledManifest, bm25_document, compile_manifest
from skillctl.routing.explain import explain_lexical
from skillctl.routing.manifests import RoutingManifest
from skillctl.routing.match import Match, Stage
from skillctl.routing.patterns import TriggerPattern, compile_patterns
from skillctl.routing.text import STOPWORDS, stem, terms, words
from skillctl.routing.weights import DEFAULT_WEIGHTS, LexicalWeights, Weights

# What a skill is, after the product it is for ("zenserp-automation", "opensea-mcp"): the product
# alone names it. Not "tools" or "helper": "pdf-tools" is named for a topic, and "a pdf" no request.
PRODUCT_SUFFIXES = frozenset({"automation", "integration", "api", "cli", "mcp", "sdk", "admin"})
DISTINCTIVE_SHARE = 0.05  # a name word in the texts of at most 5% of the installed skills (or one) is distinctive
MAX_MENTIONS_CHECKED = 20  # a message repeating a name thousands of times costs no more than this
NEGATIVE_MIN_TERMS = 2  # one shared word is not "the message is about what the skill is not for"
BM25_MIN_TERMS = 2  # lexical-only: BM25 points need two distinct shared words


@dataclass
class _Hits:
    points: float = 0.0
    keywords: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    triggers: list[str] = field(default_factory=list)
    verbs: list[str] = field(default_factory=list)  # trigger verbs: they count beside a trigger keyword only
    named: bool = False
    invoked: bool = False  # named the way one calls a skill: "pdf-editor", "use pdf", "the pdf skill"
    negative: list[str] = field(default_factory=list)

    @property
    def triggered(self) -> bool:
        """Did one of the skill's own ``triggers`` (a keyword or a pattern) match?"""
        return bool(self.triggers)


def keyword_weight(df: int, n_skills: int) -> float:
    """1 point for a keyword few skills share; less as more of the installed skills share it."""
    common = max(2.0, 0.05 * n_skills)
    if df <= common:
        return 1.0
    return math.log1p(n_skills / df) / math.log1p(n_skills / common)


class ScoringIndex:
    """Routing manifests compiled for fast lookups: postings from word to skills."""

    def __init__(
        self,
        manifests: Sequence[RoutingManifest],
        compiled: Sequence[CompiledManifest | None] | None = None,  # None: compiled here
    ) -> None:
        self.names = [m.name for m in manifests]
        self.manifests = list(manifests)
        self.keywords: dict[str, list[tuple[int, float]]] = {}
        self.phrases: dict[str, list[tuple[int, tuple[str, ...], str]]] = defaultdict(list)
        self.mentions: dict[str, list[tuple[int, tuple[str, ...]]]] = defaultdict(list)
        self.negatives: list[frozenset[str]] = []
        self.verbs: list[frozenset[tuple[str, ...]]] = []  # each skill's trigger verbs
        self.patterns: list[tuple[int, TriggerPattern]] = []
        self.bm25: BM25 | None = None
        self._with_queries: set[str] | None = None
        given = compiled or [None] * len(self.manifests)
        ready = [c or compile_manifest(m) for m, c in zip(self.manifests, given, strict=True)]
        self._compile(ready)
        self.documents = [c.bm25 or bm25_document(m) for m, c in zip(self.manifests, ready, strict=True)]
        self._product_mentions(ready)

    def bm25_scores(self, msg_terms: Sequence[str], w: LexicalWeights, *, min_terms: int = 1) -> dict[int, float]:
        """Normalised BM25 of the message against every skill sharing ``min_terms`` words with it."""
        if self.bm25 is None or (self.bm25.k1, self.bm25.b) != (w.bm25_k1, w.bm25_b):
            self.bm25 = BM25(self.documents, k1=w.bm25_k1, b=w.bm25_b)
        return self.bm25.scores(msg_terms, min_terms=min_terms)

    def __len__(self) -> int:
        return len(self.names)

    def has_queries(self, name: str) -> bool:
        """Does this skill's manifest carry synthetic queries (registry manifests do)?"""
        if self._with_queries is None:
            self._with_queries = {m.name for m in self.manifests if m.queries}
        return name in self._with_queries

    def _product_mentions(self, compiled: Sequence[CompiledManifest]) -> None:
        """A skill called after a product and what it is ("zenserp-automation", "opensea-mcp",
        "lemonsqueezy-admin") is named by the product alone ("use zenserp to grab the top 10"),
        when no other installed skill's words have it (not "reply" for reply-automation)."""
        df = Counter(t for doc in self.documents for t in doc)
        for i, c in enumerate(compiled):
            product = c.name
            while len(product) > 1 and product[-1] in PRODUCT_SUFFIXES:
                product = product[:-1]
            if product == c.name or all(word in STOPWORDS for word in product):
                continue
            if len(product) > 1:  # "re-amaze-automation": "re amaze", "re:amaze" and "reamaze"
                self.mentions[product[0]].append((i, product))
                product = ("".join(product),)
            if product[0] in STOPWORDS or len(product[0]) < 3 or df.get(stem(product[0]), 0) > 1:
                continue
            self.mentions[product[0]].append((i, product))

    def _compile(self, compiled: Sequence[CompiledManifest]) -> None:
        raw: dict[str, list[int]] = defaultdict(list)
        phrases = self.phrases
        for i, (m, c) in enumerate(zip(self.manifests, compiled, strict=True)):
            for term in c.keywords:
                raw[term].append(i)
            for phrase in c.phrases:
                phrases[phrase[0]].append((i, phrase, "phrases"))
            for phrase in c.triggers:
                phrases[phrase[0]].append((i, phrase, "triggers"))
            if c.name:
                self.mentions[c.name[0]].append((i, c.name))
            self.negatives.append(frozenset(c.negative))
            self.verbs.append(frozenset(c.trigger_verbs))
            if m.trigger_patterns:
                self.patterns.extend((i, p) for p in compile_patterns(m.name, m.trigger_patterns))
        n = len(self.manifests)
        weights: dict[int, float] = {}
        for term, skills in raw.items():
            df = len(skills)
            weight = weights[df] if df in weights else weights.setdefault(df, keyword_weight(df, n))
            self.keywords[term] = [(i, weight) for i in skills]


class BM25:
    """Okapi BM25 with precomputed postings; IDF over the installed skills.

    Scores are divided by the best score the message could get (every word of it, a word no
    skill knows counting with the highest IDF), so 1.0 means "this skill's text covers the whole
    message" and a message of unknown words scores ~0 everywhere. Pure Python, sub-millisecond.
    """

    def __init__(self, documents: Sequence[Mapping[str, int]], *, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        n = len(documents)
        lengths = [sum(d.values()) for d in documents]
        average = (sum(lengths) / n) if n else 1.0
        df: Counter = Counter(t for d in documents for t in d)
        self.df = df
        self.idf = {t: math.log1p((n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.unknown_idf = math.log1p((n + 0.5) / 0.5)
        self.postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for i, (doc, length) in enumerate(zip(documents, lengths, strict=True)):
            norm = k1 * (1 - b + b * length / max(average, 1e-9))
            for t, f in doc.items():
                self.postings[t].append((i, self.idf[t] * f * (k1 + 1) / (f + norm)))

    def scores(self, msg_terms: Sequence[str], *, min_terms: int = 1) -> dict[int, float]:
        """Skill -> normalised score, for skills sharing at least ``min_terms`` distinct words."""
        unique = list(dict.fromkeys(msg_terms))
        best = sum(self.idf.get(t, self.unknown_idf) for t in unique) * (self.k1 + 1)
        if best <= 0:
            return {}
        out: dict[int, float] = defaultdict(float)
        shared: Counter = Counter()
        for t in unique:
            for i, value in self.postings.get(t, ()):
                out[i] += value
                shared[i] += 1
        return {i: v / best for i, v in out.items() if shared[i] >= min_terms}


def lexical_hits(index: ScoringIndex, message: str, w: LexicalWeights = DEFAULT_WEIGHTS.lexical) -> dict[int, _Hits]:
    """Every skill the message touches lexically, with what matched."""
    hits: dict[int, _Hits] = defaultdict(_Hits)
    msg_terms = terms(message)
    for term in dict.fromkeys(msg_terms):
        for i, weight in index.keywords.get(term, ()):
            hits[i].points += w.keyword * weight
            hits[i].keywords.append(term)
    _phrase_hits(index, msg_terms, hits, w)
    _mention_hits(index, message, words(message), hits, w)
    for i, pattern in index.patterns:
        if pattern.hit(message):
            hits[i].points += w.trigger_pattern
            hits[i].triggers.append(f"/{pattern.source}/")
    _verbs_beside_keywords(hits, w)
    _negative_hits(index, set(msg_terms), hits, w)
    return hits


def _phrase_hits(index: ScoringIndex, msg_terms: list[str], hits: dict[int, _Hits], w: LexicalWeights) -> None:
    seen: set[tuple[int, tuple[str, ...]]] = set()
    for pos, term in enumerate(msg_terms):
        for i, phrase, kind in index.phrases.get(term, ()):
            if (i, phrase) in seen or tuple(msg_terms[pos : pos + len(phrase)]) != phrase:
                continue
            seen.add((i, phrase))
            if kind == "phrases":
                hits[i].points += w.phrase
                hits[i].phrases.append(" ".join(phrase))
            elif phrase in index.verbs[i]:
                hits[i].verbs.append(" ".join(phrase))
            else:
                hits[i].points += w.trigger_word
                hits[i].triggers.append(" ".join(phrase))


def _verbs_beside_keywords(hits: dict[int, _Hits], w: LexicalWeights) -> None:
    """A trigger verb ("say", "run") counts with the skill's own trigger keyword or pattern
    (seed 004's verbs name the action on the keyword's object); alone it is too common a word."""
    for hit in hits.values():
        if hit.verbs and hit.triggers:
            hit.points += w.trigger_word * len(hit.verbs)
            hit.triggers.extend(hit.verbs)
        hit.verbs = []


def _mention_hits(
    index: ScoringIndex, message: str, msg_words: list[str], hits: dict[int, _Hits], w: LexicalWeights
) -> None:
    for pos, word in enumerate(msg_words):
        for i, name_words in index.mentions.get(word, ()):
            if hits.get(i) and hits[i].named:
                continue
            if tuple(msg_words[pos : pos + len(name_words)]) != name_words:
                continue
            if len(name_words) == 1 and word in STOPWORDS:
                continue  # a skill called "help" is not mentioned by "can you help"
            hits[i].named = True
            hits[i].invoked = _invoked(index.names[i], message)
            hits[i].points += w.name


_INVOKING = r"(?:(?:use|using|run|invoke|call|load|activate|apply|try)\s+(?:the\s+)?|[/$@])"


def _invoked(name: str, message: str) -> bool:
    """Is the skill named the way one calls a skill, not in passing? Its hyphenated name as
    written ("pdf-editor"), a verb of use or a command sigil before it ("use pdf", "/pdf"), or
    "skill" after it. "a gif for slack" names the slack skill only in passing."""
    text = message.lower()
    mentions = re.finditer(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])", text)
    for found in itertools.islice(mentions, MAX_MENTIONS_CHECKED):
        if "-" in name or re.search(rf"{_INVOKING}$", text[max(0, found.start() - 20) : found.start()]):
            return True
        if re.match(r"\s+skill\b", text[found.end() : found.end() + 10]):
            return True
    return False


def _negative_hits(index: ScoringIndex, msg_set: set[str], hits: dict[int, _Hits], w: LexicalWeights) -> None:
    for i, hit in hits.items():
        negative = index.negatives[i]
        if negative and not hit.named:
            matched = sorted(negative & msg_set)
            if len(matched) >= min(NEGATIVE_MIN_TERMS, len(negative)):
                hit.negative = matched
                hit.points -= w.negative


def rank_lexical(
    index: ScoringIndex,
    message: str,
    *,
    recent: frozenset[str] = frozenset(),
    w: Weights = DEFAULT_WEIGHTS,
    gated: bool = True,
) -> list[Match]:
    """Lexical-only routing: points (+ BM25 points), threshold, at most ``w.limit`` skills; a
    skill whose own trigger matched passes whatever its points.

    ``gated=False`` keeps skills below the threshold (the nearest misses, for explanations)."""
    lex = w.lexical
    hits = lexical_hits(index, message, lex)
    # Like the negative constraint, one shared word is not enough: DESIGN's "one keyword is
    # below the threshold" holds, BM25 only adds points where two or more words match.
    bm25 = index.bm25_scores(terms(message), lex, min_terms=BM25_MIN_TERMS) if lex.bm25_points else {}
    matches = []
    for i, hit in hits.items():
        bm = lex.bm25_points * bm25.get(i, 0.0)
        boost = lex.recent if index.names[i] in recent and hit.points > 0 else 0.0
        score = hit.points + bm + boost
        passes = score >= lex.threshold or hit.triggered
        if not passes and (gated or score <= 0):
            continue
        reasons = explain_lexical(hit) + ([f"recently used (+{boost:g})"] if boost else [])
        if bm:
            reasons.append(f"bm25 {bm25[i]:.2f} (+{bm:.2f} points)")
        reasons.append(f"lexical {score - boost:.2f} points (threshold {lex.threshold:g})")
        components = {"lexical": hit.points, "bm25": bm, "recent": boost, "trigger": float(hit.triggered)}
        stage = Stage.NAME if hit.named else Stage.TRIGGER if score < lex.threshold else Stage.LEXICAL
        matches.append(Match(index.names[i], score, reasons, components, stage=stage if passes else None))
    return _best(matches, w.limit)


def _best(matches: list[Match], limit: int) -> list[Match]:
    return sorted(matches, key=lambda m: (-m.score, m.name))[:limit]
