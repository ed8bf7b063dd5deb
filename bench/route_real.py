"""Routing accuracy on real installed skills: the product measure (DESIGN §7).

The skills are the corpus SKILL.md files listed in ``bench/data/real/skills.txt`` (260 real
skills from ten public repositories, installed as a folder would install them: offline
manifests, no synthetic queries). The requests in ``bench/data/real/requests.jsonl`` were
written by hand, in the words of users of coding and office agents (terse, long, with typos):
``single`` (one right skill; ``skills`` lists the acceptable ones), ``none`` (needs no skill:
chit-chat, questions about code shown inline, general knowledge) and ``multi`` (two requests,
both skills expected in the top 3). ``bench/data/real/long.jsonl`` (``--requests long``) holds
the same kinds written long: a paragraph of context, a pasted stack trace, code, a diff or an
email around the request (91 to 521 characters; the short set stops at 99).
``--requests triggers`` adds the 86 corpus skills whose authors wrote ``triggers`` (their own
"use me" words, often broad: "test", "database", "switch to") from ``skills-triggers.txt``, and
routes ``triggers.jsonl``: requests for them, and messages that need no skill but say one of
those words. ``--requests fresh`` routes ``fresh.jsonl`` over 170 other corpus skills drawn at
random (``skills-fresh.txt``, seed 2026: mostly OpenClaw and Composio, many with thin
descriptions), 160 single, 209 no-skill and 24 two-request messages written by three writers who
saw the skills (name, description, the start of the body) but never the router or the other
sets: a stand-in for a hold-out nobody here tuned on. ``--requests holdout``: 150 rows over the
same skills from a fourth writer (ten people's voices), kept for a blind measure (only its dev
half was ever looked at). ``--requests blind`` and ``--requests blind2``: two more draws of 160
skills each (``skills-blind.txt``, seed 2027; ``skills-blind2.txt``, seed 2028), each with about
550 rows from three more writers briefed the same way (requests, two-request messages, and chat,
much of it on the skills' own topics); of these only blind's dev half was ever read row by row.
``--requests chat``: 487 messages that need no skill (concept and history questions, advice,
text to edit, snippets to explain, mental arithmetic, small talk, hypotheticals), every one on
the topic of one of 200 more corpus skills (``skills-chat.txt``, seed 3131), written by one more
writer who saw only those skills' names and descriptions: the hardest no-skill measure. Each row has a fixed ``split`` (by content hash: the first byte of the query's
SHA-256, even for dev): tune on ``dev``, report ``test``.

Side by side, routed with ``--ignore-gates`` semantics (this machine's OS and binaries don't
decide what a request means): lexical-only, semantic (MiniLM + WordLlama) and a baseline of plain cosine
to the description with one threshold tuned on the dev split.

    python bench/route_real.py [--split dev|test|all] [--requests short|long|triggers]
                               [--installed N [--samples K]] [--typos N]
                               [--no-semantic] [--set WEIGHT=VALUE]
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
from skillctl.routing.weights import DEFAULT_WEIGHTS  # noqa: E402
from skillctl.skillset import SkillSet  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "real"
CORPUS = Path(os.environ.get("SKILLYARD_CORPUS", HERE.parents[1] / "shared" / "corpus")) / "skills"


# --requests: the requests file, and the skill lists installed for it.
REQUESTS = {
    "short": ("requests.jsonl", ("skills.txt",)),
    "long": ("long.jsonl", ("skills.txt",)),
    "triggers": ("triggers.jsonl", ("skills.txt", "skills-triggers.txt")),
    "fresh": ("fresh.jsonl", ("skills-fresh.txt",)),
    "holdout": ("holdout.jsonl", ("skills-fresh.txt",)),
    "blind": ("blind.jsonl", ("skills-blind.txt",)),
    "blind2": ("blind2.jsonl", ("skills-blind2.txt",)),
    "chat": ("chat.jsonl", ("skills-chat.txt",)),
}


@dataclass
class Score:
    """What one router did on one split."""

    single: list[tuple[bool, bool]] = field(default_factory=list)  # (top-1 right, in top 3)
    none: list[bool] = field(default_factory=list)  # routed to nothing
    multi: list[float] = field(default_factory=list)  # share of the expected skills in the top 3
    seconds: float = 0.0

    def add(self, row: dict, routed: list[str]) -> None:
        if row["kind"] == "single":
            self.single.append(
                (bool(routed) and routed[0] in row["skills"], bool(set(routed[:3]) & set(row["skills"])))
            )
        elif row["kind"] == "none":
            self.none.append(not routed)
        else:
            self.multi.append(len(set(routed[:3]) & set(row["skills"])) / len(row["skills"]))

    def line(self) -> str:
        def mean(xs):
            return sum(xs) / len(xs) if xs else float("nan")

        top1 = mean([a for a, _ in self.single])
        top3 = mean([b for _, b in self.single])
        n = len(self.single) + len(self.none) + len(self.multi)
        return (
            f"top-1 {top1:.3f}  top-3 {top3:.3f}  no-skill {mean(self.none):.3f}  "
            f"multi top-3 recall {mean(self.multi):.3f}  ({1000 * self.seconds / max(n, 1):.1f} ms/request)"
        )

    def extend(self, other: Score) -> None:
        self.single += other.single
        self.none += other.none
        self.multi += other.multi
        self.seconds += other.seconds


def listed(lists: tuple[str, ...] = ("skills.txt",)) -> list[str]:
    """The corpus paths of the skills in ``lists`` (files of ``DATA``)."""
    return [p for name in lists for p in (DATA / name).read_text().splitlines() if p.strip() and not p.startswith("#")]


def install(skills_root: Path, lists: tuple[str, ...] = ("skills.txt",), paths: list[str] | None = None) -> Path:
    """Every corpus skill listed in ``lists`` (or ``paths``) as an installed folder (SKILL.md only,
    as in the corpus). The folder is named as the skill's own folder, as an install names it (a
    SKILL.md without a name is known by it), or by its whole corpus path where two share a name."""
    rels = listed(lists) if paths is None else paths
    leaves = [rel.rsplit("/", 1)[-1] for rel in rels]
    for rel, leaf in zip(rels, leaves, strict=True):
        src = CORPUS / rel / "SKILL.md"
        dest = skills_root / (leaf if leaves.count(leaf) == 1 else rel.replace("/", "__"))
        dest.mkdir(parents=True)
        shutil.copyfile(src, dest / "SKILL.md")
    return skills_root


def run_skillset(skills: SkillSet, rows: list[dict]) -> Score:
    score = Score()
    start = time.perf_counter()
    for row in rows:
        score.add(row, [m.name for m in skills.route(row["query"], recent=False)])
    score.seconds = time.perf_counter() - start
    return score


def description_baseline(skills: SkillSet, dev: list[dict], rows: list[dict]) -> tuple[Score, float]:
    """Cosine of the request to each skill's description; one threshold, tuned on dev."""
    import numpy as np

    encoder = semantic.encoder()
    entries = skills.offered()
    names = [e.name for e in entries]
    descriptions = encoder.encode([e.manifest.description or e.name for e in entries])

    def ranked(query: str) -> tuple[list[str], float]:
        cosines = descriptions @ encoder.encode_one(query)
        order = np.argsort(-cosines)[:3]
        return [names[i] for i in order], float(cosines[order[0]])

    dev_ranked = [(row, *ranked(row["query"])) for row in dev]
    best = max((t / 100 for t in range(10, 80)), key=lambda t: _balanced(dev_ranked, t))
    score = Score()
    start = time.perf_counter()
    for row in rows:
        routed, top = ranked(row["query"])
        score.add(row, routed if top >= best else [])
    score.seconds = time.perf_counter() - start
    return score, best


