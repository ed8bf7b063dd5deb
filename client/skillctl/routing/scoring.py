"""Score a message against every skill's routing manifest (DESIGN section 7). Pure code.

Lexical points: a keyword is worth 1 point, a phrase 2, an author's ``triggers`` word 2 and a
``triggers`` pattern 3; a keyword most installed skills share counts for less (see
:func:`keyword_weight`). A message naming a skill ("use pdf-editor") picks it whatever else
scores. A match of the negative constraint costs points; recent use adds a little to a skill
that already matched. With a semantic vector per skill (cosine of the message to the skill's
centroid) the score is ``cosine + LEXICAL_WEIGHT * min(points, LEXICAL_CAP) / LEXICAL_CAP``.
At most ``limit`` skills, none below the threshold; every match says why.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from skillctl.routing.manifests import RoutingManifest
from skillctl.routing.text import STOPWORDS, split_name, terms, words


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
    # With semantic vectors (tuned on a dev split of MetaTool's expansion set, see bench/README):
    lexical_weight: float = 0.2
    lexical_cap: float = 8.0
    semantic_name: float = 1.0
    semantic_negative: float = 0.15
    semantic_recent: float = 0.03
    semantic_threshold: float = 0.45
    limit: int = 3  # DESIGN section 7: at most 3 skills


DEFAULT_WEIGHTS = Weights()
NEGATIVE_MIN_TERMS = 2  # one shared word is not "the message is about what the skill is not for"


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


def compile_manifest(m: RoutingManifest) -> dict:
    """A manifest's words as the scorer matches them (stemmed once, at index time)."""
    split = [terms(kw) for kw in m.keywords]
    keywords = {ts[0] for ts in split if len(ts) == 1}
    phrases = [ts for ts in split if len(ts) > 1] + [ts for p in m.phrases if len(ts := terms(p)) > 1]
    return {
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
        self._compile(compiled or [compile_manifest(m) for m in self.manifests])

    def __len__(self) -> int:
        return len(self.names)

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
) -> list[Match]:
    """Lexical-only routing: points, threshold, at most ``w.limit`` skills, best first."""
    matches = []
    for i, hit in lexical_hits(index, message, w).items():
        boost = w.recent if index.names[i] in recent and hit.points > 0 else 0.0
        score = hit.points + boost
        if score < w.threshold:
            continue
        reasons = explain_lexical(hit) + ([f"recently used (+{boost:g})"] if boost else [])
        reasons.append(f"lexical {hit.points:.2f} points (threshold {w.threshold:g})")
        components = {"lexical": hit.points, "recent": boost}
        matches.append(Match(index.names[i], score, reasons, components))
    return _best(matches, w.limit)


def _best(matches: list[Match], limit: int) -> list[Match]:
    return sorted(matches, key=lambda m: (-m.score, m.name))[:limit]


def rank_semantic(
    index: ScoringIndex,
    message: str,
    cosines: Sequence[float],
    *,
    recent: frozenset[str] = frozenset(),
    w: Weights = DEFAULT_WEIGHTS,
) -> list[Match]:
    """Lexical points and the cosine of the message to each skill's centroid, combined."""
    hits = lexical_hits(index, message, w)
    order = sorted(range(len(cosines)), key=lambda i: -cosines[i])[: w.limit * 4]
    matches = []
    for i in dict.fromkeys([*order, *hits]):
        match = _semantic_match(index.names[i], float(cosines[i]), hits.get(i), recent, w)
        if match.score >= w.semantic_threshold:
            matches.append(match)
    return _best(matches, w.limit)


def _semantic_match(name: str, cosine: float, hit: _Hits | None, recent: frozenset[str], w: Weights) -> Match:
    hit = hit or _Hits()
    points = hit.points - (w.name if hit.named else 0.0) + (w.negative if hit.negative else 0.0)
    lexical = w.lexical_weight * max(0.0, min(points, w.lexical_cap)) / w.lexical_cap
    named = w.semantic_name if hit.named else 0.0
    negative = w.semantic_negative if hit.negative else 0.0
    recent_boost = w.semantic_recent if name in recent and (points > 0 or cosine > 0.3) else 0.0
    score = cosine + lexical + named - negative + recent_boost
    reasons = explain_lexical(hit) + [f"semantic {cosine:.3f}", f"lexical {points:.2f} points"]
    if recent_boost:
        reasons.append(f"recently used (+{recent_boost:g})")
    components = {"semantic": cosine, "lexical": lexical, "name": named, "negative": -negative, "recent": recent_boost}
    return Match(name, score, reasons, components)
