"""Candidate stages: BM25, per-skill example vectors, passages, whitening and the no-skill
reference the gate reads (pure code, a stand-in encoder)."""

from __future__ import annotations

import pytest

from skillctl.routing import gate
from skillctl.routing.manifests import build_offline
from skillctl.routing.router import Router
from skillctl.routing.scoring import BM25, ScoringIndex, rank_semantic
from skillctl.routing.text import terms
from skillctl.routing.weights import DEFAULT_WEIGHTS, LexicalWeights, SemanticWeights, Weights


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
    assert index.bm25_scores(terms("umbrella tomorrow"), LexicalWeights())[0] > 0


def test_one_keyword_and_bm25_stay_below_the_lexical_threshold():
    m = build_offline(name="k8s-deploy", description="Deploy services to Kubernetes clusters.")
    assert Router([m]).route("kubernetes") == []
    assert [x.name for x in Router([m]).route("deploy my services to the kubernetes cluster")] == ["k8s-deploy"]


def test_distinctive_name_words_are_name_words_few_installed_skills_use():
    from skillctl.routing.scoring import distinctive_name_words

    ms = [build_offline(name="apple-reminders", description="Manage Apple Reminders lists and due dates.")]
    ms += [build_offline(name=f"code-tool-{k}", description=f"Code helper number {k}.") for k in range(8)]
    index = ScoringIndex(ms)
    index.bm25_scores(terms("x"), LexicalWeights())  # the scorer builds BM25 before it asks
    assert distinctive_name_words(index, "apple-reminders", terms("remind me at 6pm, put it in reminders")) == [
        "reminder"
    ]
    assert distinctive_name_words(index, "code-tool-1", terms("explain this code")) == []  # every skill says "code"
    assert distinctive_name_words(index, "apple-reminders", terms("what's the weather")) == []
    # with few skills installed, a word is distinctive only when one skill alone uses it
    few = ScoringIndex(
        [
            build_offline(name="slack", description="Post to Slack."),
            build_offline(name="slack-gif-creator", description="Make GIFs for Slack."),
        ]
    )
    few.bm25_scores(terms("x"), LexicalWeights())
    assert distinctive_name_words(few, "slack-gif-creator", terms("a gif for slack")) == ["gif"]


def test_a_skill_named_in_passing_is_one_signal_and_a_skill_invoked_by_name_wins():
    ms = [
        build_offline(name="slack", description="Post messages to Slack channels."),
        build_offline(name="slack-gif-creator", description="Make animated GIFs sized for Slack."),
    ]
    index = ScoringIndex(ms)
    w = DEFAULT_WEIGHTS
    cosines = [0.3, 0.6]  # the message means the GIF maker

    def best(message: str):
        return rank_semantic(index, message, cosines, no_skill=0.0, w=w)[0]

    assert best("make a small looping gif that fits slack's limits").name == "slack-gif-creator"
    for invoked in ("use slack to make a looping gif", "make a looping gif with the slack skill", "/slack gif"):
        match = best(invoked)
        assert match.name == "slack" and "invoked by name" in match.reasons, invoked
    assert best("make a gif, slack-gif-creator style").name == "slack-gif-creator"  # the hyphenated name


np = pytest.importorskip("numpy")


class FakeEncoder:
    """Maps a text to a fixed unit vector by its first word (3 dimensions)."""

    table = {"pdf": [1, 0, 0], "deploy": [0, 1, 0], "hello": [0, 0, 1]}

    def encode(self, texts):
        return np.stack([self.encode_one(t) for t in texts])

    def encode_one(self, text):
        v = np.array(self.table.get(text.split()[0].lower().strip(",!?"), [0.5, 0.5, 0.7]), dtype=np.float32)
        return v / np.linalg.norm(v)


def pdf_router(weights, **manifest) -> Router:
    """One pdf skill ("Merge PDF files.") over :class:`FakeEncoder` vectors."""
    enc = FakeEncoder()
    skills = [build_offline(name="pdf-tools", description="Merge PDF files.", **manifest)]
    return Router(skills, vectors=np.stack([enc.encode_one("pdf")]), encoder=enc, weights=weights)


