"""The numbers routing scores with, one frozen dataclass per scorer. Pure data.

:class:`LexicalWeights` are the points of lexical-only routing (:func:`lexical.rank_lexical`);
semantic ranking (:func:`candidates.rank_semantic`) counts the same lexical hits as one of its
signals, so it reads them too, next to its own :class:`SemanticWeights`. :class:`Weights`
composes both with the one number they share, how many skills an answer may hold.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class LexicalWeights:
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


@dataclass(frozen=True)
class SemanticWeights:
    # With semantic vectors: how the candidates are ranked (tuned on a dev split of MetaTool's
    # expansion set and the real-skill training rows, see bench/README):
    example_weight: float = 0.5  # the closest synthetic query's cosine, next to the centroid's
    bm25_weight: float = 0.8
    # With 30+ skills that have synthetic queries: the same centroid + example cosines in the
    # installed set's whitened space (semantic.whitening) add to the rank, not to the evidence.
    whitened_weight: float = 1.0
    lexical_weight: float = 0.2
    lexical_cap: float = 8.0
    # A skill named the way one calls it ("pdf-editor", "use pdf", "the pdf skill") wins;
    # named in passing ("a gif for slack", "deploy to vercel") the name is one signal among
    # others: a product name is often the platform of a more specific skill (tuned on dev).
    semantic_name: float = 1.0
    semantic_mention: float = 0.15  # .3 -> .15: the platform won over the specific skill too often (dev)
    semantic_negative: float = 0.15
    semantic_recent: float = 0.03
    # A message of several sentences: each skill's cosines are the whole message's, or, when
    # higher, (1 - share) x the whole's + share x its closest sentence's (tuned on dev).
    sentence_share: float = 1.0
    # Evidence = centroid cosine + example_weight * closest-example cosine (+ name, - negative,
    # + recent); the no-skill likeness is the mean cosine of the message's no_skill_k closest
    # messages in data/no-skill.txt. Both are features of the learned gate (routing.gate), which
    # decides; no threshold here decides whether a message needs a skill.
    no_skill_k: int = 3
    # Evidence a match needs to be called strong outside routing (the registry's search ranks
    # with these weights and labels such matches); the gate never reads it.
    semantic_threshold: float = 0.60


_LEXICAL = frozenset(f.name for f in fields(LexicalWeights))
_SEMANTIC = frozenset(f.name for f in fields(SemanticWeights))
assert not _LEXICAL & _SEMANTIC, "one name, one field: Weights.get and with_values rely on it"


@dataclass(frozen=True)
class Weights:
    lexical: LexicalWeights = LexicalWeights()
    semantic: SemanticWeights = SemanticWeights()
    limit: int = 3  # DESIGN section 7: at most 3 skills

    def get(self, name: str) -> float:
        """A field by its own name (``threshold``, ``semantic_floor``, ``limit``), wherever it is."""
        value: float = getattr(self._part(name), name)
        return value

    def with_values(self, **values: Any) -> Weights:
        """These weights with fields changed by their own names (what ``bench --set`` takes).

        Names are only known at run time, so the values are checked there: a name no part has
        raises TypeError, as :func:`dataclasses.replace` does."""
        lexical = {k: v for k, v in values.items() if k in _LEXICAL}
        semantic = {k: v for k, v in values.items() if k in _SEMANTIC}
        own = {k: v for k, v in values.items() if k not in _LEXICAL | _SEMANTIC}
        return replace(
            self,
            lexical=replace(self.lexical, **lexical),
            semantic=replace(self.semantic, **semantic),
            **own,
        )

    def _part(self, name: str) -> LexicalWeights | SemanticWeights | Weights:
        return self.lexical if name in _LEXICAL else self.semantic if name in _SEMANTIC else self


DEFAULT_WEIGHTS = Weights()
