"""Routing speed with 1,000 installed skills (generated from ../shared/corpus).

Prints in-process p50/p95 per message, lexical-only and with semantic (MiniLM + WordLlama, 1
thread), for the bench's messages and for messages of two requests joined by a bare "and"; the
wall time of a fresh ``skillctl route`` process (lexical-only, warm index) next to a fresh
``python -c pass``; and a fresh ``skillctl hook claude`` (what Claude Code runs on every
prompt), lexical and semantic, with its warm helper and without (cold). Targets: p50 <= 2 ms
lexical, <= 10 ms semantic; a fresh route <= 300 ms; the hook <= 200 ms warm, <= 600 ms cold.

``--before DIR`` (the ``client`` folder of another checkout, e.g. a worktree of main) times that
code in the same run, interleaved with this checkout's (each fresh process alternates between
the two; the in-process numbers alternate whole runs), each with its own state folder, so a
machine shared with other jobs loads both alike. Every line carries the load average.

    python bench/route_speed.py [--skills 1000] [--corpus DIR] [--before DIR] [--rounds 2]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLIENT = ROOT / "client"
sys.path.insert(0, os.environ.get("ROUTE_SPEED_CLIENT") or str(CLIENT))  # a --before child: that code

CORPUS = ROOT.parent / "shared" / "corpus" / "skills"
QUERIES = [
    "deploy the api to kubernetes staging",
    "convert this pdf to markdown",
    "review my pull request",
    "write unit tests for the parser",
    "summarise this research paper",
    "hi, how are you today?",
    "make a slack gif of a dancing cat",
    "query the postgres database for last week's orders",
    "set up a github actions workflow",
    "translate the readme into french",
    "what's the weather",
    "analyse single cell rna-seq data",
    "build an mcp server in typescript",
    "thanks, that's all",
    "design a landing page with tailwind",
    "find security bugs in this solidity contract",
]
# Two requests joined by a bare "and" (written for this measure): routing reads the whole
# message and each half (bench/README, issue 37 round 2).
SPLIT = [
    "convert this pdf to markdown and email it to the team",
    "resize these product photos and upload them to the shared drive",
    "run the test suite and open a pull request with the fix",
    "export the sales spreadsheet to csv and plot the monthly totals",
    "transcribe this meeting recording and summarise the decisions",
    "lint the terraform files and deploy the staging stack",
]


def make_skills(corpus: Path, dest: Path, count: int) -> int:
    from skillctl.format import load_skill

    seen: set[str] = set()
    for skill_md in sorted(corpus.rglob("SKILL.md")):
        report = load_skill(skill_md.parent)
        name = report.name
        if not name or name in seen or report.manifest is None or not report.manifest.description:
            continue
        seen.add(name)
        folder = dest / f"{len(seen):04d}-{skill_md.parent.name}"
        folder.mkdir(parents=True)
        shutil.copyfile(skill_md, folder / "SKILL.md")
        if len(seen) == count:
            break
    return len(seen)


def per_message(skills, messages: list[str], rounds: int) -> tuple[float, float]:
    times = []
    for _ in range(rounds):
        for q in messages:
            start = time.perf_counter()
            skills.route(q, recent=False)
            times.append(time.perf_counter() - start)
    times.sort()
    return statistics.median(times) * 1000, times[int(len(times) * 0.95)] * 1000


def in_process(skills_dir: Path) -> dict:
    """This process's code routing the bench's messages (a child run of the script)."""
    from skillctl.routing import semantic
    from skillctl.skillset import SkillSet

    found: dict = {"load": os.getloadavg()[0]}
    lexical = SkillSet.from_dir(skills_dir, semantic=False)
    found["lexical"] = per_message(lexical, QUERIES, 20)
    if semantic.available():
        sem = SkillSet.from_dir(skills_dir, semantic=True)
        sem.route("warm up")
        found["semantic"] = per_message(sem, QUERIES, 5)
        found["split"] = per_message(sem, SPLIT, 5)
    return found


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def fresh(cmds: dict[str, tuple[list[str], dict]], runs: int, stdin: str | None = None) -> dict[str, float]:
    """Median wall time (ms) of each command, the commands alternating run by run."""
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, (cmd, env) in cmds.items():
            start = time.perf_counter()
            subprocess.run(
                cmd, env=env, input=stdin, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
            )
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1000 for name, t in times.items()}


class Tree:
    """One checkout's code: its client folder and its own state folder."""

    def __init__(self, name: str, client: Path, home: Path) -> None:
        self.name, self.client, self.home = name, client, home
        compileall.compile_dir(client / "skillctl", quiet=1)  # as installed: no compiling in the timed runs
        self.env = {
            **os.environ,
            "PYTHONPATH": str(client),
            "SKILLYARD_HOME": str(home),
            "ROUTE_SPEED_CLIENT": str(client),
        }
        self.skillctl = [sys.executable, "-m", "skillctl"]


