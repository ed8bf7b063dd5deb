"""Routing speed with 1,000 installed skills (generated from ../shared/corpus).

Prints in-process p50/p95 per message, lexical-only and with semantic (one MiniLM + WordLlama encode
per message, 1 thread), and the wall time of a fresh ``skillctl route`` process (lexical-only, warm
index) next to a fresh ``python -c pass`` on the same machine. Targets: p50 <= 2 ms lexical,
<= 10 ms semantic; a fresh process <= 300 ms. Also, with no target: a fresh ``skillctl hook
claude`` (what Claude Code runs on every prompt), lexical and semantic.

    python bench/route_speed.py [--skills 1000] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "client"))

from common import skillctl_code  # noqa: E402

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


def per_message(skills, rounds: int = 20) -> tuple[float, float]:
    times = []
    for _ in range(rounds):
        for q in QUERIES:
            start = time.perf_counter()
            skills.route(q, recent=False)
            times.append(time.perf_counter() - start)
    times.sort()
    return statistics.median(times) * 1000, times[int(len(times) * 0.95)] * 1000


def fresh(cmd: list[str], env: dict, runs: int = 15, stdin: str | None = None) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            cmd, env=env, input=stdin, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def hook_runs(skillctl: list[str], skills_dir: Path, env: dict, base: float) -> None:
    """``skillctl hook claude`` as Claude Code runs it on every prompt: a project whose
    .agents/skills holds the same skills, the event on stdin; lexical and (if installed) semantic."""
    import json

    project = skills_dir.parent / "project"
    (project / ".agents").mkdir(parents=True, exist_ok=True)
    (project / ".agents" / "skills").symlink_to(skills_dir, target_is_directory=True)
    event = json.dumps({"session_id": "bench", "cwd": str(project), "prompt": QUERIES[0]})
    modes = [("lexical", "0")] + ([("semantic", "1")] if env.get("SKILLYARD_SEMANTIC") != "0" else [])
    for mode, flag in modes:
        mode_env = {**env, "SKILLYARD_SEMANTIC": flag, "SKILLYARD_HOOK_HELPER": "0"}
        subprocess.run(
            [*skillctl, "hook", "claude"], env=mode_env, input=event, text=True, capture_output=True, check=True
        )
        took = fresh([*skillctl, "hook", "claude"], mode_env, runs=7, stdin=event)
        print(f"fresh process: `skillctl hook claude` ({mode}, no helper) {took:6.1f} ms (ratio {took / base:.1f}x)")
        warm_env = {**mode_env, "SKILLYARD_HOOK_HELPER": "1", "SKILLYARD_HOOK_IDLE_SECONDS": "10"}
        subprocess.run(
            [*skillctl, "hook", "claude"], env=warm_env, input=event, text=True, capture_output=True, check=True
        )
        time.sleep(3)  # the helper the first hook started loads the model
        took = fresh([*skillctl, "hook", "claude"], warm_env, runs=15, stdin=event)
        print(
            f"fresh process: `skillctl hook claude` ({mode}, warm helper) {took:6.1f} ms "
            f"(ratio {took / base:.1f}x; target p50 < 200 ms with semantic)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, skills_dir = Path(tmp) / "home", Path(tmp) / "skills"
        os.environ["SKILLYARD_HOME"] = str(home)
        count = make_skills(args.corpus, skills_dir, args.skills)
        from skillctl.routing import semantic
        from skillctl.skillset import SkillSet

        start = time.perf_counter()
        lexical = SkillSet.from_dir(skills_dir, semantic=False)
        print(f"{count} skills generated from the corpus; index built in {time.perf_counter() - start:.1f} s")
        p50, p95 = per_message(lexical)
        print(f"in-process, lexical only:       p50 {p50:6.2f} ms   p95 {p95:6.2f} ms   (target p50 <= 2 ms)")
        if semantic.available():
            start = time.perf_counter()
            sem = SkillSet.from_dir(skills_dir, semantic=True)
            sem.route("warm up")
            print(f"semantic vectors for {count} skills in {time.perf_counter() - start:.1f} s (cached in the index)")
            p50, p95 = per_message(sem, rounds=5)
            print(f"in-process, semantic + lexical: p50 {p50:6.2f} ms   p95 {p95:6.2f} ms   (target p50 <= 10 ms)")
        else:
            print("semantic: the `semantic` extra is not installed; skipped")
        env = {**os.environ, "SKILLYARD_HOME": str(home)}
        print(f"skillctl from {skillctl_code()}")
        skillctl = [sys.executable, "-m", "skillctl"]
        route = [*skillctl, "route", QUERIES[0], "--skills-dir", str(skills_dir), "--no-semantic"]
        subprocess.run(route, env=env, capture_output=True, check=True)  # the index is warm
        base = fresh([sys.executable, "-c", "pass"], env)
        cli = fresh(route, env)
        print(
            f"fresh process: `python -c pass` {base:6.1f} ms; `skillctl route` (lexical) {cli:6.1f} ms"
            f" (target <= 300 ms; ratio {cli / base:.1f}x)"
        )
        if not semantic.available():
            env["SKILLYARD_SEMANTIC"] = "0"
        hook_runs(skillctl, skills_dir, env, base)


if __name__ == "__main__":
    main()
