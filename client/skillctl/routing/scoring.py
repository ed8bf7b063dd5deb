"""Score a message against every skill's routing manifest (DESIGN section 7). Pure code.

Lexical points: a keyword is worth 1 point, a phrase 2, an author's ``triggers`` word 2 and a
``triggers`` pattern 3; a keyword most installed skills share counts for less (see
:func:`keyword_weight`). On top, BM25 over each skill's own text (name, description, keywords,
phrases, synthetic queries; IDF over the installed skills) adds up to ``bm25_points`` when two
or more words match. A message naming a skill ("use pdf-editor") picks it whatever else scores;
with semantic vectors, only when the skill is invoked by name (:func:`_invoked`), while a name
said in passing ("a gif for slack") is one signal among others.
A match of the negative constraint costs points; recent use adds a little to a skill that
already matched. With semantic vectors (see :func:`rank_semantic`) the evidence is the cosine
to the skill's centroid plus ``example_weight`` times the cosine to its closest synthetic query;
BM25, capped lexical points and (with 30+ skills that have synthetic queries) the same
cosines in the installed set's whitened space add to the rank; "no skill" is decided on the best skill's
evidence and on how much the message looks like generic chat (:func:`passes_gate`).
At most ``limit`` skills, none below the threshold; every match says why.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from skillctl.routing.compiled import CompiledManifest, bm25_document, compile_manifest
from skillctl.routing.intents import (
    acknowledges,
    asks_a_general_question,
    asks_about_shown_code,
    asks_about_the_assistant,
    asks_about_the_world,
    asks_for_advice,
    asks_for_arithmetic,
    asks_what_it_is,
    edits_given_text,
    follows_up,
    remarks,
    unquoted,
)
from skillctl.routing.manifests import RoutingManifest
from skillctl.routing.patterns import TriggerPattern, compile_patterns
from skillctl.routing.text import STOPWORDS, split_name, stem, terms, words
from skillctl.routing.weights import DEFAULT_WEIGHTS, LexicalWeights, SemanticWeights, Weights

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    # One score per skill, in index order: a list, or a numpy array from semantic vectors.
    Scores = Sequence[float] | NDArray[np.floating]


# What a skill is, after the product it is for ("zenserp-automation", "opensea-mcp"): the product
# alone names it. Not "tools" or "helper": "pdf-tools" is named for a topic, and "a pdf" no request.
PRODUCT_SUFFIXES = frozenset({"automation", "integration", "api", "cli", "mcp", "sdk", "admin"})
DISTINCTIVE_SHARE = 0.05  # a name word in the texts of at most 5% of the installed skills (or one) is distinctive
MAX_MENTIONS_CHECKED = 20  # a message repeating a name thousands of times costs no more than this
NEGATIVE_MIN_TERMS = 2  # one shared word is not "the message is about what the skill is not for"
BM25_MIN_TERMS = 2  # lexical-only: BM25 points need two distinct shared words


@dataclass
class Match:
    name: str
    score: float
    reasons: list[str] = field(default_factory=list)
    components: dict[str, float] = field(default_factory=dict)

    def to_dict(self, *, explain: bool = False) -> dict:
        data = {"name": self.name, "score": round(self.score, 4), "reasons": self.reasons}
        if explain:
            data["components"] = {k: round(v, 4) for k, v in self.components.items()}
        return data


@dataclass
class _Hits:
    points: float = 0.0
    keywords: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    triggers: list[str] = field(default_factory=list)
    named: bool = False
    invoked: bool = False  # named the way one calls a skill: "pdf-editor", "use pdf", "the pdf skill"
    negative: list[str] = field(default_factory=list)


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
            else:
                hits[i].points += w.trigger_word
                hits[i].triggers.append(" ".join(phrase))


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


def rank_lexical(
    index: ScoringIndex,
    message: str,
    *,
    recent: frozenset[str] = frozenset(),
    w: Weights = DEFAULT_WEIGHTS,
    gated: bool = True,
) -> list[Match]:
    """Lexical-only routing: points (+ BM25 points), threshold, at most ``w.limit`` skills.

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
        if score < lex.threshold and (gated or score <= 0):
            continue
        reasons = explain_lexical(hit) + ([f"recently used (+{boost:g})"] if boost else [])
        if bm:
            reasons.append(f"bm25 {bm25[i]:.2f} (+{bm:.2f} points)")
        reasons.append(f"lexical {score - boost:.2f} points (threshold {lex.threshold:g})")
        components = {"lexical": hit.points, "bm25": bm, "recent": boost}
        matches.append(Match(index.names[i], score, reasons, components))
    return _best(matches, w.limit)


