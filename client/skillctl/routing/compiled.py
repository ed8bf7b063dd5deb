"""A routing manifest compiled for scoring: its words stemmed once, at index time. Pure code.

The routing index (:mod:`skillctl.routing.index`) keeps each skill's :class:`CompiledManifest`,
so loading an unchanged skill stems nothing; :class:`scoring.ScoringIndex` builds its postings
from them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skillctl.routing.manifests import RoutingManifest
from skillctl.routing.text import STOPWORDS, split_name, stem, terms


def bm25_document(m: RoutingManifest) -> dict[str, int]:
    """The skill's own words for BM25: name, description, keywords, phrases, triggers, queries."""
    name = [stem(w) for w in split_name(m.name) if w not in STOPWORDS]
    parts = [m.description, *m.keywords, *m.phrases, *m.trigger_words, *m.queries]
    return dict(Counter(name + [t for part in parts for t in terms(part)]))


@dataclass(frozen=True)
class CompiledManifest:
    """A manifest's words as the scorer matches them, stemmed once at index time (the routing
    index keeps it, so loading an unchanged skill stems nothing)."""

    bm25: Mapping[str, int]  # the skill's own words and their counts (:func:`bm25_document`)
    keywords: tuple[str, ...]  # one-word keywords, sorted
    phrases: tuple[tuple[str, ...], ...]  # multi-word keywords, then phrases; each once
    triggers: tuple[tuple[str, ...], ...]  # the author's trigger words, each once
    name: tuple[str, ...]  # the name's words, as a message mentions them ("pdf editor")
    negative: tuple[str, ...]  # the negative constraint's words that are not keywords, sorted
    trigger_verbs: tuple[tuple[str, ...], ...] = ()  # those of ``triggers`` that are verbs

    def to_dict(self) -> dict[str, Any]:
        """JSON for the routing index (lists, as json would write tuples anyway)."""
        return {
            "bm25": dict(self.bm25),
            "keywords": list(self.keywords),
            "phrases": [list(p) for p in self.phrases],
            "triggers": [list(p) for p in self.triggers],
            "name": list(self.name),
            "negative": list(self.negative),
            "trigger_verbs": [list(p) for p in self.trigger_verbs],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CompiledManifest:
        return cls(
            bm25=data["bm25"],
            keywords=tuple(data["keywords"]),
            phrases=tuple(tuple(p) for p in data["phrases"]),
            triggers=tuple(tuple(p) for p in data["triggers"]),
            name=tuple(data["name"]),
            negative=tuple(data["negative"]),
            trigger_verbs=tuple(tuple(p) for p in data.get("trigger_verbs", ())),
        )


def compile_manifest(m: RoutingManifest) -> CompiledManifest:
    """A manifest's words as the scorer matches them (stemmed once, at index time)."""
    split = [terms(kw) for kw in m.keywords]
    keywords = {ts[0] for ts in split if len(ts) == 1}
    phrases = [ts for ts in split if len(ts) > 1] + [ts for p in m.phrases if len(ts := terms(p)) > 1]
    return CompiledManifest(
        bm25=bm25_document(m),
        keywords=tuple(sorted(keywords)),
        phrases=tuple(dict.fromkeys(tuple(p) for p in phrases)),
        triggers=tuple(p for p in dict.fromkeys(tuple(terms(w)) for w in m.trigger_words) if p),
        name=tuple(split_name(m.name)),
        negative=tuple(sorted(set(terms(m.negative)) - keywords)),
        trigger_verbs=tuple(p for p in dict.fromkeys(tuple(terms(w)) for w in m.trigger_verbs) if p),
    )
