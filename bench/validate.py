"""Time our validation of every corpus skill against the reference validator, same run.

    .venv/bin/python bench/validate.py [CORPUS_SKILLS_DIR] [--repeat N]

Both validators run in this process on the same folders: ours is what `skillctl validate` calls
for each path (`skillctl.format.load.load_skill`, which also digests the skill's files); the
reference is `skills_ref.validator.validate` from the `skills-ref` package. Prints both times,
the ratio (ours / reference; under 1.0 means we are faster) and how many folders each accepts.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "client"))

DEFAULT_CORPUS = Path(os.environ.get("SKILLYARD_CORPUS", ROOT.parent / "shared" / "corpus")) / "skills"


def skill_folders(corpus: Path) -> list[Path]:
    return sorted(Path(d) for d, _dirs, files in os.walk(corpus) if any(f.lower() == "skill.md" for f in files))


def time_ours(folders: list[Path]) -> tuple[float, int]:
    from skillctl.format.load import load_skill

    start = time.perf_counter()
    accepted = sum(load_skill(folder).valid for folder in folders)
    return time.perf_counter() - start, accepted


def time_reference(folders: list[Path]) -> tuple[float, int]:
    from skills_ref.validator import validate

    start = time.perf_counter()
    accepted = 0
    for folder in folders:
        try:
            accepted += not validate(folder)
        except Exception:  # the reference raises on some inputs (e.g. not UTF-8): a rejection
            pass
    return time.perf_counter() - start, accepted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs of each")
    args = parser.parse_args()
    folders = skill_folders(args.corpus)
    if not folders:
        print(f"no skills under {args.corpus}", file=sys.stderr)
        return 2
    ours = min((time_ours(folders) for _ in range(args.repeat)), key=lambda r: r[0])
    ref = min((time_reference(folders) for _ in range(args.repeat)), key=lambda r: r[0])
    n = len(folders)
    print(f"folders:      {n}")
    print(f"skillctl:     {ours[0]:8.3f} s  ({ours[0] / n * 1e3:.3f} ms/skill)  accepts {ours[1]} ({ours[1] / n:.1%})")
    print(f"skills-ref:   {ref[0]:8.3f} s  ({ref[0] / n * 1e3:.3f} ms/skill)  accepts {ref[1]} ({ref[1] / n:.1%})")
    ratio = ours[0] / ref[0]
    print(f"ratio:        {ratio:.3f}x (skillctl / skills-ref; < 1.0 is faster)")
    return 0 if ratio <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
