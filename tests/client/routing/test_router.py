"""The router's encoding path: one call to the encoder per message, whatever it splits into
(pure code, a stand-in encoder)."""

from __future__ import annotations

import pytest

from skillctl.routing.manifests import build_offline
from skillctl.routing.router import Router
from skillctl.routing.weights import DEFAULT_WEIGHTS

np = pytest.importorskip("numpy")

TOPICS = ("pdf", "deploy", "image", "hello")


class CountingEncoder:
    """A text's vector is the share of each topic word among its words, plus a little of every
    word's length (so two texts rarely share one); every call is recorded."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts):
        self.calls.append(list(texts))
        return np.stack([self._vector(t) for t in texts])

    def encode_one(self, text):
        return self.encode([text])[0]

    @staticmethod
    def _vector(text: str):
        words = [w.strip(".,!?").lower() for w in text.split()] or [""]
        v = np.array([sum(w.startswith(t) for w in words) for t in TOPICS] + [0.1 * len(words)], dtype=np.float32)
        return v / max(float(np.linalg.norm(v)), 1e-6)


class OneAtATime(CountingEncoder):
    """The same vectors, each text encoded in a call of its own (as routing did before)."""

    def encode(self, texts):
        return np.stack([super(OneAtATime, self).encode([t])[0] for t in texts])


SKILLS = [
    ("pdf-tools", "Merge, split and fill PDF files."),
    ("site-deploy", "Deploy the web site to staging or production."),
    ("image-resize", "Resize and compress image files for the web."),
]


def router(encoder: CountingEncoder) -> Router:
    manifests = [build_offline(name=name, description=text) for name, text in SKILLS]
    vectors = encoder.encode([f"{name}: {text}" for name, text in SKILLS])
    built = Router(manifests, vectors=vectors, encoder=encoder, weights=DEFAULT_WEIGHTS)
    built.no_skill()  # a stand-in encoder encodes the no-skill reference itself, once
    encoder.calls.clear()
    return built


# Two requests joined by a bare "and", by a connector, and over several sentences.
SPLIT = [
    "merge these pdf files into one and deploy the new site to staging",
    "resize every image in the folder, then deploy the site to production",
    "I have a folder of scans. Merge the pdf pages in order. Then resize the image previews too.",
]


@pytest.mark.parametrize("message", SPLIT)
def test_a_message_and_its_requests_are_encoded_in_one_call(message):
    enc = CountingEncoder()
    r = router(enc)
    read = r.normalised(message)
    assert read is not None and len(read.parts) >= 2
    r.route(message)
    assert len(enc.calls) == 1
    [texts] = enc.calls
    assert texts[0] == read.text and set(read.parts) <= set(texts)
    assert len(texts) == len(set(texts))  # a sentence that is also a request is encoded once


@pytest.mark.parametrize("message", [*SPLIT, "merge these pdf files", "hello there, how are you?"])
def test_batched_encoding_routes_as_one_text_per_call_did(message):
    batched, alone = router(CountingEncoder()), router(OneAtATime())
    got = [(m.name, m.score, m.reasons) for m in batched.route(message)]
    assert got == [(m.name, m.score, m.reasons) for m in alone.route(message)]


def test_a_message_without_requests_of_its_own_is_one_call_too():
    enc = CountingEncoder()
    r = router(enc)
    r.route("I have a folder of scans. Merge the pdf pages, in the order of their names.")
    assert len(enc.calls) == 1 and len(enc.calls[0]) == 3  # the message and its two sentences


def test_a_vector_the_caller_encoded_is_used_and_only_the_requests_are_encoded():
    enc = CountingEncoder()
    r = router(enc)
    message = SPLIT[0]
    given = enc.encode_one(message)
    enc.calls.clear()
    r.route(message, query_vector=given)
    assert enc.calls == [r.normalised(message).parts]


def test_lexical_routing_encodes_nothing():
    enc = CountingEncoder()
    manifests = [build_offline(name=name, description=text) for name, text in SKILLS]
    Router(manifests, encoder=enc).route(SPLIT[0])
    assert enc.calls == []
