"""JavaScript and TypeScript: text decoded in a file (``Buffer.from(x, 'base64')``, ``atob``,
``String.fromCharCode``) and run in the same file (``eval``, ``Function``, ``vm``, or
``child_process`` exec/spawn) is obfuscated execution; ``eval``/``new Function`` of anything
but a literal is worth a reviewer's look. The literals themselves are decoded by ``decode``."""

from __future__ import annotations

import re
from collections.abc import Iterator

JS_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")

DECODES = re.compile(
    r"\bBuffer\.from\([^)\n]{0,300}?['\"](?:base64|base64url|hex)['\"]|\batob\s*\(|\bString\.fromCharCode\s*\(|"
    r"\bzlib\.(?:inflate|gunzip|unzip|inflateRaw)(?:Sync)?\s*\(|\bdecodeURIComponent\s*\(\s*escape\b"
)
EVALUATES = re.compile(
    r"(?<![\w$.])eval\s*\(|\bnew\s+Function\s*\(|(?<![\w$.])Function\s*\(|\bvm\.(?:runIn\w*|Script|compileFunction)\b"
)
# exec/spawn count only in a file that loads child_process: `.exec(` is mostly RegExp.prototype.exec.
SPAWNS = re.compile(r"\b(?:exec|execSync|spawn|spawnSync|execFile|execFileSync|fork)\s*\(")
CHILD_PROCESS = re.compile(r"""child_process|['"]node:child_process['"]""")
EVAL_OF_VARIABLE = re.compile(r"(?<![\w$.])eval\s*\(\s*(?![\s'\"`)])|\bnew\s+Function\s*\(")


def is_js(rel: str) -> bool:
    return rel.lower().endswith(JS_SUFFIXES)


def scan(text: str) -> Iterator[tuple[str, int]]:
    """(rule, offset) of each finding: exec.obfuscated, else js.eval."""
    decodes = DECODES.search(text)
    runs = EVALUATES.search(text)
    if runs is None and CHILD_PROCESS.search(text):
        runs = SPAWNS.search(text)
    if decodes is not None and runs is not None:
        yield "exec.obfuscated", runs.start()
        return
    variable = EVAL_OF_VARIABLE.search(text)
    if variable is not None:
        yield "js.eval", variable.start()
