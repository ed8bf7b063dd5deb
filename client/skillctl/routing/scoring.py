"""Score a message against every skill's routing manifest (DESIGN section 7). Pure code.

Lexical points: a keyword is worth 1 point, a phrase 2, an author's ``triggers`` word 2 and a
``triggers`` pattern 3; a keyword most installed skills share counts for less (see
:func:`keyword_weight`). On top, BM25 over each skill's own text (name, description, keywords,
phrases, synthetic queries; IDF over the installed skills) adds up to ``bm25_points`` when two
or more words match. A message naming a skill ("use pdf-editor") picks it whatever else scores.
A match of the negative constraint costs points; recent use adds a little to a skill that
already matched. With semantic vectors (see :func:`rank_semantic`) the evidence is the cosine
to the skill's centroid plus ``example_weight`` times the cosine to its closest synthetic query;
BM25, capped lexical points and (with 30+ skills that have synthetic queries) the same
cosines in the installed set's whitened space add to the rank; "no skill" is decided on the best skill's
evidence and on how much the message looks like generic chat (:func:`passes_gate`).
At most ``limit`` skills, none below the threshold; every match says why.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from skillctl.routing.manifests import RoutingManifest
from skillctl.routing.text import STOPWORDS, split_name, stem, terms, words


@dataclass(frozen=True)
class Weights:
    keyword: float = 1.0
    phrase: float = 2.0
    trigger_word: float = 2.0  # the author said this word means "use me"
    trigger_pattern: float = 3.0  # ... and this regex: alone enough to pass the threshold
    name: float = 10.0  # an explicit mention wins over everything lexical
    negative: float = 2.0  # points lost when the message matches the negative constraint
    recent: float = 0.5  # points for a skill used in this session / recently
    threshold: float = 3.0  # lexical-only: fewer points -> not routed
    # BM25 over each skill's own text (name, description, keywords, synthetic queries), IDF over
    # the installed skills; normalised to [0, 1] by the query's own best possible score.
    bm25_k1: float = 1.5
    bm25_b: float = 0.75
    bm25_points: float = 3.0  # lexical-only: points for a perfect BM25 match (tuned on dev)
    # With semantic vectors (tuned on a dev split of MetaTool's expansion set, see bench/README):
    example_weight: float = 0.5  # the closest synthetic query's cosine, next to the centroid's
    bm25_weight: float = 0.8
    # With 30+ skills that have synthetic queries: the same centroid + example cosines in the
    # installed set's whitened space (semantic.whitening) add to the rank, not to the evidence.
    whitened_weight: float = 1.0
    lexical_weight: float = 0.2
    lexical_cap: float = 8.0
    semantic_name: float = 1.0
    semantic_negative: float = 0.15
    semantic_recent: float = 0.03
    # Evidence = centroid cosine + example_weight * closest-example cosine (+ name, - negative,
    # + recent). The best skill's evidence must reach semantic_threshold, and, minus
    # no_skill_weight * the message's no-skill score (mean cosine of its no_skill_k closest
    # messages in data/no-skill.txt, which need no skill; 0: cosine to their centroid), reach
    # no_skill_threshold; the skills after it need semantic_floor.
    semantic_threshold: float = 0.60
    no_skill_weight: float = 2.0
    no_skill_threshold: float = -0.04
    no_skill_k: int = 3
    semantic_floor: float = 0.40
    # Skills without synthetic queries (offline manifests, what most installed skills have):
    # evidence is 1.5 x the description cosine, lower than with queries, so their gate is
    # calibrated apart, on real skills and hand-written requests (bench/route_real.py, dev split).
    offline_threshold: float = 0.48
    offline_no_skill_threshold: float = -0.04
    # The gate never takes a confident lexical match away from an offline-manifest skill: when
    # it says "no skill" but lexical scoring passes its own threshold, the lexical answer stands
    # (semantic >= lexical-only). Skills with synthetic queries have a calibrated gate already.
    lexical_rescue: bool = True
    rescue_floor: float = 0.4  # ... unless the semantic evidence for that skill is below this
    limit: int = 3  # DESIGN section 7: at most 3 skills


DEFAULT_WEIGHTS = Weights()
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
    negative: list[str] = field(default_factory=list)


def keyword_weight(df: int, n_skills: int) -> float:
    """1 point for a keyword few skills share; less as more of the installed skills share it."""
    common = max(2.0, 0.05 * n_skills)
    if df <= common:
        return 1.0
    return math.log1p(n_skills / df) / math.log1p(n_skills / common)


def bm25_document(m: RoutingManifest) -> dict[str, int]:
    """The skill's own words for BM25: name, description, keywords, phrases, triggers, queries."""
    name = [stem(w) for w in split_name(m.name) if w not in STOPWORDS]
    parts = [m.description, *m.keywords, *m.phrases, *m.trigger_words, *m.queries]
    return dict(Counter(name + [t for part in parts for t in terms(part)]))


