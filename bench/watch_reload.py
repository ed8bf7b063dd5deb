"""Live reload with 1,000 installed skills (generated from ../shared/corpus): how long from a
SKILL.md written on disk to ``route()`` seeing it, through ``SkillSet.watch()``.

Prints p50/p95/max of edit -> routed and add -> routed over N rounds each, and the cost of one
``reload()`` when nothing changed next to loading the SkillSet from its warm index (what every
``skillctl route`` process does). Target (issue 19): a change is routed within 1 s.

    python bench/watch_reload.py [--skills 1000] [--rounds 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "client"))
sys.path.insert(0, str(ROOT / "bench"))

from route_speed import CORPUS, make_skills  # noqa: E402 - the same 1,000 skills as the routing speed bench

TARGET_S = 1.0
DEADLINE_S = 10.0


def skill_md(name: str, word: str) -> str:
    return f"---\nname: {name}\ndescription: Tend the {word} with {word} tools.\n---\n# {name}\n"


def until_routed(skills, message: str, name: str, started: float) -> float:
    """Seconds from ``started`` until ``message`` routes to ``name`` (which it must not yet)."""
    while time.perf_counter() - started < DEADLINE_S:
        if [m.name for m in skills.route(message, recent=False)][:1] == [name]:
            return time.perf_counter() - started
        time.sleep(0.005)
    raise SystemExit(f"{name} was not routed within {DEADLINE_S} s")


def summary(label: str, times: list[float]) -> None:
    times = sorted(times)
    p95 = times[max(0, int(len(times) * 0.95) - 1)]
    ok = "met" if times[-1] <= TARGET_S else "NOT MET"
    print(
        f"{label:<22} p50 {statistics.median(times) * 1000:6.0f} ms  p95 {p95 * 1000:6.0f} ms  "
        f"max {times[-1] * 1000:6.0f} ms  (target <= {TARGET_S:g} s: {ok})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(SKILLYARD_HOME=f"{tmp}/home", SKILLYARD_SEMANTIC="0")
        from skillctl.skillset import SkillSet

        root = Path(tmp) / "skills"
        count = make_skills(CORPUS, root, args.skills)
        skills = SkillSet.from_dir(root, semantic=False)
        watcher = skills.watch()
        watcher.wait_armed()
        edits, adds = [], []
        for n in range(args.rounds):
            word, other = f"zorblax{n}", f"quuxley{n}"
            assert "edited" not in [m.name for m in skills.route(f"tend my {word}", recent=False)]
            started = time.perf_counter()
            (root / "0001-edited").mkdir(exist_ok=True)
            (root / "0001-edited" / "SKILL.md").write_text(skill_md("edited", word))
            edits.append(until_routed(skills, f"tend my {word}", "edited", started))
            started = time.perf_counter()
            (root / f"new-{n}").mkdir()
            (root / f"new-{n}" / "SKILL.md").write_text(skill_md(f"new-{n}", other))
            adds.append(until_routed(skills, f"tend my {other}", f"new-{n}", started))
        skills.close()
        reloads = [_timed(skills.reload) for _ in range(20)]
        loads = [_timed(lambda: SkillSet.from_dir(root, semantic=False)) for _ in range(20)]
    print(f"{count} skills, {args.rounds} rounds, debounce {watcher.debounce_ms} ms")
    summary("edit -> routed", edits)
    summary("new skill -> routed", adds)
    print(
        f"reload() with nothing changed: p50 {statistics.median(reloads) * 1000:.1f} ms; "
        f"a SkillSet from its warm index: p50 {statistics.median(loads) * 1000:.1f} ms; "
        f"ratio {statistics.median(reloads) / statistics.median(loads):.2f}x"
    )


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