def _best(matches: list[Match], limit: int) -> list[Match]:
    return sorted(matches, key=lambda m: (-m.score, m.name))[:limit]


def rank_semantic(
    index: ScoringIndex,
    message: str,
    cosines: Scores,
    *,
    examples: Scores | None = None,
    whitened: Scores | None = None,
    no_skill: float = 0.0,
    chat_form: float = 0.0,
    recent: frozenset[str] = frozenset(),
    w: Weights = DEFAULT_WEIGHTS,
    gated: bool = True,
    candidates: int | None = None,
    general: bool | None = None,
) -> list[Match]:
    """Semantic evidence, BM25 and lexical points, combined; "no skill" below the thresholds.

    ``cosines``: the message against each skill's centroid; ``examples``: against its closest
    synthetic query (the centroid again for a skill without any); ``whitened``: centroid +
    ``example_weight`` * example cosines in the whitened space (None: no whitening), added to
    the rank with ``whitened_weight`` (the gate and floor stay on the evidence); ``no_skill``: how close the
    message is to messages that need no skill (:meth:`semantic.NoSkillReference.score`);
    ``chat_form``: how much more it reads as chat by its form (``chat_form_weight`` x
    :meth:`semantic.NoSkillReference.chat_form`), added to that likeness at the gate of a skill
    without synthetic queries (:func:`likeness`).
    Evidence = centroid + ``example_weight`` * example (+ name mention, - negative constraint,
    + recent use); the rank adds ``bm25_weight`` * normalised BM25 and ``lexical_weight`` *
    capped points. Nothing is routed unless the best skill passes :func:`passes_gate`; the
    skills after it need ``semantic_floor``. ``gated=False``: the best few, gate and floor unapplied.
    ``candidates``: how many skills with the best semantic evidence are scored in full (default
    ``4 * limit``); every skill the message touches lexically is scored too. A search that wants
    many results (a large ``limit``) but few semantic ones passes a small number here.
    ``general``: whether the message is general (:func:`is_general`), when the caller judged it
    already (a part of a message is judged as the whole); None: judged here.
    """
    sem = w.semantic
    hits = lexical_hits(index, message, w.lexical)
    msg_terms = terms(message)
    bm25 = index.bm25_scores(msg_terms, w.lexical)
    best = examples if examples is not None else cosines
    white = whitened if whitened is not None and sem.whitened_weight else None
    wanted = w.limit * 4 if candidates is None else candidates
    order = _candidates(cosines, best, white, sem, wanted) + sorted(bm25, key=lambda i: -bm25[i])[: w.limit]
    matches = [
        _semantic_match(
            index.names[i],
            float(cosines[i]),
            float(best[i]),
            bm25.get(i, 0.0),
            float(no_skill),
            float(chat_form),
            hits.get(i),
            recent,
            w,
            None if white is None else float(white[i]),
        )
        for i in dict.fromkeys([*order, *hits])
    ]
    matches = sorted(matches, key=lambda m: (-m.score, m.name))
    if not matches:
        return []
    # What sets the best skill's gate (here too when ungated: `route --explain` names that gate).
    # A general message (a question about the world or a concept, advice, a thanks...: is_general)
    # names a skill's topic, not the skill.
    if is_general(message) if general is None else general:
        matches[0].components["general"] = 1.0
    elif name_words := distinctive_name_words(index, matches[0].name, msg_terms):
        matches[0].reasons.append("its name's words: " + ", ".join(name_words))
        matches[0].components["name_words"] = float(len(name_words))
    if not gated:
        return matches[: w.limit]
    offline = not index.has_queries(matches[0].name)
    if not passes_gate(matches[0].components, w, offline=offline):
        return _rescued(index, message, matches, recent, w) if sem.lexical_rescue else []
    # The best skill passed its gate (which may sit under the floor: a name word said on purpose);
    # the skills after it need the floor.
    return [matches[0], *(m for m in matches[1:] if m.components["evidence"] >= sem.semantic_floor)][: w.limit]


def is_general(message: str) -> bool:
    """A message that a skill's words in it do not make a request for the skill: general
    knowledge, a concept, advice or opinion, a question about the assistant, editing text it
    quotes, a thanks, a follow-up on the last answer. An offline skill needs the stricter
    ``general_threshold`` for it, a name it mentions counts for nothing at the gate, no name-word
    floor applies, and nothing is rescued."""
    return any(
        ask(message)
        for ask in (
            asks_about_the_world,
            asks_what_it_is,
            asks_a_general_question,
            asks_about_shown_code,
            asks_for_advice,
            asks_about_the_assistant,
            edits_given_text,
            acknowledges,
            remarks,
            asks_for_arithmetic,
            follows_up,
        )
    )