def show(label: str, values: dict[str, float], base: float, target: str = "") -> None:
    for name, ms in values.items():
        print(f"{name:6} {label} {ms:7.1f} ms (ratio {ms / base:.1f}x{target}; {load()})")
    if len(values) == 2:
        before, after = values["before"], values["after"]
        print(f"       after / before: {after / before:.2f}")


def in_process_runs(trees: list[Tree], skills_dir: Path, rounds: int) -> None:
    runs: dict[str, list[dict]] = {t.name: [] for t in trees}
    for _ in range(rounds):
        for tree in trees:
            child = [sys.executable, __file__, "--in-process", str(skills_dir)]
            out = subprocess.run(child, env=tree.env, capture_output=True, text=True, check=True).stdout
            runs[tree.name].append(json.loads(out.splitlines()[-1]))
    targets = {"lexical": "p50 <= 2 ms", "semantic": "p50 <= 10 ms", "split": "no target"}
    for measure, target in targets.items():
        for tree in trees:
            got = [r[measure] for r in runs[tree.name] if measure in r]
            if not got:
                continue
            p50, p95 = statistics.median(g[0] for g in got), statistics.median(g[1] for g in got)
            loads = "/".join(f"{r['load']:.2f}" for r in runs[tree.name])
            print(
                f"{tree.name:6} in-process, {measure:8}: p50 {p50:6.2f} ms  p95 {p95:6.2f} ms  ({target}; load {loads})"
            )


def hook_runs(trees: list[Tree], skills_dir: Path, base: float) -> None:
    """``skillctl hook claude`` as Claude Code runs it on every prompt: a project whose
    .agents/skills holds the same skills, the event on stdin; lexical and (if installed) semantic."""
    from skillctl.routing import semantic

    project = skills_dir.parent / "project"
    (project / ".agents").mkdir(parents=True, exist_ok=True)
    (project / ".agents" / "skills").symlink_to(skills_dir, target_is_directory=True)
    event = json.dumps({"session_id": "bench", "cwd": str(project), "prompt": QUERIES[0]})
    modes = [("lexical", "0")] + ([("semantic", "1")] if semantic.available() else [])
    for mode, flag in modes:
        cold = {t.name: {**t.env, "SKILLYARD_SEMANTIC": flag, "SKILLYARD_HOOK_HELPER": "0"} for t in trees}
        warm = {
            name: {**env, "SKILLYARD_HOOK_HELPER": "1", "SKILLYARD_HOOK_IDLE_SECONDS": "20"}
            for name, env in cold.items()
        }
        hook = {t.name: [*t.skillctl, "hook", "claude"] for t in trees}
        for name in hook:  # the index (and the optimised graph) in place; then the helpers started
            subprocess.run(hook[name], env=cold[name], input=event, text=True, capture_output=True, check=True)
        show(f"`hook claude` ({mode}, no helper)", fresh({n: (hook[n], cold[n]) for n in hook}, 7, event), base)
        for name in hook:
            subprocess.run(hook[name], env=warm[name], input=event, text=True, capture_output=True, check=True)
        time.sleep(4)  # the helpers the hooks started load the model
        took = fresh({n: (hook[n], warm[n]) for n in hook}, 15, event)
        show(f"`hook claude` ({mode}, warm helper)", took, base, "; target p50 < 200 ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--before", type=Path, help="another checkout's client folder, timed in the same run")
    parser.add_argument("--rounds", type=int, default=2, help="in-process runs per checkout (alternating)")
    parser.add_argument("--in-process", type=Path, help=argparse.SUPPRESS)  # a child: one in-process run, as JSON
    args = parser.parse_args()
    if args.in_process:
        print(json.dumps(in_process(args.in_process)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        skills_dir = Path(tmp) / "skills"
        count = make_skills(args.corpus, skills_dir, args.skills)
        trees = ([Tree("before", args.before.resolve(), Path(tmp) / "home-before")] if args.before else []) + [
            Tree("after" if args.before else "this", CLIENT, Path(tmp) / "home")
        ]
        print(f"{count} skills generated from the corpus; " + ", ".join(f"{t.name}: {t.client}" for t in trees))
        for tree in trees:  # each index built (and its vectors) before anything is timed
            subprocess.run(
                [*tree.skillctl, "route", "warm up", "--skills-dir", str(skills_dir)],
                env=tree.env,
                capture_output=True,
                check=True,
            )
        in_process_runs(trees, skills_dir, args.rounds)
        base = fresh({"python": ([sys.executable, "-c", "pass"], trees[-1].env)}, 15)["python"]
        print(f"fresh process: `python -c pass` {base:6.1f} ms ({load()})")
        route = {
            t.name: ([*t.skillctl, "route", QUERIES[0], "--skills-dir", str(skills_dir), "--no-semantic"], t.env)
            for t in trees
        }
        show("`skillctl route` (lexical)", fresh(route, 15), base, "; target <= 300 ms")
        hook_runs(trees, skills_dir, base)


if __name__ == "__main__":
    main()
