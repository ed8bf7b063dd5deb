"""Routing accuracy on real installed skills: the product measure (DESIGN §7).

Three kinds of data, kept apart (bench/README, "Routing"):

- ``training`` (``bench/data/routing/training.jsonl``): what the gate learns from and tuning may
  look at (``bench/train_gate.py``);
- ``development`` (``development.jsonl``): for choosing between designs, never learnt from;
- ``sealed3`` (``bench/data/sealed3/``, added by the lead): written by writers who saw only the
  skills, run once, at the end, by the lead, and nothing changed after seeing it. The folder
  holds ``requests.jsonl`` (rows of the shape below, without ``set``) and its own ``skills.txt``
  (corpus paths, relative to the corpus's ``skills/`` folder). The two earlier sealed sets, each
  run once, are data now: ``sealed1`` in training, ``sealed2`` in development
  (``bench/data/routing/README.md``).

Each row of the first two names its ``set``: the older sets, each over its own corpus skills
(``short``, ``long``, ``triggers``, ``fresh``, ``holdout``, ``blind``, ``blind2``, ``chat``,
``sealed1``, ``sealed2``; their
skill lists in ``bench/data/routing/skills*.txt``), ``kind`` ``single`` (``skills`` lists the
acceptable ones), ``none`` (needs no skill) or ``multi`` (two requests, both skills expected in
the top 3). Labels may name a skill's folder: they are scored in the name the router answers
with (the SKILL.md's ``name``), and a row naming a skill that does not install (a SKILL.md the
client refuses) is left out and counted. The skills are corpus SKILL.md files installed as a folder installs them (offline
manifests, no synthetic queries), routed with ``--ignore-gates`` semantics.

Side by side: lexical-only; ``semantic``: semantic candidates with one evidence threshold
(chosen on training); ``gate``: the learned gate; with ``--llm``, the gate with the LLM
classifier consulted where it is unsure, answered by a scripted fake that knows the gold label
(the ceiling the classifier could reach).

    python bench/route_real.py [--data training|development|sealed3] [--set NAME ...]
                               [--installed N [--samples K]] [--llm] [--no-semantic]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "client"))

from skillctl.routing import semantic  # noqa: E402
from skillctl.skillset import SkillSet  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "routing"
# The sealed test set, a folder of requests.jsonl + skills.txt (added by the lead; run once); its
# rows' set is its folder's name.
SEALED = {name: HERE / "data" / name for name in ("sealed3",)}
CORPUS = Path(os.environ.get("SKILLYARD_CORPUS", HERE.parents[1] / "shared" / "corpus")) / "skills"
FILES = {"training": DATA / "training.jsonl", "development": DATA / "development.jsonl"}

# Each set's installed skills (files of DATA; a sealed set brings its own list).
SKILL_LISTS = {
    "short": ("skills.txt",),
    "long": ("skills.txt",),
    "triggers": ("skills.txt", "skills-triggers.txt"),
    "fresh": ("skills-fresh.txt",),
    "holdout": ("skills-fresh.txt",),
    "blind": ("skills-blind.txt",),
    "blind2": ("skills-blind2.txt",),
    "chat": ("skills-chat.txt",),
    "sealed1": ("skills-sealed1.txt",),  # the first sealed set, run once, now training
    "sealed2": ("skills-sealed2.txt",),  # the second, run once, now development
}


@dataclass
class Score:
    """What one router did on one set of rows."""

    single: list[tuple[bool, bool]] = field(default_factory=list)  # (top-1 right, in top 3)
    none: list[bool] = field(default_factory=list)  # routed to nothing
    multi: list[float] = field(default_factory=list)  # share of the expected skills in the top 3
    seconds: float = 0.0
    consulted: int = 0  # --llm: messages the classifier was asked about

    def add(self, row: dict, routed: list[str]) -> None:
        if row["kind"] == "single":
            self.single.append(
                (bool(routed) and routed[0] in row["skills"], bool(set(routed[:3]) & set(row["skills"])))
            )
        elif row["kind"] == "none":
            self.none.append(not routed)
        else:
            self.multi.append(len(set(routed[:3]) & set(row["skills"])) / len(row["skills"]))

    def numbers(self) -> tuple[float, float, float, float]:
        def mean(xs):
            return sum(xs) / len(xs) if xs else float("nan")

        return mean([a for a, _ in self.single]), mean([b for _, b in self.single]), mean(self.none), mean(self.multi)

    def line(self) -> str:
        top1, top3, none, multi = self.numbers()
        n = len(self.single) + len(self.none) + len(self.multi)
        consulted = f"  LLM asked on {self.consulted}/{n}" if self.consulted else ""
        return (
            f"top-1 {top1:.3f}  top-3 {top3:.3f}  no-skill {none:.3f}  multi top-3 recall {multi:.3f}  "
            f"({1000 * self.seconds / max(n, 1):.1f} ms/request){consulted}"
        )

    def extend(self, other: Score) -> None:
        self.single += other.single
        self.none += other.none
        self.multi += other.multi
        self.seconds += other.seconds
        self.consulted += other.consulted


def rows_of(data: str) -> list[dict]:
    """The rows of ``training``, ``development`` or the sealed set (whose rows are its own set,
    ``sealed3``)."""
    path = SEALED[data] / "requests.jsonl" if data in SEALED else FILES[data]
    if not path.exists():
        sys.exit(f"{path} is not in this checkout: --data {data} needs it")
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return [{**r, "set": data} if data in SEALED else r for r in rows]


def listed(lists: tuple[str, ...], folder: Path = DATA) -> list[str]:
    """The corpus paths of the skills in ``lists`` (files of ``folder``)."""
    return [
        p.strip()
        for name in lists
        for p in (folder / name).read_text().splitlines()
        if p.strip() and not p.startswith("#")
    ]


def skills_of(set_name: str) -> list[str]:
    if set_name in SEALED:
        return listed(("skills.txt",), SEALED[set_name])
    return listed(SKILL_LISTS[set_name])


def install(skills_root: Path, paths: list[str]) -> Path:
    """Every corpus skill of ``paths`` as an installed folder (SKILL.md only, as in the corpus),
    named as the skill's own folder, or by its whole corpus path where two share a name."""
    leaves = [rel.rsplit("/", 1)[-1] for rel in paths]
    for rel, leaf in zip(paths, leaves, strict=True):
        dest = skills_root / (leaf if leaves.count(leaf) == 1 else rel.replace("/", "__"))
        dest.mkdir(parents=True)
        shutil.copyfile(CORPUS / rel / "SKILL.md", dest / "SKILL.md")
    return skills_root


