"""The routing encoder: MiniLM and WordLlama side by side in one vector (routing/semantic.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from skillctl.routing import semantic

pytestmark = pytest.mark.skipif(not semantic.available(), reason="the semantic extra is not installed")

TEXTS = [
    "make my pictures smaller",
    "resize and compress images for the web",
    "who painted the ceiling of that chapel in rome",
]


def test_one_dot_product_is_the_weighted_mean_of_both_models_cosines():
    import numpy as np

    enc = semantic.encoder()
    both = enc.encode(TEXTS)
    dense, static = enc.minilm.encode(TEXTS), enc.static.encode(TEXTS)
    assert both.shape == (3, semantic.DIM) and both.dtype == np.float32
    assert np.allclose(np.linalg.norm(both, axis=1), 1.0, atol=1e-5)
    share = semantic.STATIC_SHARE
    assert np.allclose(both @ both.T, (1 - share) * dense @ dense.T + share * static @ static.T, atol=1e-5)
    assert np.allclose(enc.encode_one(TEXTS[0]), both[0], atol=1e-6)
    # both models, and so the pair, put the two image requests closer than the film question
    for vectors in (dense, static, both):
        assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_static_embeddings_are_the_normalised_mean_of_the_token_rows():
    import numpy as np

    static = semantic.encoder().static
    ids = static.tokenizer.encode("merge two pdf files", add_special_tokens=False).ids
    expected = np.asarray(static.table[ids], dtype=np.float32).mean(axis=0)
    assert np.allclose(static.encode(["merge two pdf files"])[0], expected / np.linalg.norm(expected), atol=1e-6)
    assert static.table.shape == (32000, semantic.STATIC_DIM)
    assert not static.encode([""]).any()  # no token: the zero vector, not NaN


def test_the_static_model_is_read_as_files_never_imported():
    # its own loader tries to download a tokenizer; nothing here may reach the network
    code = (
        "import sys; from skillctl.routing import semantic; semantic.encoder().encode(['hello there']); "
        "print('wordllama' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_without_the_static_package_semantic_routing_is_off(monkeypatch):
    monkeypatch.setattr(semantic, "static_files", lambda: None)
    assert not semantic.available()
    with pytest.raises(RuntimeError, match="semantic extra is not installed"):
        semantic.Encoder(semantic.model_file(), None)


def test_a_batch_gives_each_text_the_vector_it_gets_alone():
    import numpy as np

    enc = semantic.encoder()
    texts = [
        "merge these pdf files into one and deploy the new site to staging",
        "merge these pdf files into one",
        "deploy the new site to staging",
        *TEXTS,
        "tiny words",
    ]
    batch = enc.encode(texts)
    alone = np.stack([enc.encode_one(t) for t in texts])
    assert np.allclose(batch, alone, atol=1e-6)  # padded positions are masked: no vector changes


def test_texts_run_together_while_padding_them_costs_less_than_a_run_of_their_own():
    # a message and its two halves: the halves together, the message alone
    assert semantic.runs([14, 8, 8]) == [[1, 2], [0]]
    # shortest first; equal lengths share a run up to BATCH texts
    assert semantic.runs([9] * (semantic.BATCH + 1)) == [list(range(semantic.BATCH)), [semantic.BATCH]]
    # a text joins while the padding it adds stays within the budget
    budget = semantic.PAD_BUDGET
    assert semantic.runs([10, 10 + budget]) == [[0, 1]]
    assert semantic.runs([10, 11 + budget]) == [[0], [1]]
    assert semantic.runs([]) == []