def compile_manifest(m: RoutingManifest) -> dict:
    """A manifest's words as the scorer matches them (stemmed once, at index time)."""
    split = [terms(kw) for kw in m.keywords]
    keywords = {ts[0] for ts in split if len(ts) == 1}
    phrases = [ts for ts in split if len(ts) > 1] + [ts for p in m.phrases if len(ts := terms(p)) > 1]
    return {
        "bm25": bm25_document(m),
        "keywords": sorted(keywords),
        "phrases": [list(p) for p in dict.fromkeys(tuple(p) for p in phrases)],
        "triggers": [list(p) for p in dict.fromkeys(tuple(terms(w)) for w in m.trigger_words) if p],
        "name": split_name(m.name),
        "negative": sorted(set(terms(m.negative)) - keywords),
    }


class ScoringIndex:
    """Routing manifests compiled for fast lookups: postings from word to skills."""

    def __init__(self, manifests: Sequence[RoutingManifest], compiled: Sequence[dict] | None = None) -> None:
        self.names = [m.name for m in manifests]
        self.manifests = list(manifests)
        self.keywords: dict[str, list[tuple[int, float]]] = {}
        self.phrases: dict[str, list[tuple[int, tuple[str, ...], str]]] = defaultdict(list)
        self.mentions: dict[str, list[tuple[int, tuple[str, ...]]]] = defaultdict(list)
        self.negatives: list[frozenset[str]] = []
        self.patterns: list[tuple[int, re.Pattern]] = []
        self.bm25: BM25 | None = None
        self._with_queries: set[str] | None = None
        compiled = compiled or [compile_manifest(m) for m in self.manifests]
        self._compile(compiled)
        self.documents = [c.get("bm25") or bm25_document(m) for m, c in zip(self.manifests, compiled, strict=True)]

    def bm25_scores(self, msg_terms: Sequence[str], w: Weights, *, min_terms: int = 1) -> dict[int, float]:
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

    def _compile(self, compiled: Sequence[dict]) -> None:
        raw: dict[str, list[int]] = defaultdict(list)
        phrases = self.phrases
        for i, (m, c) in enumerate(zip(self.manifests, compiled, strict=True)):
            for term in c["keywords"]:
                raw[term].append(i)
            for phrase in c["phrases"]:
                phrases[phrase[0]].append((i, tuple(phrase), "phrases"))
            for phrase in c["triggers"]:
                phrases[phrase[0]].append((i, tuple(phrase), "triggers"))
            if c["name"]:
                self.mentions[c["name"][0]].append((i, tuple(c["name"])))
            self.negatives.append(frozenset(c["negative"]))
            if m.trigger_patterns:
                self.patterns.extend((i, p) for p in _compile_patterns(m.trigger_patterns))
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

    def __init__(self, documents: Sequence[dict[str, int]], *, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        n = len(documents)
        lengths = [sum(d.values()) for d in documents]
        average = (sum(lengths) / n) if n else 1.0
        df: Counter = Counter(t for d in documents for t in d)
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


def _compile_patterns(patterns: Sequence[str]) -> list[re.Pattern]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern, re.IGNORECASE))
        except re.error:
            continue  # the validator reports bad patterns; routing just ignores them
    return compiled


def lexical_hits(index: ScoringIndex, message: str, w: Weights = DEFAULT_WEIGHTS) -> dict[int, _Hits]:
    """Every skill the message touches lexically, with what matched."""
    hits: dict[int, _Hits] = defaultdict(_Hits)
    msg_terms = terms(message)
    for term in dict.fromkeys(msg_terms):
        for i, weight in index.keywords.get(term, ()):
            hits[i].points += w.keyword * weight
            hits[i].keywords.append(term)
    _phrase_hits(index, msg_terms, hits, w)
    _mention_hits(index, words(message), hits, w)
    for i, pattern in index.patterns:
        if pattern.search(message):
            hits[i].points += w.trigger_pattern
            hits[i].triggers.append(f"/{pattern.pattern}/")
    _negative_hits(index, set(msg_terms), hits, w)
    return hits


def _phrase_hits(index: ScoringIndex, msg_terms: list[str], hits: dict[int, _Hits], w: Weights) -> None:
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


