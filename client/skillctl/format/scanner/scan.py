"""Walk a skill's files and apply the rules, with each line's context (script, doc code, prose).

Code files are also read through what they hide: the literals ``decode`` decodes and the strings
``pyflow`` folds across the skill's own Python modules are scanned as code at their line, and
JavaScript goes through ``js``. Markdown and text are instructions to an agent (``instructions``).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from pathlib import Path

from skillctl.format.scanner import decode, instructions, js, pyflow
from skillctl.format.scanner import rules as R
from skillctl.format.scanner.evidence import capped, finding, line_at, line_of, mask, of_rule

MAX_FILE_BYTES = 2 * 1024 * 1024  # text beyond this is data, not instructions or code


def scan_tree(root: Path) -> list[dict]:
    texts: dict[str, str | None] = {}
    findings: list[dict] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        rel = path.relative_to(root).as_posix()
        texts[rel], found = _read(path, rel)
        findings += found
    # The manifest matters to the rules about code (requires.*) and to mcp.command only: a skill
    # of Markdown alone, most of them, is judged without parsing it (half the scan's time).
    needs_manifest = any(_is_code(rel) for rel in texts) or "mcp" in _frontmatter(texts.get("SKILL.md") or "")
    declared, manifest_findings = _declared(root) if needs_manifest else ((set(), set()), [])
    findings += manifest_findings
    flows = pyflow.analyse({rel: t for rel, t in texts.items() if t is not None and rel.endswith(".py")})
    for rel, text in texts.items():
        if text is not None:
            findings += _scan_text(text, rel, declared, flows.get(rel))
    return findings


def _frontmatter(text: str) -> str:
    """The frontmatter's text, roughly (up to the second ``---``): enough to see an ``mcp`` key."""
    end = text.find("\n---", 3)
    return text[: end if end > 0 else 0]


def _declared(root: Path) -> tuple[tuple[set[str], set[str]], list[dict]]:
    """(env vars, binaries) the manifest declares (requires, primaryEnv, vars), and the
    ``mcp.command`` finding when SKILL.md names a command to run on the host."""
    from skillctl.format.parse import parse_skill_md

    try:  # the frontmatter is all that is needed: no file walk, no digests
        data = (root / "SKILL.md").read_bytes()
    except OSError:
        return (set(), set()), []
    m = parse_skill_md(data, folder_name=root.name).manifest
    if m is None:
        return (set(), set()), []
    env = (
        set(m.requires.env)
        | ({m.primary_env} if getattr(m, "primary_env", "") else set())
        | set(getattr(m, "vars", {}) or {})
    )
    return (env, set(m.requires.bins) | set(m.requires.any_bins)), _mcp(m.mcp, data)


def _mcp(spec, data: bytes) -> list[dict]:  # noqa: ANN001
    if spec is None or not spec.command:
        return []
    text = data.decode("utf-8", "replace")
    at = text.find("mcp")
    shown = " ".join([spec.command, *spec.args])
    env = f" (env: {', '.join(sorted(spec.env))})" if spec.env else ""
    return [
        finding(
            "mcp.command",
            "medium",
            "SKILL.md",
            line_of(text, at) if at >= 0 else None,
            f"runs `{shown}` on the host when the skill loads{env}",
            shown,
        )
    ]


def _read(path: Path, rel: str) -> tuple[str | None, list[dict]]:
    try:
        with path.open("rb") as fh:
            head = fh.read(MAX_FILE_BYTES)
    except OSError:
        return None, []
    if head.startswith(R.BINARY_MAGIC) or rel.lower().endswith((".exe", ".dll", ".so", ".dylib")):
        return None, [of_rule("archive.binary", rel, None, "")]
    if b"\0" in head[:8192]:
        return None, []  # other binary data (images, fonts): nothing to read
    return head.decode("utf-8", "replace"), []


def _is_code(rel: str) -> bool:
    return rel.lower().endswith(R.CODE_SUFFIXES) or (rel.startswith("scripts/") and not rel.endswith((".md", ".txt")))


