"""Regenerate client/skillctl/routing/data/known-words.txt: the words routing's speller knows are
spelled right, so it never "corrects" them (client/skillctl/routing/spelling.py).

Four sources, merged (ASCII letters only, 4 to 24 long, lower case, sorted in byte order, one per
line: the speller looks words up by binary search in the file):
- English: pyspellchecker's English frequency list (MIT; built from OpenSubtitles);
- the words of WordLlama's tokenizer (MIT; many programming words: const, grep, backend);
- the words of agent skills: every word in three or more SKILL.md files of ../shared/corpus
  (real skills from public repositories: rebase, xcode, deps), a word three authors spelled alike;
- scripts/programming-words.txt: programming words the others miss (memoization, debounce).

    .venv/bin/pip install pyspellchecker && .venv/bin/python scripts/known-words.py
"""

import gzip
import json
import re
from collections import Counter
from importlib.resources import files
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "client" / "skillctl" / "routing" / "data" / "known-words.txt"
CORPUS = ROOT.parent / "shared" / "corpus"
CORPUS_MIN_FILES = 3
PROGRAMMING = ROOT / "scripts" / "programming-words.txt"
WORD = re.compile(r"[a-z]{4,24}")


def english() -> set[str]:
    counts = json.loads(gzip.decompress(files("spellchecker").joinpath("resources", "en.json.gz").read_bytes()))
    return {w for w in counts if w.isascii() and WORD.fullmatch(w)}


def tokenizer_words() -> set[str]:
    path = files("wordllama").joinpath("tokenizers", "l2_supercat_tokenizer_config.json")
    vocab = json.loads(path.read_text("utf-8"))["model"]["vocab"]
    return {t[1:].lower() for t in vocab if t.startswith("\u2581") and WORD.fullmatch(t[1:].lower())}


def skill_words() -> set[str]:
    seen: Counter[str] = Counter()
    for path in CORPUS.rglob("SKILL.md"):
        seen.update(set(WORD.findall(path.read_text("utf-8", errors="replace").lower())))
    return {w for w, n in seen.items() if n >= CORPUS_MIN_FILES}


def programming_words() -> set[str]:
    lines = (line.strip() for line in PROGRAMMING.read_text("utf-8").splitlines())
    return {w for w in lines if w and not w.startswith("#") and WORD.fullmatch(w)}


def main() -> None:
    if not CORPUS.is_dir():
        raise SystemExit(f"the corpus is not at {CORPUS}")
    parts = {
        "English": english(),
        "tokenizer": tokenizer_words(),
        "skills": skill_words(),
        "programming": programming_words(),
    }
    words = sorted(set().union(*parts.values()))
    OUT.write_text("\n".join(words) + "\n", encoding="ascii")
    print(", ".join(f"{k} {len(v)}" for k, v in parts.items()), f"-> {len(words)} words in {OUT}")


if __name__ == "__main__":
    main()