class ScriptedLlm:
    """The LLM classifier's ceiling: consulted as the real one is (a small margin), it answers
    with the gold skills among the candidates it is shown (nothing for a no-skill message)."""

    def __init__(self, skip_margin: float) -> None:
        self.skip_margin = skip_margin
        self.gold: list[str] = []
        self.asked = 0

    def decide(self, message, candidates, *, margin=None):
        from skillctl.routing.llm_gate import LlmDecision

        if margin is not None and margin >= self.skip_margin:
            return None
        self.asked += 1
        names = tuple(c.name for c in candidates if c.name in self.gold)
        return LlmDecision(names=names, reason="scripted: the gold label")


def route_rows(skills: SkillSet, rows: list[dict], dump=None, label: str = "") -> Score:
    score = Score()
    llm = skills.router().llm_gate if skills.semantic else None
    start = time.perf_counter()
    for row in rows:
        if isinstance(llm, ScriptedLlm):
            llm.gold = row["skills"]
        routed = [m.name for m in skills.route(row["query"], recent=False)]
        if dump is not None:
            dump.write(json.dumps({"router": label, **row, "routed": routed}) + "\n")
        score.add(row, routed)
    score.seconds = time.perf_counter() - start
    score.consulted = llm.asked if isinstance(llm, ScriptedLlm) else 0
    return score


def routers(root: Path, with_semantic: bool, with_llm: bool) -> dict[str, SkillSet]:
    """Each router to compare, over the skills installed under ``root``."""
    out = {"lexical": SkillSet.from_dir(root, semantic=False, ignore_gates=True)}
    if not with_semantic:
        return out
    for label in ("semantic", "gate", *(["gate+llm"] if with_llm else [])):
        skills = SkillSet.from_dir(root, semantic=True, ignore_gates=True)
        router = skills.router()
        router.learned_gate = label != "semantic"
        if label == "gate+llm":
            from skillctl.routing.llm_gate import DEFAULT_SKIP_MARGIN

            router.llm_gate = ScriptedLlm(DEFAULT_SKIP_MARGIN)
        out[label] = skills
    return out