def test_skill_vectors_give_centroid_and_closest_example_per_skill():
    from skillctl.routing.semantic import SkillVectors

    cents = np.eye(3, dtype=np.float32)[:2]
    examples = [np.array([[0.6, 0.8, 0], [1, 0, 0]], dtype=np.float32), None]
    sv = SkillVectors.from_lists(cents, examples)
    c, best = sv.scores(np.array([0, 1, 0], dtype=np.float32))
    assert list(c) == [0, 1] and best[0] == pytest.approx(0.8) and best[1] == 1
    plain = Router(
        [build_offline(name="a", description="A."), build_offline(name="b", description="B.")], vectors=cents
    )
    assert len(plain.vectors) == 2  # a bare centroid array still works


def test_index_keeps_example_vectors_next_to_the_centroid():
    from skillctl.routing.index import Entry, RoutingIndex, add_vectors

    with_queries = build_offline(name="pdf-tools", description="Merge PDF files.", queries=["pdf merge", "deploy x"])
    entries = [
        Entry(name=m.name, path=m.name, scope="dir", fingerprint=[0, 0, 0], manifest=m)
        for m in (with_queries, build_offline(name="deployer", description="Deploy services."))
    ]
    add_vectors(entries, FakeEncoder())
    assert entries[0].examples and entries[1].examples is None
    assert "vector" not in entries[0].to_dict()  # vectors live in the sidecar file, not the main index
    restored = RoutingIndex(entries).vectors()
    assert restored.examples.shape == (3, 3) and list(restored.starts) == [0, 2]
    c, best = restored.scores(FakeEncoder().encode_one("deploy"))
    assert best[0] == pytest.approx(1, abs=1e-3) and best[1] == pytest.approx(c[1])  # centroid stands in


def test_passages_are_the_bodys_start_and_its_list_items():
    from skillctl.routing.manifests import passages

    body = (
        """# Batch Processor

This skill converts, extracts or analyses [hundreds of files](https://example.org) at once.

```
- a list item inside a code block is not a passage
```

| a | table row with - dashes |
|---|---|

- **Extract text** from all images in a folder
- Convert `100 PDFs` to Word documents
- too short
  - a nested item counts too when long enough
1. Mass update document headers and footers
- """
        + "word " * 40
        + """
"""
    )
    found = passages(body)
    assert found[0].startswith("Batch Processor This skill converts, extracts or analyses hundreds of files at once.")
    assert "code block" not in found[0] and "table row" not in found[0]
    assert found[1:] == [
        "Extract text from all images in a folder",
        "Convert 100 PDFs to Word documents",
        "a nested item counts too when long enough",
        "Mass update document headers and footers",
    ]
    assert len(found[0].split()) <= 120
    assert passages("") == [] and passages("```\nonly code\n```") == []


def test_passages_are_few_and_read_from_the_start_of_a_huge_body():
    from skillctl.routing import manifests

    huge = "- list the files in this folder now\n" * 200_000  # 7 MB of the same item
    assert manifests.passages(huge)[1:] == ["list the files in this folder now"]
    distinct = "".join(f"- item number {i} of the list\n" for i in range(100))
    assert len(manifests.passages(distinct)) == manifests.MAX_PASSAGES
    tail = "x" * manifests.PASSAGE_SCAN + "\n- an item after the part that is read\n"
    assert "an item after the part that is read" not in manifests.passages(tail)


def test_hostile_skill_bodies_are_read_in_one_pass():
    """A SKILL.md is untrusted input (the registry's manifest check reads it too): a heading of
    20,000 spaces took the old heading pattern hours (cubic backtracking), a line of 39,000 "["
    the old link pattern 20 s. Both patterns are linear now; lines are read 1,000 characters at most."""
    from skillctl.routing import manifests

    heading = manifests.headings("# a" + " " * 20_000 + "b\n## Usage ##\n")
    assert heading == ["a" + " " * (manifests.MAX_HEADING_CHARS - 1), "Usage"]
    for line in ("- " + "[" * 39_000, "intro " + "<" * 39_000, "x " + "![" * 19_000, "- " + "[a](" * 9_000):
        found = manifests.passages(line + "\n- a real item of the list\n")
        assert found[-1] == "a real item of the list"
        assert sum(map(len, found)) < 2 * manifests.PASSAGE_LINE + 100  # the hostile line, cut
    # the start and the item are the same words: one passage
    assert manifests.passages("- see [the docs](https://x.y/z), **bold** and <b>tags</b>") == [
        "see the docs, bold and tags"
    ]