def _scan_text(text: str, rel: str, declared: tuple[set[str], set[str]], flow: pyflow.ModuleFlow | None) -> list[dict]:
    is_code = _is_code(rel)
    found = list(_scan_lines(text, rel, "script" if is_code else None))
    if is_code:
        found += _scan_script(text, rel, declared)
        found += _hidden(text, rel, flow)
        if js.is_js(rel):
            found += [of_rule(rule, rel, line_of(text, at), line_at(text, at)) for rule, at in js.scan(text)]
    elif any(word in text for word in _DECODE_WORDS):
        found += _hidden_instructions(text, rel)
    return capped(found)


# A document hiding instructions in base64 must name it for the agent to decode: only then are its runs read.
_DECODE_WORDS = ("base64", "Base64", "BASE64", "b64")


def _hidden_instructions(text: str, rel: str) -> list[dict]:
    """Instructions a document hides in base64 or hex, read as instructions at the run's line."""
    found = []
    for item in decode.payloads(text, runs_only=True):
        if item.how.startswith(("base64", "hex")):
            line = line_of(text, item.offset)
            for f in _scan_lines(item.text, rel, None):
                if f["severity"] in _HIDDEN_WEIGHT:
                    found.append(_relocated(f, line, f"decoded from {item.how} at line {line}"))
    return found


def _relocated(f: dict, line: int, where: str) -> dict:
    """A finding inside hidden text, moved to the literal's line and weighed up a step when medium:
    hiding a behaviour is itself a signal."""
    return {**f, "severity": _HIDDEN_WEIGHT[f["severity"]], "line": line, "excerpt": f"{where}: {f['excerpt']}"[:160]}


class _LineKinds:
    """Where each line sits, worked out only for the lines asked about: scripts are all code;
    markdown has fences, indented code and prose (a fence line toggles code until the next)."""

    _FENCE = re.compile(r"^[ \t]*(?:```|~~~)", re.M)

    def __init__(self, text: str, lines: list[str], starts: list[int], code: str | None) -> None:
        self.lines, self.code = lines, code
        self.fences = [] if code else [bisect.bisect_right(starts, m.start()) - 1 for m in self._FENCE.finditer(text)]

    def __getitem__(self, i: int) -> str:
        if self.code:
            return self.code
        at = bisect.bisect_left(self.fences, i)
        if at < len(self.fences) and self.fences[at] == i:
            return "fence"
        line = self.lines[i]
        indented = line.startswith(("    ", "\t")) and line.strip()
        return "doc_code" if at % 2 or indented or "`" in line else "prose"

    def block_code(self, i: int) -> bool:
        """In a fenced or indented block (a line with inline code is still a sentence)."""
        if self.code:
            return True
        at = bisect.bisect_left(self.fences, i)
        if at % 2 or (at < len(self.fences) and self.fences[at] == i):
            return True
        line = self.lines[i]
        return line.startswith(("    ", "\t")) and bool(line.strip())


# (rule, pattern, prefilter): the pattern is tried only when the prefilter says the lowered
# text could hold a match (most skills mention none of these words: that is the speed).
def _any(*words: str):  # noqa: ANN202
    return lambda t: any(w in t for w in words)  # substring tests in C beat one alternation regex


_COMMANDS = (
    ("shell.pipe_to_shell", R.PIPE_TO_SHELL, lambda t: "|" in t and ("curl" in t or "wget" in t)),
    (
        "shell.reverse_shell",
        R.REVERSE_SHELL,
        _any("/dev/tcp", "pty.spawn", "socat", "mkfifo", " -e /bin/", " -c /bin/"),
    ),
    ("shell.destructive_rm", R.DESTRUCTIVE_RM, _any("rm -", "rm --")),
    (
        "exec.obfuscated",
        R.OBFUSCATED,
        _any(
            "b64decode",
            "fromhex",
            "unhexlify",
            "a2b_base64",
            "atob",
            "base64 -",
            "xxd -r",
            "marshal.loads",
            "zlib.decompress",
            "codecs.decode",
            "__import__",
        ),
    ),
)


_SECRET_WORDS = (
    "AKIA",
    "PRIVATE KEY-----",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "xox",
    "AIza",
    "_live_",
    "T3BlbkFJ",
    "glpat-",
)