def _balanced(ranked: list, threshold: float) -> float:
    """Mean of single-skill top-1 and no-skill accuracy: what the threshold trades off."""
    single = [r for r in ranked if r[0]["kind"] == "single"]
    none = [r for r in ranked if r[0]["kind"] == "none"]
    right = sum(1 for row, routed, top in single if top >= threshold and routed[0] in row["skills"])
    quiet = sum(1 for _, _, top in none if top < threshold)
    return right / max(len(single), 1) + quiet / max(len(none), 1)


_KEYBOARD = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]


def _neighbours(ch: str) -> str:
    for row in _KEYBOARD:
        if (i := row.find(ch)) >= 0:
            return row[max(i - 1, 0) : i] + row[i + 1 : i + 2]
    return ch


def with_typos(text: str, count: int) -> str:
    """``text`` with ``count`` of its content words (four letters or more) mistyped the ways
    people mistype: two letters swapped, one dropped, one doubled, or a key's neighbour hit.
    Seeded by the text, so every run and every router sees the same typos."""
    import hashlib
    import random
    import re

    from skillctl.routing.text import STOPWORDS

    rng = random.Random(hashlib.sha256(text.encode()).digest())
    spans = [m for m in re.finditer(r"[A-Za-z]{4,}", text) if m.group().lower() not in STOPWORDS]
    chosen = sorted(rng.sample(spans, min(count, len(spans))), key=lambda m: -m.start())
    for m in chosen:  # from the end, so earlier offsets stay valid
        word, i = m.group(), rng.randrange(1, len(m.group()) - 1)
        kind = rng.choice(("swap", "drop", "double", "neighbour"))
        if kind == "swap":
            typo = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        elif kind == "drop":
            typo = word[:i] + word[i + 1 :]
        elif kind == "double":
            typo = word[:i] + word[i] + word[i:]
        else:
            typo = word[:i] + rng.choice(_neighbours(word[i].lower())) + word[i + 1 :]
        text = text[: m.start()] + typo + text[m.end() :]
    return text