def test_body_passages_are_examples_of_a_skill_without_synthetic_queries_only():
    from skillctl.routing import semantic
    from skillctl.routing.index import Entry, RoutingIndex, add_vectors

    body = "Deploy anything.\n\n- hello world from the deploy list\n"
    offline = build_offline(name="deployer", description="Deploy services.", body=body)
    with_queries = build_offline(name="pdf-tools", description="Merge PDF files.", body=body, queries=["pdf merge"])
    assert offline.passages == ["Deploy anything. hello world from the deploy list", "hello world from the deploy list"]
    entries = [
        Entry(name=m.name, path=m.name, scope="dir", fingerprint=[0, 0, 0], manifest=m) for m in (offline, with_queries)
    ]
    add_vectors(entries, FakeEncoder())
    assert entries[0].passages and entries[1].passages is None  # queries: their gate is calibrated on them
    assert "passages" not in entries[0].to_dict()  # vectors live in the sidecar
    restored = RoutingIndex(entries).vectors()
    assert list(restored.starts) == [0, 1] and restored.whiten is None  # passages are not queries
    skills, _, stacked = restored.passages
    assert list(skills) == [0] and stacked.shape == (2, 3)
    c, best = restored.scores(FakeEncoder().encode_one("hello"))
    weight = semantic.PASSAGE_WEIGHT / semantic.STATIC_SHARE**0.5  # the stand-in's vector is all "static half"
    assert best[0] == pytest.approx(weight, abs=1e-3) and best[0] > c[0]  # the passage "hello world..." is closest
    assert best[1] == pytest.approx(0, abs=1e-3)  # only its query "pdf merge": its passages are not examples


def test_an_explanation_names_the_passage_that_brought_a_skill_closest():
    from skillctl.routing.index import Entry, RoutingIndex, add_vectors

    body = "Deploy anything.\n\n- hello world from the deploy list\n- pdf files are merged here too\n"
    manifests = [
        build_offline(name="deployer", description="Deploy services.", body=body),
        build_offline(name="pdf-tools", description="Merge PDF files."),
    ]
    entries = [Entry(name=m.name, path=m.name, scope="dir", fingerprint=[0, 0, 0], manifest=m) for m in manifests]
    add_vectors(entries, FakeEncoder())
    router = Router(manifests, vectors=RoutingIndex(entries).vectors(), encoder=FakeEncoder())
    reasons = {m.name: m.reasons for m, _ in router.nearest("hello again, anyone there")}
    assert "closest passage of its SKILL.md: 'hello world from the deploy list'" in reasons["deployer"]
    assert not any("passage" in r for r in reasons["pdf-tools"])  # no body, no passage
    # the centroid closer than every passage: no passage named
    deploy = {m.name: m.reasons for m, _ in router.nearest("deployer: Deploy services.")}
    assert not any("passage" in r for r in deploy["deployer"])


def test_a_passage_counts_its_wordllama_cosine_times_the_passage_weight():
    from skillctl.routing.semantic import MINILM_DIM, PASSAGE_WEIGHT, STATIC_DIM, STATIC_SHARE, SkillVectors

    rng = np.random.default_rng(0)
    dense, static = rng.normal(size=MINILM_DIM), rng.normal(size=STATIC_DIM)
    message = np.concatenate(
        [(1 - STATIC_SHARE) ** 0.5 * dense / np.linalg.norm(dense), STATIC_SHARE**0.5 * static / np.linalg.norm(static)]
    )
    passage = static + 0.5 * rng.normal(size=STATIC_DIM)
    passage /= np.linalg.norm(passage)
    centroids = np.zeros((2, MINILM_DIM + STATIC_DIM), dtype=np.float32)
    sv = SkillVectors.from_lists(centroids, [None, None], passages=[passage[None, :], None])
    _, best = sv.scores(message.astype(np.float32))
    cosine = float(passage @ static / np.linalg.norm(static))
    assert best[0] == pytest.approx(PASSAGE_WEIGHT * cosine, abs=1e-4) and best[1] == 0


