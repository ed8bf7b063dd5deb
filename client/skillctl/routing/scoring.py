"""Ranking as other parts of Skillyard call it (the registry's search ranks with these).

Routing is a pipeline (:mod:`skillctl.routing.router`); the ranking functions live in its
candidate stages: :mod:`skillctl.routing.lexical` and :mod:`skillctl.routing.candidates`.
"""

from skillctl.routing.candidates import distinctive_name_words, rank_semantic
from skillctl.routing.lexical import BM25, ScoringIndex, keyword_weight, lexical_hits, rank_lexical
from skillctl.routing.match import Match, Stage

__all__ = [
    "BM25",
    "Match",
    "ScoringIndex",
    "Stage",
    "distinctive_name_words",
    "keyword_weight",
    "lexical_hits",
    "rank_lexical",
    "rank_semantic",
]