def _candidates(cosines: Scores, best: Scores, white: Scores | None, w: SemanticWeights, k: int) -> list[int]:
    """The ``k`` skills with the best evidence (+ whitened rank), best first: worth a Match."""
    if isinstance(cosines, Sequence):
        evidence = [c + w.example_weight * b for c, b in zip(cosines, best, strict=True)]
        if white is not None:
            evidence = [e + w.whitened_weight * x for e, x in zip(evidence, white, strict=True)]
        return sorted(range(len(evidence)), key=lambda i: -evidence[i])[:k]
    import numpy as np  # the scores are numpy arrays, so numpy is loaded already

    total = cosines + w.example_weight * np.asarray(best)
    if white is not None:
        total = total + w.whitened_weight * np.asarray(white)
    k = min(k, len(total))
    top = total.argpartition(len(total) - k)[len(total) - k :]  # the top few without a full sort
    return [int(i) for i in top[(-total[top]).argsort()]]


def _rescued(index: ScoringIndex, message: str, ranked: list[Match], recent: frozenset[str], w: Weights) -> list[Match]:
    """Lexical-only routing's answer, when the semantic gate refused one lexical would give
    (a lexical match whose meaning is far from the message, "linked list" for a bookmarks
    skill, is not confident: it needs ``rescue_floor`` semantic evidence). The skill the
    semantic ranking puts first too needs less (``rescue_agreed_floor``), unless the message
    reads like chat; without that skill among them, nothing is rescued, and with it, it leads.
    A general question ("what's a linked list": a bookmarks skill's words) is not a request
    for the skill that names its topic, nor a thanks one that says it worked ("thanks, that
    test passes now"): never rescued. Nor are words the message quotes (an essay's intro to
    explain, an email to reword): they are the material, not the request."""
    if ranked[0].components.get("general"):  # set by rank_semantic (a thanks is one: is_general)
        return []
    evidence = {m.name: m.components["evidence"] for m in ranked}
    sem, best = w.semantic, ranked[0].components
    # The semantic ranking's best skill, if lexical-only routes it too, and the message is no chat.
    agreed = (
        ranked[0].name
        if best["evidence"] >= sem.rescue_agreed_floor
        and best["evidence"] - sem.no_skill_weight * likeness(best, offline=not index.has_queries(ranked[0].name))
        >= sem.rescue_agreed_no_skill
        else None
    )
    rescued = [
        m
        for m in rank_lexical(index, unquoted(message), recent=recent, w=w)
        if (evidence.get(m.name, 0.0) >= sem.rescue_floor or m.name == agreed) and not index.has_queries(m.name)
    ]
    # The semantic ranking's best skill must be among them, and goes first: a lexical match
    # alone, of words that say little ("start", "track", "job"), is no answer after the gate
    # said no (a long message has many such words: "how do we track this down" -> toggl).
    if ranked[0].name not in {m.name for m in rescued}:
        return []
    rescued.sort(key=lambda m: m.name != ranked[0].name)  # stable: the others keep lexical order
    for match in rescued:
        match.reasons.append("confident lexical match kept over the semantic no-skill gate")
    return rescued


def distinctive_name_words(index: ScoringIndex, name: str, msg_terms: Sequence[str]) -> list[str]:
    """Words of the skill's name among the message's terms that few installed skills use ("remind me ...
    in reminders" for apple-reminders; not "code" for clean-code): said on purpose, not in passing."""
    if index.bm25 is None:
        return []
    common = max(1.0, DISTINCTIVE_SHARE * len(index))
    own = {stem(w) for w in split_name(name) if w not in STOPWORDS}
    return [t for t in dict.fromkeys(msg_terms) if t in own and index.bm25.df.get(t, 0) <= common]


def _gate(components: Mapping[str, float], w: Weights, offline: bool) -> tuple[float, float]:
    """The threshold and the no-skill floor that apply to the best skill."""
    sem = w.semantic
    if not offline:  # synthetic queries: a gate calibrated on them, general questions included
        return sem.semantic_threshold, sem.no_skill_threshold
    if components.get("general"):
        return sem.general_threshold, sem.general_no_skill_threshold
    if components.get("name_words"):
        return sem.name_word_threshold, sem.name_word_no_skill_threshold
    return sem.offline_threshold, sem.offline_no_skill_threshold


def _gate_evidence(components: Mapping[str, float]) -> float:
    """The evidence the gate weighs: a general question that names a skill ("when did youtube
    launch", "is an oura ring worth it") names its topic, so the name counts for nothing there."""
    if components.get("general"):
        return components["evidence"] - components.get("name", 0.0)
    return components["evidence"]