def test_no_skill_reference_scores_the_k_nearest_reference_messages():
    from skillctl.routing.semantic import NoSkillReference

    ref = NoSkillReference(np.array([[1, 0, 0], [0.8, 0.6, 0], [0, 0, 1]], dtype=np.float32))
    v = np.array([1, 0, 0], dtype=np.float32)
    assert ref.score(v, k=1) == pytest.approx(1.0)
    assert ref.score(v, k=2) == pytest.approx(0.9)
    assert ref.score(v, k=10) == pytest.approx(0.6)  # k larger than the set: all of them
    assert ref.score(v, k=0) == pytest.approx(float(np.linalg.norm([1.8, 0.6, 1]) ** -1 * 1.8), abs=1e-5)
    assert NoSkillReference(np.zeros((0, 3), dtype=np.float32)).score(v) == 0.0


def test_shipped_no_skill_reference_is_broad_and_cached():
    from skillctl.routing import semantic

    texts = semantic.no_skill_texts()
    assert len(texts) >= 800 and len(set(texts)) == len(texts)
    dev = semantic.NO_SKILL_TEXTS.parents[4] / "bench" / "data" / "no_skill_dev.txt"
    if dev.is_file():  # the bench's dev negatives are disjoint from what ships
        assert not set(texts) & {line.strip() for line in dev.read_text("utf-8").splitlines()}
    with np.load(semantic.NO_SKILL_CACHE, allow_pickle=False) as cached:
        assert cached["vectors"].shape == (len(texts), semantic.DIM) and cached["vectors"].dtype == np.float16


def test_lexical_index_file_does_not_carry_vectors(tmp_path, monkeypatch):
    import json

    from skillctl.routing import index as ri
    from skillctl.routing import semantic as sem

    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(sem, "encoder", lambda: FakeEncoder())
    skill = tmp_path / "s" / "pdf-tools"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: pdf-tools\ndescription: Merge PDF files.\n---\n")
    roots = [("dir", tmp_path / "s")]
    idx = ri.load_index([("dir", skill)], roots=roots, semantic=True)
    path = ri.index_path(roots)
    assert "vector" not in path.read_text() and ri.vectors_path(path).is_file()
    assert idx.vectors() is not None
    sidecar = json.loads(ri.vectors_path(path).read_text())
    assert list(sidecar["vectors"]) == [str(skill)]
    lexical = ri.load_index([("dir", skill)], roots=roots, semantic=False)
    assert lexical.entries[0].vector is None  # the lexical path never reads the sidecar
    again = ri.load_index([("dir", skill)], roots=roots, semantic=True)
    assert again.entries[0].vector == idx.entries[0].vector


def _clustered(rng, dim=16, per_skill=20):
    """Two skills whose means differ along e1 and whose queries vary a lot along u = (e1 + e2)/sqrt 2
    (wording shared by every skill), plus 28 filler skills that vary along u the same way."""
    u = np.zeros(dim, dtype=np.float32)
    u[1] = u[2] = 2**-0.5
    means = [np.eye(dim, dtype=np.float32)[0] + s * 0.15 * np.eye(dim, dtype=np.float32)[1] for s in (1, -1)]
    means += [
        np.eye(dim, dtype=np.float32)[0] + 0.3 * np.eye(dim, dtype=np.float32)[3 + k % (dim - 3)] for k in range(28)
    ]
    spread = np.linspace(-0.8, 0.8, per_skill)[:, None]  # zero mean: the centroids stay on the means
    groups = [m + rng.permutation(spread) * u + rng.normal(0, 0.02, (per_skill, dim)) for m in means]
    return means, [g.astype(np.float32) for g in groups], u


