"""Routing accuracy on MetaTool (../shared/bench/metatool): lexical-only and with semantic.

Each tool becomes a skill (name + description); its 20 expansion queries become the routing
manifest's synthetic queries. Reported, for the routed answer (threshold applied, at most 3):
top-1 / top-3 on test_single and test_multi, top-1 on test_awareness positives, and the share of
test_awareness negatives and test_similar queries routed to no skill. ``rank`` columns ignore the
threshold, to compare with the published baselines (which rank only).

``--dev`` evaluates on a split of expansion.jsonl only (15 queries per tool build the manifest,
5 are held out; negatives are those held-out queries routed with their own tool withheld, over
10 random other tools as in test_similar, 50 hand-written generic messages, DEV_GENERIC, and the
held-out no-skill messages of bench/data/no_skill_dev.txt; plus two held-out queries joined as a
multi analogue, and the hand-written two-request messages of bench/data/multi_dev.jsonl):
the ranking weights in ``skillctl.routing.weights`` were tuned there, never on the test files;
the gate that decides "no skill" is learned from bench/data/routing's training rows (train_gate.py).

    python bench/route_metatool.py [--data DIR] [--no-semantic] [--dev] [--cache F.npz] [--set W=V]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "client"))

from skillctl.routing import semantic  # noqa: E402
from skillctl.routing.manifests import build_offline  # noqa: E402
from skillctl.routing.router import Router  # noqa: E402
from skillctl.routing.weights import DEFAULT_WEIGHTS  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "metatool"
# Dev negatives, second set: the held-out third of the hand-written "needs no skill" pool (same
# categories as routing/data/no-skill.txt, disjoint from it, never shipped).
NO_SKILL_DEV = Path(__file__).resolve().parent / "data" / "no_skill_dev.txt"
# Dev multi-intent messages: 150 hand-written requests for two of the tools at once (written for
# this bench from tools.jsonl only, never from the test files), both expected in the top 3.
MULTI_DEV = Path(__file__).resolve().parent / "data" / "multi_dev.jsonl"
# Dev negatives: hand-written generic messages that need no tool (written for this bench, not
# taken from MetaTool; disjoint from the shipped routing/data/no-skill.txt).
DEV_GENERIC = [
    "hi, how are you today?",
    "thanks, that's all for now",
    "good morning!",
    "can you tell me a joke?",
    "what does the word 'ephemeral' mean?",
    "explain the difference between a virus and a bacterium",
    "why is the sky blue?",
    "who wrote Pride and Prejudice?",
    "summarize the plot of Hamlet in two sentences",
    "what is the capital of Australia?",
    "how do I reverse a list in Python?",
    "what is 17 times 23?",
    "give me three tips for writing a good cover letter",
    "explain photosynthesis to a ten year old",
    "what's the difference between affect and effect?",
    "rewrite this sentence to sound more formal: we gotta fix this asap",
    "what are the main causes of the French Revolution?",
    "how does a hash table work?",
    "can you proofread this paragraph for grammar?",
    "what is the meaning of life?",
    "write a short poem about autumn leaves",
    "how many legs does a spider have?",
    "explain what inflation is in simple terms",
    "what is the Pythagorean theorem?",
    "suggest a name for my pet goldfish",
    "is it better to study in the morning or at night?",
    "what is the boiling point of water at sea level?",
    "describe the water cycle",
    "what are some good habits for staying productive?",
    "translate 'thank you' into Spanish",
    "how do you say hello in Japanese?",
    "what's a synonym for happy?",
    "why do cats purr?",
    "explain recursion with an example",
    "who painted the Mona Lisa?",
    "what is the difference between weather and climate?",
    "give me a motivational quote",
    "how can I be more confident when speaking in public?",
    "what year did World War II end?",
    "explain the theory of relativity briefly",
    "what is a prime number?",
    "ok, sounds good",
    "can you explain how vaccines work?",
    "what should I consider when choosing a career?",
    "list the planets of the solar system",
    "what is the plural of cactus?",
    "help me brainstorm ideas for a birthday message to my mom",
    "what is machine learning?",
    "how do I politely decline a meeting invitation?",
    "what is the largest ocean on earth?",
]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


class Vectors:
    """Encodes each distinct text once per run (and across runs with ``--cache FILE``)."""

    def __init__(self, cache_file: Path | None = None) -> None:
        self.cache: dict[str, object] = {}
        self.encoder = semantic.encoder()
        self.cache_file = cache_file
        if cache_file and cache_file.is_file():
            import numpy as np

            data = np.load(cache_file, allow_pickle=False)
            if "model" in data and str(data["model"]) == semantic.MODEL_ID:  # another model's: encoded again
                self.cache = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))

    def save(self) -> None:
        if self.cache_file:
            import numpy as np

            np.savez(
                self.cache_file,
                model=np.array(semantic.MODEL_ID),
                texts=np.array(list(self.cache)),
                vectors=np.stack(list(self.cache.values())),
            )

    def of(self, texts: list[str]):
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        for text, vector in zip(missing, self.encoder.encode(missing), strict=True):
            self.cache[text] = vector
        return np.stack([self.cache[t] for t in texts])


def build_manifests(tools: list[dict], queries: dict[str, list[str]]) -> dict:
    return {
        t["name"]: build_offline(name=t["name"], description=t["description"], queries=queries[t["name"]])
        for t in tools
    }


class Bench:
    def __init__(self, manifests: dict, vectors: Vectors | None, weights=DEFAULT_WEIGHTS) -> None:
        self.manifests = manifests
        self.vectors = vectors
        self.weights = weights
        self.routers: dict[tuple[tuple[str, ...], bool], Router] = {}

    def router(self, names: tuple[str, ...], threshold: bool = True) -> Router:
        key = (names, threshold)
        if key not in self.routers:
            ms = [self.manifests[n] for n in names]
            weights = self.weights
            if self.vectors is None:
                self.routers[key] = Router(ms, weights=weights)
            else:
                cents = [semantic.centroid(self.vectors.of(semantic.centroid_texts(m))) for m in ms]
                examples = [self.vectors.of(semantic.example_texts(m)) if m.queries else None for m in ms]
                vectors = semantic.SkillVectors.from_lists(cents, examples)
                self.routers[key] = Router(ms, vectors=vectors, encoder=self.vectors.encoder, weights=weights)
        return self.routers[key]

    def route(self, query: str, names: tuple[str, ...], threshold: bool = True) -> list[str]:
        router = self.router(names, threshold)
        vector = self.vectors.of([query])[0] if self.vectors else None
        if threshold:
            return [m.name for m in router.route(query, query_vector=vector)]
        if vector is None:  # the rank alone: no threshold, no gate
            return [m.name for m, _ in router.nearest(query)]
        return [m.name for m in router.candidates(query, query_vector=vector)[0][: self.weights.limit]]


def topk(bench: Bench, rows: list[dict], names: tuple[str, ...], threshold: bool) -> tuple[float, float]:
    top1 = top3 = 0.0
    for row in rows:
        got = bench.route(row["query"], names, threshold)
        expected = row["expected_tools"]
        top1 += bool(got) and got[0] in expected
        top3 += sum(e in got[:3] for e in expected) / len(expected)
    return top1 / len(rows), top3 / len(rows)


def none_share(bench: Bench, rows: list[dict], names_of) -> float:
    return sum(not bench.route(r["query"], names_of(r)) for r in rows) / len(rows)


def evaluate_tests(bench: Bench, data: Path, all_names: tuple[str, ...]) -> dict:
    single = read_jsonl(data / "test_single.jsonl")
    multi = read_jsonl(data / "test_multi.jsonl")
    aware = read_jsonl(data / "test_awareness.jsonl")
    similar = read_jsonl(data / "test_similar.jsonl")
    positives = [r for r in aware if r["expected_tools"]]
    negatives = [r for r in aware if not r["expected_tools"]]
    return {
        "single top-1/top-3": topk(bench, single, all_names, True),
        "single rank top-1/top-3": topk(bench, single, all_names, False),
        "multi top-1/top-3": topk(bench, multi, all_names, True),
        "awareness positives top-1/top-3": topk(bench, positives, all_names, True),
        "awareness negatives -> none": none_share(bench, negatives, lambda r: all_names),
        "similar -> none": none_share(bench, similar, lambda r: tuple(r["candidates"])),
    }


def evaluate_dev(tools: list[dict], expansion: dict[str, list[str]], vectors: Vectors | None, weights) -> dict:
    build = {name: qs[:15] for name, qs in expansion.items()}
    held = [{"query": q, "expected_tools": [name]} for name, qs in expansion.items() for q in qs[15:]]
    bench = Bench(build_manifests(tools, build), vectors, weights)
    names = tuple(sorted(build))
    rng = random.Random(5)
    withheld = {
        r["query"]: tuple(sorted(rng.sample([n for n in names if n not in r["expected_tools"]], 10))) for r in held
    }
    # multi analogue: two held-out queries of different tools joined into one message
    pick = random.Random(7)
    multi = []
    for r in held:
        other = pick.choice([h for h in held if h["expected_tools"] != r["expected_tools"]])
        multi.append(
            {
                "query": f"{r['query'].rstrip()} {other['query']}",
                "expected_tools": r["expected_tools"] + other["expected_tools"],
            }
        )
    multi = multi[::2]
    lines = NO_SKILL_DEV.read_text("utf-8").splitlines()
    no_skill_dev = [{"query": q.strip()} for q in lines if q.strip() and not q.startswith("#")]
    return {
        "dev top-1/top-3": topk(bench, held, names, True),
        "dev rank top-1/top-3": topk(bench, held, names, False),
        "dev own tool withheld (10 others) -> none": none_share(bench, held, lambda r: withheld[r["query"]]),
        "dev own tool withheld (all others) -> none": none_share(
            bench, held, lambda r: tuple(n for n in names if n not in r["expected_tools"])
        ),
        "dev generic messages (50, hand-written) -> none": none_share(
            bench, [{"query": q} for q in DEV_GENERIC], lambda r: names
        ),
        f"dev no-skill pool, held out ({len(no_skill_dev)}) -> none": none_share(bench, no_skill_dev, lambda r: names),
        "dev multi (2 queries joined) top-1/top-3": topk(bench, multi, names, True),
        "dev multi rank top-1/top-3": topk(bench, multi, names, False),
        "dev multi, hand-written (150) top-1/top-3": topk(bench, read_jsonl(MULTI_DEV), names, True),
    }


def show(title: str, results: dict, seconds: float) -> None:
    print(f"\n{title}  ({seconds:.0f} s)")
    for key, value in results.items():
        text = " / ".join(f"{v:.3f}" for v in value) if isinstance(value, tuple) else f"{value:.3f}"
        print(f"  {key:<44} {text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--no-semantic", action="store_true", help="lexical only")
    parser.add_argument("--dev", action="store_true", help="the expansion split used for tuning")
    parser.add_argument("--cache", type=Path, help="keep the sentence vectors of the texts in this .npz between runs")
    parser.add_argument("--set", action="append", default=[], metavar="WEIGHT=VALUE", help="override a Weights field")
    args = parser.parse_args()
    weights = DEFAULT_WEIGHTS.with_values(
        **{k: type(DEFAULT_WEIGHTS.get(k))(float(v)) for k, v in (kv.split("=", 1) for kv in args.set)}
    )
    tools = read_jsonl(args.data / "tools.jsonl")
    expansion: dict[str, list[str]] = defaultdict(list)
    for row in read_jsonl(args.data / "expansion.jsonl"):
        expansion[row["tool"]].append(row["query"])
    tools = [t for t in tools if t["name"] in expansion]
    modes = [("lexical only", False)]
    if not args.no_semantic and semantic.available():
        modes.append(("semantic + lexical (MiniLM int8 + WordLlama, 1 thread)", True))
    for title, use_semantic in modes:
        start = time.perf_counter()
        vectors = Vectors(args.cache) if use_semantic else None
        if args.dev:
            results = evaluate_dev(tools, expansion, vectors, weights)
        else:
            bench = Bench(build_manifests(tools, expansion), vectors, weights)
            results = evaluate_tests(bench, args.data, tuple(sorted(expansion)))
        if vectors is not None:
            vectors.save()
        show(f"MetaTool, {len(tools)} tools as skills, {title}", results, time.perf_counter() - start)


if __name__ == "__main__":
    main()
