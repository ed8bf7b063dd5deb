"""How often seed 003's LLM classifier is consulted, and the most it could give (issue 37).

The development requests (``bench/data/routing/development.jsonl``; never the training data nor
the sealed set) are routed set by set over their skills as ``bench/route_real.py``
routes them, by the router with its learned gate and, where the gate's margin is below the skip
margin, the real :class:`skillctl.routing.llm_gate.LlmGate` asking the tests' loopback fake
OpenAI-compatible server (``tests/client/runtime/fake_llm.py``). The fake answers from the gold
label: the right skills among the candidates it is shown, or none. So each line is a ceiling: a
real model can only do worse, and a right skill outside the candidates stays out of reach. The
router decides when to consult and what to show (its candidates and margin); this script only
picks the skip margin and counts the messages on which the classifier was consulted at least once
(a message with several requests may consult it for each).

    python bench/route_llm_ceiling.py [--set NAME ...] [--margins .05,.1,.2] [--always]

Each margin routes again the messages it consults on; ``--always`` (the classifier deciding
every message, the plain ceiling) routes them all again: ~20 minutes on the whole development
file on a busy 2-core machine, against ~10 without it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from route_real import Score, install, rows_of, skills_of

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tests' fake server

from skillctl.routing.llm_gate import LlmGate, LlmGateSettings, MemoryCache  # noqa: E402
from skillctl.skillset import SkillSet  # noqa: E402
from tests.client.runtime.fake_llm import FakeChatServer, reply_saying  # noqa: E402

MARGINS = (0.05, 0.1, 0.2)
ALWAYS = float("inf")  # a skip margin no margin reaches: the classifier decides every message


class GoldLlm:
    """The router's ``llm_gate`` for one run: the real gate on the gold-answering fake, counting
    the messages it was consulted on."""

    def __init__(self, skip_margin: float, cache: MemoryCache) -> None:
        self.skip_margin, self.cache = skip_margin, cache
        self.gate: LlmGate | None = None
        self.row: dict = {}
        self.consulted: set[str] = set()

    def connect(self, base_url: str) -> GoldLlm:
        settings = LlmGateSettings(base_url=base_url, model="gold", skip_margin=self.skip_margin, timeout=10)
        self.gate = LlmGate(settings, cache=self.cache)
        return self

    def decide(self, message, candidates, *, margin=None):
        assert self.gate is not None, "connect() first"
        if margin is None or self.gate.consults(margin):
            self.consulted.add(self.row["query"])
        return self.gate.decide(message, candidates, margin=margin)

    def answer(self, body: dict) -> dict:
        """The fake server's step: the gold skills of the row being routed among those shown."""
        shown = [s["name"] for s in json.loads(body["messages"][-1]["content"])["skills"]]
        right = [n for n in shown if n in self.row["skills"]] if self.row["kind"] != "none" else []
        return reply_saying(json.dumps({"skills": right[:1] if self.row["kind"] == "single" else right}))


class Margins:
    """The router's ``llm_gate`` while routing offline: never decides, keeps each message's
    smallest margin (a message whose margins all reach the skip margin routes as offline)."""

    def __init__(self) -> None:
        self.row: dict = {}
        self.smallest: dict[str, float] = {}

    def decide(self, message, candidates, *, margin=None):
        key = self.row["query"]
        self.smallest[key] = min(self.smallest.get(key, ALWAYS), -1.0 if margin is None else margin)
        return None


def run_set(set_name: str, rows: list[dict], margins: list[float], scores: dict[float | None, Score]) -> None:
    """Every row of ``set_name`` routed offline (None), then at each skip margin the rows whose
    smallest margin is below it routed again with the classifier (the others route as offline)."""
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SKILLYARD_HOME"] = str(Path(tmp) / "home")  # a fresh index, no recent-use state
        skills = SkillSet.from_dir(install(Path(tmp) / "skills", skills_of(set_name)), ignore_gates=True)
        router, cache = skills.router(), MemoryCache(ttl=ALWAYS)
        router.llm_gate = recorder = Margins()
        offline = []
        for row in rows:
            recorder.row = row
            offline.append([m.name for m in skills.route(row["query"], recent=False)])
        scores.setdefault(None, Score()).extend(_scored(rows, offline))
        for margin in margins:
            gold = GoldLlm(margin, cache)
            with FakeChatServer([gold.answer] * (10 * len(rows))) as llm:  # a few consultations a message at most
                router.llm_gate = gold.connect(llm.base_url)
                routed = []
                for row, alone in zip(rows, offline, strict=True):
                    gold.row = row
                    unsure = recorder.smallest.get(row["query"], ALWAYS) < margin
                    routed.append([m.name for m in skills.route(row["query"], recent=False)] if unsure else alone)
            score = _scored(rows, routed)
            score.consulted = len(gold.consulted)
            scores.setdefault(margin, Score()).extend(score)


def _scored(rows: list[dict], routed: list[list[str]]) -> Score:
    score = Score()
    for row, names in zip(rows, routed, strict=True):
        score.add(row, names)
    return score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", default=[], metavar="NAME", help="only these sets (default all)")
    parser.add_argument("--margins", default=",".join(map(str, MARGINS)), help="skip margins, comma-separated")
    parser.add_argument("--always", action="store_true", help="also the classifier consulted on every message")
    args = parser.parse_args()
    rows = [r for r in rows_of("development") if not args.set or r["set"] in args.set]
    margins = [float(m) for m in args.margins.split(",")] + ([ALWAYS] if args.always else [])
    scores: dict[float | None, Score] = {}
    for set_name in dict.fromkeys(r["set"] for r in rows):
        run_set(set_name, [r for r in rows if r["set"] == set_name], margins, scores)
    print(f"{len(rows)} development requests; the classifier is a fake answering from the gold label")
    for margin, score in scores.items():
        label = "gate alone" if margin is None else "always" if margin == ALWAYS else f"skip margin {margin:g}"
        print(f"{label:16} consulted on {score.consulted / len(rows):6.1%}  {score.line().split('  (')[0]}")


if __name__ == "__main__":
    main()