def test_whitening_separates_skills_that_plain_cosine_confuses():
    from skillctl.routing.semantic import SkillVectors, centroid, whitening

    rng = np.random.default_rng(0)
    means, groups, u = _clustered(rng)
    sv = SkillVectors.from_lists([centroid(g) for g in groups], groups)
    assert sv.whiten is not None and sv.whiten.shape == (16, 16)
    assert np.allclose(sv.whiten, sv.whiten.T, atol=1e-4)
    # A query of skill 0 pushed along the shared wording direction: plain cosine prefers skill 1.
    query = means[0] - 0.5 * u
    query /= np.linalg.norm(query)
    plain, _ = sv.scores(query)
    white, _ = sv.whitened_scores(query)
    assert plain[1] > plain[0]
    assert white[0] > white[1] and int(np.argmax(white)) == 0
    # On held-out queries of the two close skills, whitening is right more often than cosine.
    held = _clustered(np.random.default_rng(1))[1][:2]
    right = {"plain": 0, "white": 0}
    for label, g in enumerate(held):
        for q in g / np.linalg.norm(g, axis=1, keepdims=True):
            right["plain"] += int(np.argmax(sv.scores(q)[0][:2]) == label)
            right["white"] += int(np.argmax(sv.whitened_scores(q)[0][:2]) == label)
    assert right["white"] > right["plain"] and right["white"] >= 0.9 * 2 * len(held[0])
    # W^T Sw' W = I: the shrunk within-skill covariance is whitened.
    w = whitening(groups, shrinkage=0.0)
    deviations = np.concatenate([g - g.mean(axis=0) for g in groups]).astype(np.float64)
    within = deviations.T @ deviations / (len(deviations) - len(groups))
    assert np.allclose(w @ within @ w, np.eye(16), atol=1e-3)


def test_whitening_falls_back_to_plain_cosine_with_few_skills():
    from skillctl.routing.semantic import WHITENING_MIN_SKILLS, SkillVectors, centroid, whitening

    rng = np.random.default_rng(0)
    _, groups, _ = _clustered(rng)
    few = groups[: WHITENING_MIN_SKILLS - 1]
    assert whitening(few) is None
    sv = SkillVectors.from_lists([centroid(g) for g in few], few)
    assert sv.whiten is None and sv.whitened_scores(few[0][0]) is None
    # skills without synthetic queries (offline manifests) do not count towards the minimum
    assert whitening([*few, None, groups[-1][:1]]) is None
    assert whitening(groups, min_skills=len(groups)) is not None


def test_whitened_scores_change_the_rank_not_the_evidence():
    ms = [build_offline(name=n, description=f"{n} things.") for n in ("alpha", "beta")]
    index = ScoringIndex(ms)
    w = Weights(semantic=SemanticWeights(example_weight=0.0, whitened_weight=1.0))
    got = rank_semantic(index, "something", [0.7, 0.6], whitened=[0.1, 0.9], no_skill=0.1, w=w)
    assert [m.name for m in got] == ["beta", "alpha"]
    assert got[0].components["evidence"] == pytest.approx(0.6) and got[0].components["whitened"] == pytest.approx(0.9)
    assert any("whitened 0.900" in r for r in got[0].reasons)


def test_a_long_message_is_as_close_to_a_skill_as_its_closest_sentence():
    router = pdf_router(DEFAULT_WEIGHTS.with_values(semantic_mention=0.0, no_skill_k=1))
    [whole], _ = router.candidates("hello there friend, merge these files please")
    assert whole.components["semantic"] < 0.9  # one sentence, far from the skill
    [match], evidence = router.candidates("hello there friend. pdf merge these files please")
    assert match.components["semantic"] == pytest.approx(1.0)
    assert evidence.views[int(evidence.closest[0])] == "pdf merge these files please"
    # ... and as chatty as its chattiest sentence: "hello there" is a no-skill reference message
    assert evidence.no_skill == pytest.approx(1.0)
    # A skill with synthetic queries keeps whole-message scoring.
    [queried], _ = pdf_router(DEFAULT_WEIGHTS, queries=["pdf merge"]).candidates("hello there friend. pdf merge it")
    assert queried.components["semantic"] < 0.9


def test_candidates_carry_the_no_skill_likeness_the_gate_reads():
    enc = FakeEncoder()
    router = pdf_router(DEFAULT_WEIGHTS.with_values(no_skill_k=1))
    assert router.no_skill().score(enc.encode_one("hello"), 1) == pytest.approx(1.0)  # "hello there" is in the set
    [match], evidence = router.candidates("pdf merge")
    assert 0 < match.components["no_skill"] == evidence.no_skill < 1
    # ... and the skill's own likeness to them: its centroid's (a chat-like stated use is judged by it)
    assert match.components["skill_no_skill"] == pytest.approx(router.no_skill().score(router.vectors.centroids[0], 1))
    features = dict(zip(gate.FEATURES, router.gate_features("pdf merge", [match], evidence)[0], strict=True))
    assert features["no_skill"] == evidence.no_skill
