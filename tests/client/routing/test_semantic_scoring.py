"""BM25, per-skill example vectors and the "no skill" gate (pure code, a stand-in encoder)."""

from __future__ import annotations

import pytest

from skillctl.routing.manifests import build_offline
from skillctl.routing.router import Router
from skillctl.routing.scoring import BM25, ScoringIndex, Weights, passes_gate, rank_semantic
from skillctl.routing.text import terms


def test_bm25_is_normalised_by_the_best_possible_score_for_the_message():
    bm = BM25([{"pdf": 2, "merge": 1}, {"kubernet": 1, "deploy": 1}])
    full = bm.scores(terms("merge pdf"))
    assert set(full) == {0} and 0 < full[0] < 1
    # a word no skill knows counts in the denominator: the same match explains less of the message
    assert bm.scores(terms("merge pdf tonight banana"))[0] < full[0]
    assert bm.scores(terms("hello banana")) == {}
    assert bm.scores(terms("merge something")) and bm.scores(terms("merge something"), min_terms=2) == {}


def test_bm25_document_covers_queries_and_description():
    m = build_offline(name="weather", description="Forecasts.", queries=["Do I need an umbrella tomorrow?"])
    index = ScoringIndex([m])
    assert "umbrella" in index.documents[0] and "forecast" in index.documents[0]
    assert index.bm25_scores(terms("umbrella tomorrow"), Weights())[0] > 0


def test_one_keyword_and_bm25_stay_below_the_lexical_threshold():
    m = build_offline(name="k8s-deploy", description="Deploy services to Kubernetes clusters.")
    assert Router([m]).route("kubernetes") == []
    assert [x.name for x in Router([m]).route("deploy my services to the kubernetes cluster")] == ["k8s-deploy"]


def test_gate_uses_evidence_and_likeness_to_generic_chat():
    w = Weights(semantic_threshold=0.5, no_skill_weight=1.0, no_skill_threshold=0.3)
    assert passes_gate(0.9, 0.2, w)
    assert not passes_gate(0.45, 0.0, w)  # too weak
    assert not passes_gate(0.7, 0.5, w)  # strong, but just as close to small talk


np = pytest.importorskip("numpy")


class FakeEncoder:
    """Maps a text to a fixed unit vector by its first word (3 dimensions)."""

    table = {"pdf": [1, 0, 0], "deploy": [0, 1, 0], "hello": [0, 0, 1]}

    def encode(self, texts):
        return np.stack([self.encode_one(t) for t in texts])

    def encode_one(self, text):
        v = np.array(self.table.get(text.split()[0].lower().strip(",!?"), [0.5, 0.5, 0.7]), dtype=np.float32)
        return v / np.linalg.norm(v)


def test_skill_vectors_give_centroid_and_closest_example_per_skill():
    from skillctl.routing.semantic import SkillVectors

    cents = np.eye(3, dtype=np.float32)[:2]
    examples = [np.array([[0.6, 0.8, 0], [1, 0, 0]], dtype=np.float32), None]
    sv = SkillVectors.from_lists(cents, examples)
    c, best = sv.scores(np.array([0, 1, 0], dtype=np.float32))
    assert list(c) == [0, 1] and best[0] == pytest.approx(0.8) and best[1] == 1
    plain = Router([build_offline(name="a", description="A."), build_offline(name="b", description="B.")], vectors=cents)
    assert len(plain.vectors) == 2  # a bare centroid array still works


def test_semantic_routing_gates_small_talk_and_keeps_reasons():
    ms = [build_offline(name="pdf-tools", description="Merge PDF files."),
          build_offline(name="deployer", description="Deploy services.")]
    enc = FakeEncoder()
    router = Router(ms, vectors=np.stack([enc.encode_one("pdf"), enc.encode_one("deploy")]), encoder=enc,
                    weights=Weights(semantic_threshold=0.8, no_skill_threshold=0.5))
    [match] = router.route("pdf merge these files please")
    assert match.name == "pdf-tools" and any(r.startswith("semantic 1.000") for r in match.reasons)
    assert {"evidence", "no_skill", "bm25"} <= set(match.components)
    assert router.route("hello there, how are you") == []


def test_rank_semantic_followers_need_the_floor():
    ms = [build_offline(name=n, description=f"{n} things.") for n in ("alpha", "beta", "gamma")]
    index = ScoringIndex(ms)
    w = Weights(semantic_threshold=0.5, no_skill_threshold=0.0, semantic_floor=0.45, example_weight=0.0)
    got = rank_semantic(index, "something", [0.9, 0.5, 0.2], no_skill=0.1, w=w)
    assert [m.name for m in got] == ["alpha", "beta"]
    assert rank_semantic(index, "something", [0.4, 0.3, 0.2], no_skill=0.1, w=w) == []


def test_index_keeps_example_vectors_next_to_the_centroid():
    from skillctl.routing.index import Entry, RoutingIndex, add_vectors

    with_queries = build_offline(name="pdf-tools", description="Merge PDF files.", queries=["pdf merge", "deploy x"])
    entries = [Entry(name=m.name, path=m.name, scope="dir", fingerprint=[0, 0, 0], manifest=m)
               for m in (with_queries, build_offline(name="deployer", description="Deploy services."))]
    add_vectors(entries, FakeEncoder())
    assert entries[0].examples and entries[1].examples is None
    restored = RoutingIndex([Entry.from_dict(e.to_dict()) for e in entries]).vectors()
    assert restored.examples.shape == (3, 3) and list(restored.starts) == [0, 2]
    c, best = restored.scores(FakeEncoder().encode_one("deploy"))
    assert best[0] == pytest.approx(1, abs=1e-3) and best[1] == pytest.approx(c[1])  # centroid stands in
