"""One search for every surface: the catalog's /skills, the API's ``GET /skills?q=``, ``skillctl
search`` (through the API), ``npx skills find`` and ``clawhub search`` (registry/api/compat.py)
all rank with :func:`skill_search`, so a request finds the same skills in the same order
everywhere, under the one visibility rule (``selectors.skill_list_visible``).

Ranked by what the user wants to do: the routing engine's scoring over each skill's routing
manifest (the manifest check's, else one built from its summary), so "rotate the pages of a pdf"
finds a PDF skill whose name says nothing of rotating. With the semantic extra the manifest check
also stores each version's centroid vector, and search ranks as semantic routing does
(``rank_semantic``): "make my pictures smaller" finds an image-resizing skill. Vectors are only
read here, never computed on a request (one query encode, ~5 ms, is).

Each result carries a match strength: ``strong`` when the query asks for the skill (lexical
points at routing's threshold, semantic evidence where queries meaning a skill reach, or the
query in the skill's name), else ``weak``: a nearest miss, which the surfaces say as such
("no close match; nearest: ...").
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, overload

from django.db.models import CharField, QuerySet
from django.db.models.functions import Cast

from registry import selectors
from registry.access import Actor
from registry.models import Skill, SkillVersion
from skillctl.routing import semantic
from skillctl.routing.manifests import build_offline, merge_registry
from skillctl.routing.scoring import Match, ScoringIndex, rank_lexical, rank_semantic
from skillctl.routing.spelling import Speller
from skillctl.routing.weights import DEFAULT_WEIGHTS

MAX_RESULTS = 500  # a search shows pages of these; nobody reads further
MAX_QUERY_CHARS = 200  # a search box's worth; longer text is a paste, not a request
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
# What makes a match strong rather than a nearest miss: lexically, routing's own threshold (one
# shared word is below it, DESIGN §7); semantically, SEMANTIC_FLOOR, the evidence queries meaning
# a skill reached (a skill found below it was found by a shared word alone: "zip my files" ->
# an image skill whose description says "file size").
STRONG_LEXICAL = DEFAULT_WEIGHTS.get("threshold")
STRONG_EVIDENCE = SEMANTIC_FLOOR
# Score added when the query is the skill's name, or part of it: a name asked for ranks first.
EXACT_NAME_BONUS, PARTIAL_NAME_BONUS = 100.0, 10.0
SORTS = ("relevance", "downloads", "updated", "name")
STRONG, WEAK = "strong", "weak"


@dataclass(frozen=True)
class Hit:
    """How one found skill matched: its score and whether routing would pick it (``strong``)."""

    name: str
    score: float
    strong: bool

    def to_dict(self) -> dict[str, Any]:
        return {"strength": STRONG if self.strong else WEAK, "score": round(self.score, 4)}


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


def _routing_of(skills: list[Skill]) -> dict[int, tuple[dict | None, bytes | memoryview | None]]:
    """Each skill's default version's routing manifest and vector (two narrow queries); no vector
    where another embedder made it (before an upgrade: `rerun_checks --vectors` makes it again)."""
    latest = selectors.skill_latest_versions(skill_ids=[s.id for s in skills])
    rows = (
        SkillVersion.objects.live()
        .filter(skill_id__in=list(latest))
        .values_list("skill_id", "version", "routing_manifest", "routing_vector", "routing_vector_model")
    )
    return {
        sid: (manifest, vector if model in ("", semantic.MODEL_ID) else None)
        for sid, version, manifest, vector, model in rows
        if latest.get(sid) == version
    }


def _hits(compiled: Compiled, q: str, query_vector: Future | None) -> dict[str, Hit]:
    """Skill name -> how it matched, for the skills the query finds (lexical or semantic evidence)."""
    weights = replace(DEFAULT_WEIGHTS, limit=MAX_RESULTS)
    if compiled.vectors is None or query_vector is None:
        matches = rank_lexical(compiled.index, q, w=weights, gated=False)
    else:
        cosines = compiled.vectors @ query_vector.result()
        found = rank_semantic(compiled.index, q, cosines, gated=False, w=weights, candidates=SEMANTIC_CANDIDATES)
        matches = [m for m in found if _found(m)]
    return {m.name: Hit(m.name, m.score, _strong(m)) for m in matches}


def _found(match: Match) -> bool:
    c = match.components
    return c["lexical"] > 0 or c["bm25"] > 0 or c["evidence"] >= SEMANTIC_FLOOR


def _strong(match: Match) -> bool:
    c = match.components
    return c["lexical"] + c["bm25"] >= STRONG_LEXICAL or c.get("evidence", 0.0) >= STRONG_EVIDENCE


def _encode_soon(q: str) -> Future | None:
    """The query's vector, encoded in the background while the request reads the candidates
    (the encode runs in ONNX Runtime and the read in SQLite or PostgreSQL, both without the GIL);
    one encoding thread, so encodes never run side by side."""
    global _ENCODING
    if not semantic.available():
        return None
    with _LOCK:
        if _ENCODING is None:
            _ENCODING = ThreadPoolExecutor(max_workers=1, thread_name_prefix="search-encode")
    return _ENCODING.submit(_query_vector, q)


_ENCODING: ThreadPoolExecutor | None = None


@functools.lru_cache(maxsize=512)
def _query_vector(q: str) -> Any:
    """The query's vector (one encode, ~5 ms), kept for the pages, sorts and filters of the same
    search that follow it."""
    vector = semantic.encoder().encode_one(q)
    vector.setflags(write=False)  # shared between requests
    return vector


class Ranked(Sequence):
    """Search results in order, loading only the rows a page shows (a query may find hundreds;
    a page shows twenty). ``Paginator`` takes it like a list. Each loaded skill carries its
    :class:`Hit` as ``skill.match``."""

    def __init__(self, skills: QuerySet[Skill], hits: list[Hit], read_as: str = "") -> None:
        self.skills, self.hits = skills, hits
        self.read_as = read_as  # the query with its typos read as the skills' words, when it had any

    @property
    def names(self) -> list[str]:
        return [hit.name for hit in self.hits]

    @property
    def weak(self) -> bool:
        """Found something, but nothing routing would pick: "no close match; nearest: ..."."""
        return bool(self.hits) and not any(hit.strong for hit in self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list: ...
    def __getitem__(self, index):  # noqa: ANN001, ANN204
        hits = [self.hits[index]] if isinstance(index, int) else self.hits[index]
        by_name = {skill.name: skill for skill in self.skills.filter(name__in=[h.name for h in hits])}
        loaded = []
        for hit in hits:
            if hit.name in by_name:
                by_name[hit.name].match = hit
                loaded.append(by_name[hit.name])
        return loaded[0] if isinstance(index, int) else loaded


def skill_search(
    *, actor: Actor, q: str = "", owner: str = "", category: str = "", tag: str = "", sort: str = ""
) -> QuerySet[Skill] | Ranked:
    """The skills ``actor`` may see, filtered by owner, category and tag: without ``q`` a
    queryset in ``sort`` order (downloads by default); with ``q`` the ranked search
    (:func:`rank`)."""
    skills = selectors.skill_list_visible(actor=actor, owner=owner, category=category, tag=tag)
    q = q.strip()[:MAX_QUERY_CHARS]
    if q:
        return rank(skills, q, sort=sort or "relevance")
    orders = {"updated": ("-updated_at", "name"), "name": ("name",)}
    return skills.order_by(*orders[sort]) if sort in orders else skills


def rank(skills: QuerySet[Skill], q: str, sort: str = "relevance") -> Ranked:
    """The skills of the queryset ``skills`` matching ``q``, best first (an exact or partial
    name match first of all), or by ``sort`` (downloads, updated, name). Per query only (id,
    name, updated_at, downloads) of the candidates is read, then the rows a page shows; the
    index is built again only when a candidate changed (a publish, a yank, a finished manifest
    check all touch the skill's updated_at)."""
    query_vector = _encode_soon(q)
    # updated_at as the database's own text: a key and an order, without parsing 1,000 datetimes.
    touched = Cast("updated_at", output_field=CharField())
    rows = list(skills.annotate(touched=touched).values_list("id", "name", "touched", "downloads")[: MAX_RESULTS * 4])
    if not rows:
        return Ranked(skills, [])
    key = (semantic.available(), *((skill_id, updated) for skill_id, _, updated, _ in rows))

    def load():  # noqa: ANN202
        full = list(skills.filter(id__in=[skill_id for skill_id, _ in key[1:]]))
        return full, _routing_of(full)

    compiled = _index(key, load)
    read_as, typos = compiled.speller.correct(q)  # "kubernets": kubernetes, the skills' word
    if typos and query_vector is not None:
        query_vector = _encode_soon(read_as)
    hits = _hits(compiled, read_as, query_vector)
    _add_name_matches(hits, q, [name for _, name, _, _ in rows])
    found = [row for row in rows if row[1] in hits and hits[row[1]].score > 0]
    _sort(found, hits, sort)
    return Ranked(skills, [hits[row[1]] for row in found], read_as if typos else "")


def _add_name_matches(hits: dict[str, Hit], q: str, names: list[str]) -> None:
    """The query as a skill's name, or part of it: first of all, and a strong match."""
    lowered = q.strip().lower()
    for name in names:
        if lowered and lowered in name:
            bonus = EXACT_NAME_BONUS if name == lowered else PARTIAL_NAME_BONUS
            hits[name] = Hit(name, (hits[name].score if name in hits else 0.0) + bonus, True)


def _sort(found: list[tuple], hits: dict[str, Hit], sort: str) -> None:
    """Rows (id, name, updated, downloads) in place: by relevance (then downloads, name), or
    downloads, updated (newest first) or name."""
    orders = {
        "relevance": lambda row: (-hits[row[1]].score, -row[3], row[1]),
        "downloads": lambda row: (-row[3], row[1]),
        "name": lambda row: (row[1],),
    }
    if sort == "updated":  # newest first (the timestamps' text sorts like them), then by name
        found.sort(key=lambda row: row[1])
        found.sort(key=lambda row: row[2], reverse=True)
    else:
        found.sort(key=orders.get(sort, orders["relevance"]))
