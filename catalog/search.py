"""Catalog search ranked by what the user wants to do: the routing engine's scoring over each
skill's routing manifest (the manifest check's, else one built from its summary), so "rotate the
pages of a pdf" finds a PDF skill whose name says nothing of rotating. With the semantic extra
the manifest check also stores each version's centroid vector, and search ranks as semantic
routing does (``rank_semantic``): "make my pictures smaller" finds an image-resizing skill.
Vectors are only read here, never computed on a request (one query encode, ~5 ms, is)."""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, overload

from django.db.models import CharField
from django.db.models.functions import Cast

from skillctl.routing import semantic
from skillctl.routing.manifests import build_offline, merge_registry
from skillctl.routing.scoring import Match, ScoringIndex, rank_lexical, rank_semantic
from skillctl.routing.spelling import Speller
from skillctl.routing.weights import DEFAULT_WEIGHTS

MAX_RESULTS = 500  # a search shows pages of these; nobody reads further
_LOCK = threading.Lock()
# A skill is a result when it matches lexically or its semantic evidence (1.5 x the centroid
# cosine: no example vectors are stored) reaches this. Routing's semantic_floor (0.40) is too low
# for a search box: over 1,000 corpus skills, gibberish ("asdkjh qweoiu", "zzzz zzzz") and lone
# words ("hello", "the") reached 0.22-0.43 with MiniLM + WordLlama vectors (0.47 with MiniLM
# alone), while queries meaning a skill scored 0.47-0.89 for it.
SEMANTIC_FLOOR = 0.50
# Skills scored in full for their meaning (every lexical match is scored too): scoring all of
# 1,000 costs ~10 ms a query; more than this many above the floor are weak matches anyway.
SEMANTIC_CANDIDATES = 100


@dataclass(frozen=True)
class Compiled:
    """A candidate set's scoring index, the speller of its words (typos in a query are read as
    them), and, with semantic search, its centroids in index order (a (n, semantic.DIM) float32
    matrix, zeros for a skill without a vector; None when none has one)."""

    index: ScoringIndex
    speller: Speller
    vectors: Any = None


_INDEXES: OrderedDict[tuple, Compiled] = OrderedDict()
INDEX_CACHE_SIZE = 8  # compiled indexes kept (a few visibility sets: anonymous, a few members)


def _index(key: tuple, load) -> Compiled:  # noqa: ANN001
    """The compiled scoring index of the skills ``key`` names (semantic on, then (id, updated_at)
    pairs), reused while none of them changed (building one for 1,000 skills takes ~0.25 s;
    scoring a query on it ~1 ms). ``load()`` gives (skills, {id: (manifest, vector)})."""
    with _LOCK:
        if key in _INDEXES:
            _INDEXES.move_to_end(key)
            return _INDEXES[key]
    skills, routing_of = load()
    by_id = {s.id: s for s in skills}
    ids = [skill_id for skill_id, _ in key[1:]]
    routing = []
    for skill_id in ids:
        skill = by_id[skill_id]
        offline = build_offline(
            name=skill.name,
            description=skill.description,
            category=skill.category,
            trigger_keywords=list(skill.tags or []),
        )
        data = routing_of.get(skill.id, (None, None))[0]
        routing.append(merge_registry(offline, data) if data else offline)
    vectors = [routing_of.get(i, (None, None))[1] for i in ids] if key[0] else []
    compiled = Compiled(ScoringIndex(routing), Speller.of(routing), _stacked(vectors))
    with _LOCK:
        _INDEXES[key] = compiled
        while len(_INDEXES) > INDEX_CACHE_SIZE:
            _INDEXES.popitem(last=False)
    return compiled


def _stacked(vectors: list[bytes | memoryview | None]) -> Any:
    """The centroids as one matrix (zeros where a skill has none or one of another size)."""
    if not any(vectors):
        return None
    import numpy as np

    matrix = np.zeros((len(vectors), semantic.DIM), dtype=np.float32)
    for row, raw in enumerate(vectors):
        if raw and len(raw) == matrix.shape[1] * 4:
            matrix[row] = np.frombuffer(bytes(raw), dtype=np.float32)
    return matrix