def _weight(setting: str) -> tuple[str, object]:
    key, value = setting.split("=", 1)
    kind = type(DEFAULT_WEIGHTS.get(key))
    return key, value.lower() in ("1", "true", "yes") if kind is bool else kind(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=["dev", "test", "all"], default="test")
    parser.add_argument("--no-semantic", action="store_true")
    parser.add_argument("--set", action="append", default=[], metavar="WEIGHT=VALUE")
    parser.add_argument(
        "--requests",
        choices=list(REQUESTS),
        default="short",
        help="short: requests.jsonl (one line each); long: long.jsonl (context, pasted code and logs); "
        "triggers: triggers.jsonl, over skills.txt and the skills with `triggers` in skills-triggers.txt; "
        "fresh: fresh.jsonl over the 170 other skills of skills-fresh.txt (written blind to the router); "
        "holdout: holdout.jsonl over the same skills (a fourth writer); "
        "blind: blind.jsonl over the 160 skills of skills-blind.txt (three more writers); "
        "blind2: blind2.jsonl over 160 more (skills-blind2.txt, three more writers, read only as totals); "
        "chat: chat.jsonl, messages that need no skill, all on the topics of the 200 skills of skills-chat.txt",
    )
    parser.add_argument(
        "--installed",
        type=int,
        default=0,
        metavar="N",
        help="install N of the skills at random (--samples draws), as most people do, not all of them",
    )
    parser.add_argument("--samples", type=int, default=5, metavar="K", help="with --installed: how many draws")
    parser.add_argument(
        "--typos",
        type=int,
        default=0,
        metavar="N",
        help="mistype N content words of every request (seeded by its text): robustness to typos",
    )
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"the corpus is not at {CORPUS} (set SKILLYARD_CORPUS)")
    weights = DEFAULT_WEIGHTS.with_values(**dict(_weight(s) for s in args.set))
    source, lists = REQUESTS[args.requests]
    source = DATA / source
    all_rows = [json.loads(line) for line in source.read_text().splitlines() if line]
    if args.typos:
        all_rows = [{**r, "query": with_typos(r["query"], args.typos)} for r in all_rows]
    rows = [r for r in all_rows if args.split in ("all", r["split"])]
    dev = [r for r in all_rows if r["split"] == "dev"]
    counts = {k: sum(1 for r in rows if r["kind"] == k) for k in ("single", "none", "multi")}
    print(
        f"{source.name}, split {args.split}: {counts['single']} single, {counts['none']} no-skill, {counts['multi']} multi"
    )
    with_semantic = not args.no_semantic and semantic.available()
    if not args.installed:
        with tempfile.TemporaryDirectory() as tmp:
            scores, threshold, installed = _scores(Path(tmp), None, lists, rows, dev, weights, with_semantic)
        print(f"{installed} skills installed")
    else:
        # A handful of skills, as most people install: K random draws of N (seeded 0..K-1); the
        # requests whose skill is among them (acceptable skills narrowed to those installed), every
        # no-skill message, and the two-request messages whose skills both are.
        scores, thresholds = {}, []
        for seed in range(args.samples):
            chosen = random.Random(seed).sample(listed(lists), args.installed)
            with tempfile.TemporaryDirectory() as tmp:
                drawn, threshold, _ = _scores(Path(tmp), chosen, lists, rows, dev, weights, with_semantic)
            thresholds.append(threshold)
            for label, score in drawn.items():
                scores.setdefault(label, Score()).extend(score)
        single = len(scores["lexical"].single)
        threshold = sum(thresholds) / len(thresholds) if with_semantic else 0.0
        print(f"{args.installed} skills installed, {args.samples} draws: {single} single requests routed in all")
    print("lexical-only        ", scores["lexical"].line())
    if with_semantic:
        print("semantic + lexical  ", scores["semantic"].line())
        print(f"cosine to description (threshold {threshold:.2f} tuned on dev)  ", scores["cosine"].line())


def _scores(tmp: Path, chosen, lists, rows, dev, weights, with_semantic: bool) -> tuple[dict, float, int]:
    """Each router's score over ``rows``, with the skills of ``lists`` (or the ``chosen`` paths)
    installed under ``tmp``; the baseline's threshold; how many skills were installed."""
    os.environ["SKILLYARD_HOME"] = str(tmp / "home")  # a fresh index, no recent-use state
    root = install(tmp / "skills", lists, chosen)
    lexical = SkillSet.from_dir(root, semantic=False, ignore_gates=True, weights=weights)
    if chosen is not None:
        rows, dev = _installed_only(rows, set(lexical.names)), _installed_only(dev, set(lexical.names))
    scores = {"lexical": run_skillset(lexical, rows)}
    threshold = 0.0
    if with_semantic:
        sem = SkillSet.from_dir(root, semantic=True, ignore_gates=True, weights=weights)
        scores["semantic"] = run_skillset(sem, rows)
        scores["cosine"], threshold = description_baseline(sem, dev, rows)
    return scores, threshold, len(lexical.names)


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


if __name__ == "__main__":
    main()
