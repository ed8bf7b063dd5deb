"""The security scanner over every skill of ../shared/corpus, next to `skillctl validate` on the
same folders, in the same process (target: scan <= 2x validate).

    python bench/scan.py [--corpus DIR]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "client"))

from skillctl.format import load_skill  # noqa: E402
from skillctl.format.scanner import scan_folder  # noqa: E402

CORPUS = Path(os.environ.get("SKILLYARD_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus")) / "skills"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    folders = sorted({p.parent for p in args.corpus.rglob("SKILL.md")})
    start = time.perf_counter()
    for folder in folders:
        load_skill(folder)
    validate = time.perf_counter() - start
    start = time.perf_counter()
    verdicts = collections.Counter(scan_folder(folder).verdict for folder in folders)
    scanning = time.perf_counter() - start
    print(
        f"{len(folders)} corpus skills: validate {validate:.1f} s, scan {scanning:.1f} s "
        f"(ratio {scanning / validate:.2f}x; target <= 2x)"
    )
    print("verdicts:", ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))


if __name__ == "__main__":
    main()
