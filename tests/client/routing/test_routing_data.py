"""Routing's three kinds of data stay apart (DESIGN section 7, issue 37): training rows (the gate
learns from them), development rows (choose between designs) and the sealed test set (judges,
run once). No row of any of them is quoted in routing code, its shipped data or its
unit tests: a rule or a test written from a benchmark row is fitting, not design.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "bench" / "data"
# Every sealed test set (bench/data/sealed*/requests.jsonl), those written later too; sealed3 always
# gets a test, which skips while its file is not in this checkout. The two earlier sealed sets, each
# run once, are training (set sealed1) and development (set sealed2) rows now: BENCH_DATA's rule.
SEALED = sorted({DATA / "sealed3" / "requests.jsonl"} | set(DATA.glob("sealed*/requests.jsonl")))
MIN_QUOTED_CHARS = 20  # a shorter row ("thanks!", "ok") is any chat's words, not a quotation of the set


def norm(text: str) -> str:
    return " ".join(text.lower().split())


def rows(path: Path) -> set[str]:
    lines = [line for line in path.read_text("utf-8").splitlines() if line.strip() and not line.startswith("#")]
    return {norm(json.loads(line)["query"]) if path.suffix == ".jsonl" else norm(line) for line in lines}


# The older benchmark's data, each a list of files: MetaTool's dev messages are benchmark rows too.
BENCH_DATA = {
    "training": [DATA / "routing" / "training.jsonl"],
    "development": [DATA / "routing" / "development.jsonl"],
    "metatool-dev": [DATA / "no_skill_dev.txt", DATA / "multi_dev.jsonl"],
}


def routing_sources() -> list[Path]:
    """Routing code, its shipped data, and the routing unit tests (this file reads, never quotes)."""
    code = ROOT / "client" / "skillctl" / "routing"
    tests = ROOT / "tests" / "client" / "routing"
    here = Path(__file__).resolve()
    found = [*code.glob("*.py"), code / "data" / "no-skill.txt", ROOT / "tests" / "client" / "cli" / "test_route.py"]
    return found + [p for p in tests.glob("*.py") if p.resolve() != here]


def quoted(path: Path, wanted: set[str]) -> list[str]:
    """Rows of ``wanted`` that ``path`` holds: a whole string literal (or line) equal to one, or a
    long one anywhere in its text (a comment, a docstring)."""
    text = path.read_text("utf-8")
    pieces = (
        {norm(n.value) for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        if path.suffix == ".py"
        else {norm(line) for line in text.splitlines()}
    )
    flat = norm(text) if path.suffix == ".py" else ""  # a data file quotes a row as a line of its own
    return sorted(r for r in wanted if r in pieces or (len(r) >= MIN_QUOTED_CHARS and r in flat))


def test_training_and_development_rows_do_not_overlap():
    training, development = rows(DATA / "routing" / "training.jsonl"), rows(DATA / "routing" / "development.jsonl")
    assert not training & development


@pytest.mark.parametrize("kind", list(BENCH_DATA))
def test_no_benchmark_row_is_quoted_in_routing_code_data_or_tests(kind):
    wanted = set().union(*(rows(path) for path in BENCH_DATA[kind]))
    found = {str(p.relative_to(ROOT)): q for p in routing_sources() if (q := quoted(p, wanted))}
    assert not found


@pytest.mark.parametrize("sealed_file", SEALED, ids=lambda p: p.parent.name)
def test_no_sealed_row_is_in_training_or_development_data_or_routing_code(sealed_file):
    if not sealed_file.exists():
        pytest.skip(f"{sealed_file.parent.name} is not in this checkout")
    sealed = rows(sealed_file)  # failures count the rows and never print them: the set stays sealed
    assert sealed, f"{sealed_file.parent.name} has no rows"
    for kind in ("training", "development"):
        shared = len(sealed & rows(DATA / "routing" / f"{kind}.jsonl"))
        assert shared == 0, f"{shared} {sealed_file.parent.name} rows in the {kind} data"
    found = {str(p.relative_to(ROOT)): len(q) for p in routing_sources() if (q := quoted(p, sealed))}
    assert not found, f"{sealed_file.parent.name} rows quoted (file: how many): {found}"