def _mention_hits(index: ScoringIndex, msg_words: list[str], hits: dict[int, _Hits], w: Weights) -> None:
    for pos, word in enumerate(msg_words):
        for i, name_words in index.mentions.get(word, ()):
            if hits.get(i) and hits[i].named:
                continue
            if tuple(msg_words[pos : pos + len(name_words)]) != name_words:
                continue
            if len(name_words) == 1 and word in STOPWORDS:
                continue  # a skill called "help" is not mentioned by "can you help"
            hits[i].named = True
            hits[i].points += w.name


def _negative_hits(index: ScoringIndex, msg_set: set[str], hits: dict[int, _Hits], w: Weights) -> None:
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
    hits = lexical_hits(index, message, w)
    # Like the negative constraint, one shared word is not enough: DESIGN's "one keyword is
    # below the threshold" holds, BM25 only adds points where two or more words match.
    bm25 = index.bm25_scores(terms(message), w, min_terms=BM25_MIN_TERMS) if w.bm25_points else {}
    matches = []
    for i, hit in hits.items():
        bm = w.bm25_points * bm25.get(i, 0.0)
        boost = w.recent if index.names[i] in recent and hit.points > 0 else 0.0
        score = hit.points + bm + boost
        if score < w.threshold and (gated or score <= 0):
            continue
        reasons = explain_lexical(hit) + ([f"recently used (+{boost:g})"] if boost else [])
        if bm:
            reasons.append(f"bm25 {bm25[i]:.2f} (+{bm:.2f} points)")
        reasons.append(f"lexical {score - boost:.2f} points (threshold {w.threshold:g})")
        components = {"lexical": hit.points, "bm25": bm, "recent": boost}
        matches.append(Match(index.names[i], score, reasons, components))
    return _best(matches, w.limit)


def _best(matches: list[Match], limit: int) -> list[Match]:
    return sorted(matches, key=lambda m: (-m.score, m.name))[:limit]


def rank_semantic(
    index: ScoringIndex,
    message: str,
    cosines: Sequence[float],
    *,
    examples: Sequence[float] | None = None,
    whitened: Sequence[float] | None = None,
    no_skill: float = 0.0,
    recent: frozenset[str] = frozenset(),
    w: Weights = DEFAULT_WEIGHTS,
    gated: bool = True,
) -> list[Match]:
    """Semantic evidence, BM25 and lexical points, combined; "no skill" below the thresholds.

    ``cosines``: the message against each skill's centroid; ``examples``: against its closest
    synthetic query (the centroid again for a skill without any); ``whitened``: centroid +
    ``example_weight`` * example cosines in the whitened space (None: no whitening), added to
    the rank with ``whitened_weight`` (the gate and floor stay on the evidence); ``no_skill``: how close the
    message is to messages that need no skill (:meth:`semantic.NoSkillReference.score`).
    Evidence = centroid + ``example_weight`` * example (+ name mention, - negative constraint,
    + recent use); the rank adds ``bm25_weight`` * normalised BM25 and ``lexical_weight`` *
    capped points. Nothing is routed unless the best skill passes :func:`passes_gate`; the
    skills after it need ``semantic_floor``. ``gated=False``: the best few, gate and floor unapplied.
    """
    hits = lexical_hits(index, message, w)
    bm25 = index.bm25_scores(terms(message), w)
    best = examples if examples is not None else cosines
    white = whitened if whitened is not None and w.whitened_weight else None
    if hasattr(cosines, "argpartition"):  # numpy arrays: the top few without a Python sort
        evidence = cosines + w.example_weight * best
        if white is not None:
            evidence = evidence + w.whitened_weight * white
        k = min(w.limit * 4, len(evidence))
        top = evidence.argpartition(len(evidence) - k)[len(evidence) - k :]
        order = [int(i) for i in top[(-evidence[top]).argsort()]]
    else:
        evidence = [c + w.example_weight * b for c, b in zip(cosines, best, strict=True)]
        if white is not None:
            evidence = [e + w.whitened_weight * x for e, x in zip(evidence, white, strict=True)]
        order = sorted(range(len(evidence)), key=lambda i: -evidence[i])[: w.limit * 4]
    order += sorted(bm25, key=lambda i: -bm25[i])[: w.limit]
    matches = [
        _semantic_match(
            index.names[i],
            float(cosines[i]),
            float(best[i]),
            bm25.get(i, 0.0),
            float(no_skill),
            hits.get(i),
            recent,
            w,
            None if white is None else float(white[i]),
        )
        for i in dict.fromkeys([*order, *hits])
    ]
    matches = sorted(matches, key=lambda m: (-m.score, m.name))
    if not gated:
        return matches[: w.limit]
    offline = bool(matches) and not index.has_queries(matches[0].name)
    if not matches or not passes_gate(matches[0].components["evidence"], float(no_skill), w, offline=offline):
        return _rescued(index, message, matches, recent, w) if w.lexical_rescue else []
    return [m for m in matches if m.components["evidence"] >= w.semantic_floor][: w.limit]


