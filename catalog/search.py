"""Catalog search ranked by what the user wants to do: the routing engine's lexical scoring
over each skill's routing manifest (the manifest check's, else one built from its summary), so
"rotate the pages of a pdf" finds a PDF skill whose name says nothing of rotating."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace

from skillctl.routing.manifests import build_offline, merge_registry
from skillctl.routing.scoring import ScoringIndex, rank_lexical
from skillctl.routing.weights import DEFAULT_WEIGHTS

MAX_RESULTS = 500  # a search shows pages of these; nobody reads further
_LOCK = threading.Lock()


_INDEXES: OrderedDict[tuple, ScoringIndex] = OrderedDict()
INDEX_CACHE_SIZE = 8  # compiled indexes kept (a few visibility sets: anonymous, a few members)


def _index(key: tuple, load) -> ScoringIndex:  # noqa: ANN001
    """The compiled scoring index of the skills ``key`` names ((id, updated_at) pairs), reused
    while none of them changed (building one for 1,000 skills takes ~0.25 s; scoring a query on
    it ~1 ms). ``load()`` gives (skills, manifests) when it must be built."""
    with _LOCK:
        if key in _INDEXES:
            _INDEXES.move_to_end(key)
            return _INDEXES[key]
    skills, manifests = load()
    by_id = {s.id: s for s in skills}
    routing = []
    for skill_id, _ in key:
        skill = by_id[skill_id]
        offline = build_offline(
            name=skill.name,
            description=skill.description,
            category=skill.category,
            trigger_keywords=list(skill.tags or []),
        )
        data = manifests.get(skill.id)
        routing.append(merge_registry(offline, data) if data else offline)
    index = ScoringIndex(routing)
    with _LOCK:
        _INDEXES[key] = index
        while len(_INDEXES) > INDEX_CACHE_SIZE:
            _INDEXES.popitem(last=False)
    return index


def rank(skills, manifests_of, q: str) -> list:  # noqa: ANN001
    """The skills of the queryset ``skills`` matching ``q``, best first (an exact or partial
    name match first of all). Per query only (id, name, updated_at) of the candidates is read,
    plus the rows that match; the index is built again only when a candidate changed (a publish,
    a yank, a finished manifest check all touch the skill's updated_at)."""
    rows = list(skills.values_list("id", "name", "updated_at")[: MAX_RESULTS * 4])
    if not rows:
        return []
    key = tuple((skill_id, updated.timestamp()) for skill_id, _, updated in rows)

    def load():  # noqa: ANN202
        full = list(skills.filter(id__in=[skill_id for skill_id, _ in key]))
        return full, manifests_of(full)

    index = _index(key, load)
    weights = replace(DEFAULT_WEIGHTS, limit=MAX_RESULTS)
    scores = {m.name: m.score for m in rank_lexical(index, q, w=weights, gated=False)}
    lowered = q.strip().lower()
    for _, name, _ in rows:
        if lowered and lowered in name:
            scores[name] = scores.get(name, 0) + (100 if name == lowered else 10)
    found = list(skills.filter(name__in=[name for name, score in scores.items() if score > 0]))
    return sorted(found, key=lambda s: (-scores[s.name], -s.downloads, s.name))
