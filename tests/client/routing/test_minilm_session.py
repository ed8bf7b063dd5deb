"""MiniLM's session: the optimised graph saved once and loaded as is by later processes, the
same vectors, and a missing, broken or unwritable copy never stops routing (routing/minilm_session.py)."""

from __future__ import annotations

import pytest

from skillctl.routing import minilm_session, semantic

pytestmark = pytest.mark.skipif(not semantic.available(), reason="the semantic extra is not installed")

TEXTS = ["merge these pdf files into one", "hello there, how are you today?"]


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def hidden(session, texts=TEXTS):
    """The session's first output for ``texts`` (one at a time, no padding)."""
    import numpy as np
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(semantic.TOKENIZER_FILE))
    names = {i.name for i in session.get_inputs()}
    out = []
    for text in texts:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        out.append(session.run(None, {k: v for k, v in feed.items() if k in names})[0])
    return out


def built_from_source(monkeypatch) -> list[bool]:
    """Records, per session made from here on, whether it optimised the shipped graph."""
    made: list[bool] = []
    real = minilm_session._session

    def spy(ort, model, threads, *, optimise, save_to=None):
        made.append(optimise)
        return real(ort, model, threads, optimise=optimise, save_to=save_to)

    monkeypatch.setattr(minilm_session, "_session", spy)
    return made


def test_the_optimised_graph_is_saved_once_and_loaded_as_is_with_the_same_outputs(home, monkeypatch):
    import numpy as np

    model = semantic.model_file()
    made = built_from_source(monkeypatch)
    first = minilm_session.session(model)
    cached = minilm_session.cached_dir(model, __import__("onnxruntime").__version__)
    assert cached.parent == home / "cache" / "routing"
    assert (cached / minilm_session.GRAPH_FILE).is_file() and (cached / minilm_session.WEIGHTS_FILE).is_file()
    second = minilm_session.session(model)
    assert made == [True, False]  # built once; then read without optimising again
    for a, b in zip(hidden(first), hidden(second), strict=True):
        assert np.array_equal(a, b)
    assert not [p for p in cached.parent.iterdir() if p.name.startswith(".")]  # no temporary copy left


def test_a_broken_copy_is_rebuilt(home, monkeypatch):
    model = semantic.model_file()
    minilm_session.session(model)
    cached = minilm_session.cached_dir(model, __import__("onnxruntime").__version__)
    (cached / minilm_session.GRAPH_FILE).write_bytes(b"not a graph")
    made = built_from_source(monkeypatch)
    assert hidden(minilm_session.session(model))
    assert made == [False, True]  # refused, then built from the shipped file and saved again
    assert (cached / minilm_session.GRAPH_FILE).stat().st_size > 1000


def test_an_unwritable_cache_still_gives_a_session(home, monkeypatch, tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setattr(minilm_session.paths, "cache_dir", lambda: blocked / "cache")
    made = built_from_source(monkeypatch)
    assert hidden(minilm_session.session(semantic.model_file()))
    assert made == [True]


def test_another_onnxruntime_or_model_file_gets_its_own_copy(tmp_path, home):
    model = semantic.model_file()
    assert minilm_session.cached_dir(model, "1.0") != minilm_session.cached_dir(model, "2.0")
    other = tmp_path / "model.onnx"
    other.write_bytes(b"x")
    assert minilm_session.cached_dir(model, "1.0") != minilm_session.cached_dir(other, "1.0")


def test_copies_unused_for_a_month_are_removed_when_a_new_one_is_saved_and_a_load_marks_its_copy_used(home):
    import os
    import time

    model = semantic.model_file()
    folder = home / "cache" / "routing"
    old, recent = folder / "minilm-0000000000000000", folder / "minilm-1111111111111111"
    for copy, days in ((old, minilm_session.UNUSED_DAYS + 1), (recent, minilm_session.UNUSED_DAYS - 1)):
        copy.mkdir(parents=True)
        (copy / minilm_session.GRAPH_FILE).write_bytes(b"an older onnxruntime's copy")
        stamp = time.time() - days * 86400
        os.utime(copy, (stamp, stamp))
    minilm_session.session(model)
    cached = minilm_session.cached_dir(model, __import__("onnxruntime").__version__)
    assert not old.exists() and recent.exists() and cached.is_dir()

    a_day_ago = time.time() - 86400
    os.utime(cached, (a_day_ago, a_day_ago))
    minilm_session.session(model)
    assert time.time() - cached.stat().st_mtime < 600  # loaded: marked as used now