def _rescued(index: ScoringIndex, message: str, ranked: list[Match], recent: frozenset[str], w: Weights) -> list[Match]:
    """Lexical-only routing's answer, when the semantic gate refused one lexical would give
    (a lexical match whose meaning is far from the message, "linked list" for a bookmarks
    skill, is not confident: it needs ``rescue_floor`` semantic evidence)."""
    evidence = {m.name: m.components["evidence"] for m in ranked}
    rescued = [
        m
        for m in rank_lexical(index, message, recent=recent, w=w)
        if evidence.get(m.name, 0.0) >= w.rescue_floor and not index.has_queries(m.name)
    ]
    for match in rescued:
        match.reasons.append("confident lexical match kept over the semantic no-skill gate")
    return rescued


def passes_gate(evidence: float, no_skill: float, w: Weights = DEFAULT_WEIGHTS, *, offline: bool = False) -> bool:
    """Does the best skill's semantic evidence say "this message needs a skill"?"""
    threshold = w.offline_threshold if offline else w.semantic_threshold
    floor = w.offline_no_skill_threshold if offline else w.no_skill_threshold
    return evidence >= threshold and evidence - w.no_skill_weight * no_skill >= floor


def why_not_routed(match: Match, *, best: bool, w: Weights = DEFAULT_WEIGHTS, offline: bool = False) -> str:
    """The threshold or gate that stopped a skill ranked by ``gated=False`` ranking."""
    c = match.components
    threshold = w.offline_threshold if offline else w.semantic_threshold
    floor = w.offline_no_skill_threshold if offline else w.no_skill_threshold
    if "evidence" not in c:  # lexical-only
        return f"{match.score:.2f} points, below the threshold {w.threshold:g}"
    evidence, no_skill = c["evidence"], c["no_skill"]
    if not best:
        if evidence < w.semantic_floor:
            return f"semantic evidence {evidence:.3f}, below the floor {w.semantic_floor:g}"
        return "ranked after the best skill, which did not pass the gate"
    if evidence < threshold:
        return f"semantic evidence {evidence:.3f}, below the threshold {threshold:g}"
    margin = evidence - w.no_skill_weight * no_skill
    return (
        f"reads like a message that needs no skill (generic-chat likeness {no_skill:.3f}: "
        f"evidence - {w.no_skill_weight:g} x likeness = {margin:.3f}, below {floor:g})"
    )


def _semantic_match(
    name: str,
    cosine: float,
    example: float,
    bm25: float,
    no_skill: float,
    hit: _Hits | None,
    recent: frozenset[str],
    w: Weights,
    whitened: float | None = None,
) -> Match:
    hit = hit or _Hits()
    points = hit.points - (w.name if hit.named else 0.0) + (w.negative if hit.negative else 0.0)
    lexical = w.lexical_weight * max(0.0, min(points, w.lexical_cap)) / w.lexical_cap
    named = w.semantic_name if hit.named else 0.0
    negative = w.semantic_negative if hit.negative else 0.0
    recent_boost = w.semantic_recent if name in recent and (points > 0 or cosine > 0.3) else 0.0
    evidence = cosine + w.example_weight * example + named - negative + recent_boost
    white = w.whitened_weight * whitened if whitened is not None else 0.0
    score = evidence + white + w.bm25_weight * bm25 + lexical
    reasons = explain_lexical(hit) + [
        f"semantic {cosine:.3f} (closest example {example:.3f})"
        + (f", whitened {whitened:.3f}" if whitened is not None else ""),
        f"bm25 {bm25:.2f}",
        f"lexical {points:.2f} points",
        f"generic-chat likeness {no_skill:.3f}",
    ]
    if recent_boost:
        reasons.append(f"recently used (+{recent_boost:g})")
    components = {
        "semantic": cosine,
        "example": example,
        "whitened": white,
        "bm25": w.bm25_weight * bm25,
        "lexical": lexical,
        "name": named,
        "negative": -negative,
        "recent": recent_boost,
        "no_skill": no_skill,
        "evidence": evidence,
    }
    return Match(name, score, reasons, components)