def likeness(components: Mapping[str, float], *, offline: bool) -> float:
    """How much the message reads like one that needs no skill, at the gate: its no-skill
    neighbours, and for a skill without synthetic queries its form too (a question about the
    skill's topic has the topic's evidence; a gate calibrated on synthetic queries, MetaTool's,
    weighs the neighbours alone)."""
    return components["no_skill"] + (components.get("chat_form", 0.0) if offline else 0.0)


def passes_gate(components: Mapping[str, float], w: Weights = DEFAULT_WEIGHTS, *, offline: bool = False) -> bool:
    """Does the best skill's semantic evidence say "this message needs a skill"?"""
    threshold, floor = _gate(components, w, offline)
    evidence = _gate_evidence(components)
    return (
        evidence >= threshold and evidence - w.semantic.no_skill_weight * likeness(components, offline=offline) >= floor
    )


def why_not_routed(match: Match, *, best: bool, w: Weights = DEFAULT_WEIGHTS, offline: bool = False) -> str:
    """The threshold or gate that stopped a skill ranked by ``gated=False`` ranking."""
    c, sem = match.components, w.semantic
    threshold, floor = _gate(c, w, offline)
    if "evidence" not in c:  # lexical-only
        if match.score >= w.lexical.threshold:
            return "passes the threshold"  # the message routes (asked about a message that does)
        return f"{match.score:.2f} points, below the threshold {w.lexical.threshold:g}"
    evidence, no_skill = _gate_evidence(c), likeness(c, offline=offline)
    if not best:
        if evidence < sem.semantic_floor:
            return f"semantic evidence {evidence:.3f}, below the floor {sem.semantic_floor:g}"
        return "ranked after the best skill, which did not pass the gate"
    kind = " for a general question" if c.get("general") else ""
    if evidence < threshold:
        return f"semantic evidence {evidence:.3f}, below the threshold {threshold:g}{kind}"
    margin = evidence - sem.no_skill_weight * no_skill
    if margin >= floor:
        return "passes the gate"  # the message routes (asked about a message that does)
    form = c.get("chat_form", 0.0) if offline else 0.0
    by_form = f", {form:.3f} of it by its form, chat rather than a request" if form else ""
    return (
        f"reads like a message that needs no skill (generic-chat likeness {no_skill:.3f}{by_form}: "
        f"evidence - {sem.no_skill_weight:g} x likeness = {margin:.3f}, below {floor:g}{kind})"
    )


def _semantic_match(
    name: str,
    cosine: float,
    example: float,
    bm25: float,
    no_skill: float,
    chat_form: float,
    hit: _Hits | None,
    recent: frozenset[str],
    w: Weights,
    whitened: float | None = None,
) -> Match:
    hit, lex, sem = hit or _Hits(), w.lexical, w.semantic
    # The semantic score counts lexical points without the name and negative ones: those have
    # their own semantic weights.
    points = hit.points - (lex.name if hit.named else 0.0) + (lex.negative if hit.negative else 0.0)
    lexical = sem.lexical_weight * max(0.0, min(points, sem.lexical_cap)) / sem.lexical_cap
    named = (sem.semantic_name if hit.invoked else sem.semantic_mention) if hit.named else 0.0
    negative = sem.semantic_negative if hit.negative else 0.0
    recent_boost = sem.semantic_recent if name in recent and (points > 0 or cosine > 0.3) else 0.0
    evidence = cosine + sem.example_weight * example + named - negative + recent_boost
    white = sem.whitened_weight * whitened if whitened is not None else 0.0
    score = evidence + white + sem.bm25_weight * bm25 + lexical
    reasons = explain_lexical(hit) + [
        f"semantic {cosine:.3f} (closest example {example:.3f})"
        + (f", whitened {whitened:.3f}" if whitened is not None else ""),
        f"bm25 {bm25:.2f}",
        f"lexical {points:.2f} points",
        f"generic-chat likeness {no_skill:.3f}"
        + (f" (+{chat_form:.3f} by its form, for a skill without synthetic queries)" if chat_form else ""),
    ]
    if recent_boost:
        reasons.append(f"recently used (+{recent_boost:g})")
    components = {
        "semantic": cosine,
        "example": example,
        "whitened": white,
        "bm25": sem.bm25_weight * bm25,
        "lexical": lexical,
        "name": named,
        "negative": -negative,
        "recent": recent_boost,
        "no_skill": no_skill,
        "chat_form": chat_form,
        "evidence": evidence,
    }
    return Match(name, score, reasons, components)