_HAS_SECRET_WORD = _any(*_SECRET_WORDS)


def _scan_lines(text: str, rel: str, code: str | None) -> Iterator[dict]:
    """Every rule on the whole text at once (a cheap word test first), each match then placed
    on its line and weighed by what the line is."""
    lines = [line[: R.MAX_LINE] for line in text.splitlines()]
    text = "\n".join(lines)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    kinds = _LineKinds(text, lines, starts, code)
    lowered = text.lower()

    def located(pattern):  # noqa: ANN001, ANN202
        for match in pattern.finditer(text):
            number = bisect.bisect_right(starts, match.start())
            yield match, number, kinds[number - 1], lines[number - 1]

    yield from _unicode(text, located, rel, code is None)
    if code is None:
        # lower() keeps every position when it keeps the length (each character maps to one).
        aligned = (
            lowered
            if len(lowered) == len(text)
            else "\n".join(line.lower()[: len(line)].ljust(len(line)) for line in lines)
        )
        doc = instructions.Text(lines, starts, aligned, kinds.block_code)
        for rule, number in instructions.scan(doc):
            yield of_rule(rule, rel, number, lines[number - 1])
    for rule, pattern, could in _COMMANDS:
        if could(lowered):
            for _, number, where, line in located(pattern):
                if severity := R.weigh(rule, where):
                    yield finding(rule, severity, rel, number, R.RULES[rule].title, line)
    if _HAS_SECRET_WORD(text):
        for pattern in R.SECRETS:
            for match, number, _, line in located(pattern):
                tail = text[match.end() : match.end() + 20]
                if not R.PLACEHOLDER.search(match.group(0) + tail):
                    yield finding(
                        "secrets.hardcoded", "high", rel, number, R.RULES["secrets.hardcoded"].title, mask(line, match)
                    )


_TAG_RANGE = frozenset(map(chr, range(0xE0000, 0xE0080)))
_BIDI_CHARS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_ZERO_WIDTH_CHARS = frozenset("\u200b\u200c\u200d\u2060")


def _unicode(text: str, located, rel: str, instructions: bool) -> Iterator[dict]:  # noqa: ANN001
    if text.isascii():
        return
    present = set(text)  # one pass in C; each pattern runs only when its characters occur
    tags = not present.isdisjoint(_TAG_RANGE)
    for _, number, _, line in _first_per_line(located(R.TAG_CHARS) if tags else ()):
        hidden = "".join(chr(ord(c) - 0xE0000) for c in line if 0xE0000 <= ord(c) <= 0xE007F)
        yield finding(
            "unicode.tag_characters",
            "critical",
            rel,
            number,
            f"hidden text in tag characters: {hidden[:80]!r}",
            R.TAG_CHARS.sub("", line),
        )
    for _, number, _, line in _first_per_line(located(R.BIDI) if not present.isdisjoint(_BIDI_CHARS) else ()):
        yield finding(
            "unicode.bidi_override",
            "high",
            rel,
            number,
            R.RULES["unicode.bidi_override"].title,
            line.encode("unicode_escape").decode(),
        )
    if instructions:
        zero_width = not present.isdisjoint(_ZERO_WIDTH_CHARS)
        for _, number, _, line in _first_per_line(located(R.ZERO_WIDTH) if zero_width else ()):
            yield finding(
                "unicode.zero_width",
                "medium",
                rel,
                number,
                R.RULES["unicode.zero_width"].title,
                line.encode("unicode_escape").decode(),
            )


def _first_per_line(matches):  # noqa: ANN001, ANN202
    seen = set()
    for item in matches:
        if item[1] not in seen:
            seen.add(item[1])
            yield item


