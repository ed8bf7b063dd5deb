"""Stage 2b, semantic candidates: the skills nearest a message in meaning, ranked. Pure code.

Each skill's evidence is the cosine of the message to the skill's centroid plus
``example_weight`` times the cosine to its closest example (a synthetic query, or a passage of
its SKILL.md), with a name mention, the negative constraint and recent use. The rank adds BM25,
capped lexical points and, with 30+ skills that have synthetic queries, the same cosines in the
installed set's whitened space. A message of several sentences is scored, for a skill without
synthetic queries, by its closest sentence too. How close the message is to messages that need
no skill (``semantic.NoSkillReference``) is measured here as well: one of the gate's features.
Nothing is decided here: :mod:`skillctl.routing.gate` decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillctl.routing.explain import explain_lexical
from skillctl.routing.lexical import ScoringIndex, _Hits, lexical_hits
from skillctl.routing.match import Match
from skillctl.routing.text import STOPWORDS, split_name, stem, terms
from skillctl.routing.weights import DEFAULT_WEIGHTS, SemanticWeights, Weights

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    # One score per skill, in index order: a list, or a numpy array from semantic vectors.
    Scores = Sequence[float] | NDArray[np.floating]

DISTINCTIVE_SHARE = 0.05  # a name word in the texts of at most 5% of the installed skills (or one) is distinctive


@dataclass
class Evidence:
    """A message's semantic scores against every skill, and what the gate reads of it."""

    cosines: Scores
    examples: Scores
    whitened: Scores | None
    no_skill: float  # mean cosine of its closest messages that need no skill (its chattiest view's)
    views: list[str]  # the message in its own words, then its sentences
    closest: Any  # numpy ints per skill: the view nearest it (0: the whole message); None: one view
    vectors: list  # one per view


def semantic_evidence(router, text: str, query_vector, encoded: dict[str, object]) -> Evidence:
    """``text`` against every skill of ``router`` (its vectors, encoder and no-skill reference);
    ``encoded`` keeps the vectors of texts encoded for this message already."""
    offline = router.offline_mask()
    views = router.views(text)
    vectors = router.encode(views, encoded, query_vector)
    sem = router.weights.semantic
    cosines, examples = router.vectors.scores(vectors[0])
    reference = router.no_skill()
    no_skill = reference.score(vectors[0], sem.no_skill_k)
    closest = None
    if len(views) > 1:
        # Per skill without synthetic queries, the view closest to it; skills with queries keep
        # whole messages. The message is as chatty as its chattiest view.
        import numpy as np

        scored = [router.vectors.scores(v) for v in vectors[1:]]
        share = sem.sentence_share
        per_sentence = np.stack([c + sem.example_weight * e for c, e in scored])
        nearer = offline & (per_sentence.max(axis=0) > cosines + sem.example_weight * examples)
        closest = np.where(nearer, per_sentence.argmax(axis=0) + 1, 0)
        best_cosine = np.max([c for c, _ in scored], axis=0)
        best_example = np.max([e for _, e in scored], axis=0)
        cosines = np.where(offline, np.maximum(cosines, (1 - share) * cosines + share * best_cosine), cosines)
        examples = np.where(offline, np.maximum(examples, (1 - share) * examples + share * best_example), examples)
        no_skill = max(no_skill, *(reference.score(v, sem.no_skill_k) for v in vectors[1:]))
    return Evidence(cosines, examples, router.whitened(vectors[0]), float(no_skill), views, closest, vectors)


def rank_semantic(
    index: ScoringIndex,
    message: str,
    cosines: Scores,
    *,
    examples: Scores | None = None,
    whitened: Scores | None = None,
    no_skill: float = 0.0,
    recent: frozenset[str] = frozenset(),
    w: Weights = DEFAULT_WEIGHTS,
    candidates: int | None = None,
    keep: int | None = None,
    gated: bool = False,  # callers of the old signature: ranking never gates (the gate is a stage)
) -> list[Match]:
    """Every skill worth a look, best rank first (``keep`` of them, default ``w.limit``).

    ``cosines``: the message against each skill's centroid; ``examples``: against its closest
    example (the centroid again for a skill without any); ``whitened``: centroid +
    ``example_weight`` x example cosines in the whitened space (None: no whitening).
    ``candidates``: how many skills with the best semantic evidence are scored in full (default
    ``4 * limit``); every skill the message touches lexically is scored too, and a skill whose
    own trigger matched or that is invoked by name always comes first among equals of them."""
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
            hits.get(i),
            recent,
            w,
            None if white is None else float(white[i]),
        )
        for i in dict.fromkeys([*order, *hits])
    ]
    matches = sorted(matches, key=lambda m: (-m.score, m.name))
    for match in matches:
        if name_words := distinctive_name_words(index, match.name, msg_terms):
            match.reasons.append("its name's words: " + ", ".join(name_words))
            match.components["name_words"] = float(len(name_words))
    limit = w.limit if keep is None else keep
    forced = [m for m in matches[limit:] if m.components["trigger"] or m.components["invoked"]] if keep else []
    return matches[:limit] + forced


def distinctive_name_words(index: ScoringIndex, name: str, msg_terms: Sequence[str]) -> list[str]:
    """Words of the skill's name among the message's terms that few installed skills use: said
    on purpose, not in passing (not "code" for clean-code)."""
    if index.bm25 is None:
        return []
    common = max(1.0, DISTINCTIVE_SHARE * len(index))
    own = {stem(w) for w in split_name(name) if w not in STOPWORDS}
    return [t for t in dict.fromkeys(msg_terms) if t in own and index.bm25.df.get(t, 0) <= common]


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
        f"generic-chat likeness {no_skill:.3f}",
    ]
    if recent_boost:
        reasons.append(f"recently used (+{recent_boost:g})")
    components = {
        "semantic": cosine,
        "example": example,
        "whitened": white,
        "bm25": sem.bm25_weight * bm25,
        "lexical": lexical,
        "points": points,
        "name": named,
        "invoked": float(hit.invoked),
        "trigger": float(hit.triggered),
        "negative": -negative,
        "recent": recent_boost,
        "no_skill": no_skill,
        "evidence": evidence,
    }
    return Match(name, score, reasons, components)