def score_set(set_name: str, rows: list[dict], args, dump=None) -> dict[str, Score]:
    """Every router's score on ``rows`` (all of set ``set_name``)."""
    paths = skills_of(set_name)
    draws = (
        [random.Random(seed).sample(paths, args.installed) for seed in range(args.samples)]
        if args.installed
        else [paths]
    )
    scores: dict[str, Score] = {}
    for chosen in draws:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["SKILLYARD_HOME"] = str(Path(tmp) / "home")  # a fresh index, no recent-use state
            root = install(Path(tmp) / "skills", chosen)
            with_semantic = not args.no_semantic and semantic.available()
            for label, skills in routers(root, with_semantic, args.llm).items():
                # Rows naming a skill that did not install (a SKILL.md the client refuses) are left
                # out, as with --installed: no router can answer them.
                kept = _installed_only(in_routed_names(rows, routed_names(skills)), set(skills.names))
                if len(kept) < len(rows) and label == "lexical" and not args.installed:
                    print(f"   {len(rows) - len(kept)} rows name a skill that does not install here: left out")
                scores.setdefault(label, Score()).extend(route_rows(skills, kept, dump, label))
    return scores


def routed_names(skills: SkillSet) -> dict[str, str]:
    """Each installed folder's name -> the name the router answers with (the SKILL.md's ``name``,
    which can differ from its folder's; a folder shadowed by another skill of the same name ->
    that name). A set whose labels name folders is scored in the router's names."""
    names: dict[str, str] = {}
    for name in skills.names:
        if (entry := skills.get(name)) is not None:
            names[entry.path.name] = name
    for collision in skills.collisions:
        for path in collision.shadowed:
            names[path.name] = collision.name
    return names


def in_routed_names(rows: list[dict], names: dict[str, str]) -> list[dict]:
    return [{**row, "skills": list(dict.fromkeys(names.get(s, s) for s in row["skills"]))} for row in rows]


def _installed_only(rows: list[dict], names: set[str]) -> list[dict]:
    """The rows that make sense with only ``names`` installed (see ``--installed``)."""
    kept = []
    for row in rows:
        here = [s for s in row["skills"] if s in names]
        if row["kind"] == "none" or (row["kind"] == "single" and here):
            kept.append({**row, "skills": here})
        elif row["kind"] == "multi" and len(here) == len(row["skills"]):
            kept.append(row)
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", choices=["training", "development", *SEALED], default="development")
    parser.add_argument("--set", action="append", default=[], metavar="NAME", help="only these sets (default all)")
    parser.add_argument("--no-semantic", action="store_true")
    parser.add_argument("--llm", action="store_true", help="also the gate + LLM classifier (scripted fake)")
    parser.add_argument("--installed", type=int, default=0, metavar="N", help="install N of a set's skills at random")
    parser.add_argument("--samples", type=int, default=5, metavar="K", help="with --installed: how many draws")
    parser.add_argument("--dump", type=Path, help="write every routed row (router, row, routed) as JSON lines")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"the corpus is not at {CORPUS} (set SKILLYARD_CORPUS)")
    rows = rows_of(args.data)
    sets = list(dict.fromkeys(r["set"] for r in rows if not args.set or r["set"] in args.set))
    totals: dict[str, Score] = {}
    dump = args.dump.open("a") if args.dump else None
    for set_name in sets:
        mine = [r for r in rows if r["set"] == set_name]
        counts = {k: sum(1 for r in mine if r["kind"] == k) for k in ("single", "none", "multi")}
        print(
            f"== {args.data} / {set_name}: {counts['single']} single, {counts['none']} no-skill, {counts['multi']} multi"
        )
        for label, score in score_set(set_name, mine, args, dump).items():
            print(f"{label:10}", score.line(), flush=True)
            totals.setdefault(label, Score()).extend(score)
    if len(sets) > 1:
        print(f"== {args.data} / all sets")
        for label, score in totals.items():
            print(f"{label:10}", score.line())


if __name__ == "__main__":
    main()