def _scan_script(text: str, rel: str, declared: tuple[set[str], set[str]]) -> list[dict]:
    found = []
    network = R.NETWORK_SEND.search(text)
    creds = R.CREDENTIAL_PATHS.search(text)
    if creds:
        rule = "credentials.exfiltration" if network else "credentials.read"
        found.append(of_rule(rule, rel, line_of(text, creds.start()), line_at(text, creds.start())))
    dump = R.ENV_DUMP.search(text)
    if dump and (network or "|" in dump.group(0)):
        found.append(of_rule("env.dump_to_network", rel, line_of(text, dump.start()), line_at(text, dump.start())))
    env, bins = declared
    for match in [*R.PY_ENV.finditer(text), *R.JS_ENV.finditer(text)]:
        name = next(g for g in match.groups() if g)
        if name not in env and name not in R.COMMON_ENV:
            env.add(name)  # one finding per variable
            found.append(
                finding(
                    "requires.undeclared_env",
                    "low",
                    rel,
                    line_of(text, match.start()),
                    f"reads ${name}, which `requires.env` does not list",
                    line_at(text, match.start()),
                )
            )
    for match in R.PY_BIN.finditer(text):
        name = match.group(1)
        if name not in bins and name not in R.COMMON_BINS:
            bins.add(name)
            found.append(
                finding(
                    "requires.undeclared_bin",
                    "low",
                    rel,
                    line_of(text, match.start()),
                    f"runs `{name}`, which `requires.bins` does not list",
                    line_at(text, match.start()),
                )
            )
    return found


# What a hidden payload's findings weigh: hiding a behaviour is itself a signal, so a medium
# finding inside an encoded literal weighs high; low findings (undeclared env) say nothing more.
_HIDDEN_WEIGHT = {"medium": "high", "high": "high", "critical": "critical"}
# A code-like payload: what a dropper decodes before running it.
_CODE_LIKE = re.compile(
    r"\bimport\s|\bos\.|\bsubprocess\b|\brequire\(|\bexec\(|\beval\(|\bsystem\(|/bin/|\bcurl\s|\bwget\s|"
    r"\bsocket\b|\bchild_process\b|\bpowershell\b"
)
_RUNS = re.compile(
    r"\b(?:exec|eval|compile|system|popen|Popen|execSync|spawn|spawnSync|Function|check_output|getoutput)\s*\(|"
    r"__builtins__|\|\s*(?:ba|z)?sh\b|\b(?:ba|z)?sh\s+-c\b"
)
_BUILT_NAMES = frozenset(
    "os subprocess system popen exec eval __import__ __builtins__ builtins child_process execSync spawn "
    "spawnSync execFile Function pty socket ctypes marshal getattr Popen check_output getoutput".split()
)
_FLOW_RULES = {"dynamic_obfuscated": "exec.obfuscated", "exec_decoded": "exec.obfuscated"}


def _hidden(text: str, rel: str, flow: pyflow.ModuleFlow | None) -> list[dict]:
    """Findings in what the file decodes or assembles, reported at the literal's line."""
    found = []
    for line, how, payload in _payloads(text, flow):
        where = f"decoded from {how} at line {line}"
        if how in ("concatenation", "chr", "escapes") and payload.strip() in _BUILT_NAMES:
            found.append(of_rule("exec.obfuscated", rel, line, f"{where}: {payload.strip()!r} built from pieces"))
            continue
        for f in [*_scan_lines(payload, rel, "script"), *_scan_script(payload, rel, ({"*"}, {"*"}))]:
            if f["severity"] in _HIDDEN_WEIGHT and not f["rule"].startswith("requires."):
                found.append(_relocated(f, line, where))
        if how not in ("concatenation", "f-string", "join") and _CODE_LIKE.search(payload) and _RUNS.search(text):
            found.append(of_rule("exec.obfuscated", rel, line, f"{where}: {payload[:100]}"))
    lines = text.splitlines() if flow and flow.flows else []
    for item in flow.flows if flow else ():
        rule = _FLOW_RULES.get(item.kind, "exec.dynamic_lookup")
        source = lines[item.line - 1] if 0 < item.line <= len(lines) else ""
        found.append(of_rule(rule, rel, item.line, f"{item.detail}: {source.strip()}"))
    return found


def _payloads(text: str, flow: pyflow.ModuleFlow | None) -> Iterator[tuple[int, str, str]]:
    seen: set[str] = set()
    items = [(line_of(text, d.offset), d.how, d.text) for d in decode.payloads(text)]
    for line, how, payload in [*items, *(flow.built if flow else [])]:
        if payload not in seen:
            seen.add(payload)
            yield line, how, payload