def _scores(compiled: Compiled, q: str, query_vector: Future | None) -> dict[str, float]:
    """Skill name -> score of the skills the query finds (lexical or semantic evidence)."""
    weights = replace(DEFAULT_WEIGHTS, limit=MAX_RESULTS)
    if compiled.vectors is None or query_vector is None:
        return {m.name: m.score for m in rank_lexical(compiled.index, q, w=weights, gated=False)}
    cosines = compiled.vectors @ query_vector.result()
    matches = rank_semantic(compiled.index, q, cosines, gated=False, w=weights, candidates=SEMANTIC_CANDIDATES)
    return {m.name: m.score for m in matches if _found(m)}


def _encode_soon(q: str) -> Future | None:
    """The query's vector, encoded in the background while the request reads the candidates
    (the encode runs in ONNX Runtime and the read in SQLite or PostgreSQL, both without the GIL);
    one encoding thread, so encodes never run side by side."""
    global _ENCODING
    if not semantic.available():
        return None
    with _LOCK:
        if _ENCODING is None:
            _ENCODING = ThreadPoolExecutor(max_workers=1, thread_name_prefix="catalog-encode")
    return _ENCODING.submit(_query_vector, q)


_ENCODING: ThreadPoolExecutor | None = None


@functools.lru_cache(maxsize=512)
def _query_vector(q: str) -> Any:
    """The query's vector (one encode, ~5 ms), kept for the pages, sorts and filters of the same
    search that follow it."""
    vector = semantic.encoder().encode_one(q)
    vector.setflags(write=False)  # shared between requests
    return vector


def _found(match: Match) -> bool:
    c = match.components
    return c["lexical"] > 0 or c["bm25"] > 0 or c["evidence"] >= SEMANTIC_FLOOR


class Ranked(Sequence):
    """Search results in order, loading only the rows a page shows (a query may find hundreds;
    a page shows twenty). ``Paginator`` takes it like a list."""

    def __init__(self, skills, names: list[str], read_as: str = "") -> None:  # noqa: ANN001
        self.skills, self.names = skills, names
        self.read_as = read_as  # the query with its typos read as the skills' words, when it had any

    def __len__(self) -> int:
        return len(self.names)

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list: ...
    def __getitem__(self, index):  # noqa: ANN001, ANN204
        names = [self.names[index]] if isinstance(index, int) else self.names[index]
        by_name = {skill.name: skill for skill in self.skills.filter(name__in=names)}
        loaded = [by_name[name] for name in names if name in by_name]
        return loaded[0] if isinstance(index, int) else loaded


def rank(skills, routing_of, q: str, sort: str = "relevance") -> Ranked:  # noqa: ANN001
    """The skills of the queryset ``skills`` matching ``q``, best first (an exact or partial
    name match first of all), or by ``sort`` (downloads, updated, name). Per query only (id,
    name, updated_at, downloads) of the candidates is read, then the rows a page shows; the
    index is built again only when a candidate changed (a publish, a yank, a finished manifest
    check all touch the skill's updated_at). ``routing_of(skills)`` gives {id: (routing
    manifest or None, vector bytes or None)}."""
    query_vector = _encode_soon(q)
    # updated_at as the database's own text: a key and an order, without parsing 1,000 datetimes.
    touched = Cast("updated_at", output_field=CharField())
    rows = list(skills.annotate(touched=touched).values_list("id", "name", "touched", "downloads")[: MAX_RESULTS * 4])
    if not rows:
        return Ranked(skills, [])
    key = (semantic.available(), *((skill_id, updated) for skill_id, _, updated, _ in rows))

    def load():  # noqa: ANN202
        full = list(skills.filter(id__in=[skill_id for skill_id, _ in key[1:]]))
        return full, routing_of(full)

    compiled = _index(key, load)
    read_as, typos = compiled.speller.correct(q)  # "kubernets": kubernetes, the skills' word
    if typos and query_vector is not None:
        query_vector = _encode_soon(read_as)
    scores = _scores(compiled, read_as, query_vector)
    lowered = q.strip().lower()
    for _, name, _, _ in rows:
        if lowered and lowered in name:
            scores[name] = scores.get(name, 0) + (100 if name == lowered else 10)
    found = [row for row in rows if scores.get(row[1], 0) > 0]
    orders = {
        "relevance": lambda row: (-scores[row[1]], -row[3], row[1]),
        "downloads": lambda row: (-row[3], row[1]),
        "name": lambda row: (row[1],),
    }
    if sort == "updated":  # newest first (the timestamps' text sorts like them), then by name
        found.sort(key=lambda row: row[1])
        found.sort(key=lambda row: row[2], reverse=True)
    else:
        found.sort(key=orders.get(sort, orders["relevance"]))
    return Ranked(skills, [row[1] for row in found], read_as if typos else "")
