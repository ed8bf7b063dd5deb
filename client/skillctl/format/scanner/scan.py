"""Walk a skill's files and apply the rules, with each line's context (script, doc code, prose)."""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from pathlib import Path

from skillctl.format.scanner import rules as R

MAX_FILE_BYTES = 2 * 1024 * 1024  # text beyond this is data, not instructions or code
MAX_FINDINGS_PER_RULE = 20  # per file: enough to show a pattern, not a flood
EXCERPT = 160


def scan_tree(root: Path) -> list[dict]:
    declared = _declared(root)
    findings: list[dict] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        rel = path.relative_to(root).as_posix()
        findings += _scan_file(path, rel, declared)
    return findings


def _declared(root: Path) -> tuple[set[str], set[str]]:
    """(env vars, binaries) the manifest declares: requires, primaryEnv, vars."""
    from skillctl.format import load_skill

    report = load_skill(root)
    m = report.manifest
    if m is None:
        return set(), set()
    env = (
        set(m.requires.env)
        | ({m.primary_env} if getattr(m, "primary_env", "") else set())
        | set(getattr(m, "vars", {}) or {})
    )
    return env, set(m.requires.bins) | set(m.requires.any_bins)


def _scan_file(path: Path, rel: str, declared: tuple[set[str], set[str]]) -> list[dict]:
    try:
        with path.open("rb") as fh:
            head = fh.read(MAX_FILE_BYTES)
    except OSError:
        return []
    if head.startswith(R.BINARY_MAGIC) or rel.lower().endswith((".exe", ".dll", ".so", ".dylib")):
        return [
            _finding("archive.binary", "high", rel, None, "a compiled executable or library; it cannot be reviewed", "")
        ]
    if b"\0" in head[:8192]:
        return []  # other binary data (images, fonts): nothing to read
    text = head.decode("utf-8", "replace")
    is_code = rel.lower().endswith(R.CODE_SUFFIXES) or (
        rel.startswith("scripts/") and not rel.endswith((".md", ".txt"))
    )
    found = list(_scan_lines(text, rel, "script" if is_code else None))
    if is_code:
        found += _scan_script(text, rel, declared)
    return _capped(found)


def _line_kinds(lines: list[str], code: str | None) -> list[str]:
    """Where each line sits: scripts are all code; markdown has fences, indented code and prose."""
    if code:
        return [code] * len(lines)
    kinds, fenced = [], False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            kinds.append("fence")
            continue
        indented = line.startswith(("    ", "\t")) and line.strip()
        kinds.append("doc_code" if fenced or indented or "`" in line else "prose")
    return kinds


# (rule, pattern, prefilter): the pattern is tried only when the prefilter says the lowered
# text could hold a match (most skills mention none of these words: that is the speed).
def _all(*words: str):  # noqa: ANN202
    return lambda t: all(w in t for w in words)


def _any(*words: str):  # noqa: ANN202
    return lambda t: any(w in t for w in words)


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
_INJECTIONS = (
    (
        "injection.override",
        R.OVERRIDE,
        lambda t: (
            _any("previous", "prior", "earlier", "preceding", "above", "system")(t)
            and _any("instruction", "direction", "prompt", "rules")(t)
        ),
    ),
    (
        "injection.conceal",
        R.CONCEAL,
        lambda t: (
            "silently" in t
            or ("the user" in t or "them" in t)
            and _any(
                "not tell",
                "n't tell",
                "never tell",
                "hide",
                "without",
                "not inform",
                "not reveal",
                "not show",
                "not mention",
                "never show",
                "never mention",
                "never reveal",
                "never inform",
            )(t)
        ),
    ),
    (
        "injection.exfiltrate",
        R.EXFILTRATE,
        lambda t: (
            _any("http", "webhook", "endpoint", "remote server")(t)
            and _any(
                "conversation",
                "history",
                "key",
                "credential",
                "secret",
                "password",
                "token",
                "environment",
                ".env",
                "id_rsa",
            )(t)
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


def _scan_lines(text: str, rel: str, code: str | None) -> Iterator[dict]:
    """Every rule on the whole text at once (a cheap word test first), each match then placed
    on its line and weighed by what the line is."""
    lines = [line[: R.MAX_LINE] for line in text.splitlines()]
    text = "\n".join(lines)
    kinds = _line_kinds(lines, code)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    lowered = text.lower()

    def located(pattern):  # noqa: ANN001, ANN202
        for match in pattern.finditer(text):
            number = bisect.bisect_right(starts, match.start())
            yield match, number, kinds[number - 1], lines[number - 1]

    yield from _unicode(text, located, rel, code is None)
    for rule, pattern, could in _INJECTIONS if code is None else ():
        if could(lowered):
            for _, number, where, line in located(pattern):
                if where == "prose":
                    yield _finding(rule, R.RULES[rule].severity, rel, number, R.RULES[rule].title, line)
    for rule, pattern, could in _COMMANDS:
        if could(lowered):
            for _, number, where, line in located(pattern):
                if severity := R.weigh(rule, where):
                    yield _finding(rule, severity, rel, number, R.RULES[rule].title, line)
    if any(w in text for w in _SECRET_WORDS):
        for pattern in R.SECRETS:
            for match, number, _, line in located(pattern):
                tail = text[match.end() : match.end() + 20]
                if not R.PLACEHOLDER.search(match.group(0) + tail):
                    yield _finding(
                        "secrets.hardcoded", "high", rel, number, R.RULES["secrets.hardcoded"].title, _mask(line, match)
                    )


def _unicode(text: str, located, rel: str, instructions: bool) -> Iterator[dict]:  # noqa: ANN001
    if text.isascii():
        return
    for _, number, _, line in _first_per_line(located(R.TAG_CHARS)):
        hidden = "".join(chr(ord(c) - 0xE0000) for c in line if 0xE0000 <= ord(c) <= 0xE007F)
        yield _finding(
            "unicode.tag_characters",
            "critical",
            rel,
            number,
            f"hidden text in tag characters: {hidden[:80]!r}",
            R.TAG_CHARS.sub("", line),
        )
    for _, number, _, line in _first_per_line(located(R.BIDI)):
        yield _finding(
            "unicode.bidi_override",
            "high",
            rel,
            number,
            R.RULES["unicode.bidi_override"].title,
            line.encode("unicode_escape").decode(),
        )
    if instructions:
        for _, number, _, line in _first_per_line(located(R.ZERO_WIDTH)):
            yield _finding(
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
        found.append(
            _finding(
                rule,
                R.RULES[rule].severity,
                rel,
                _line_of(text, creds.start()),
                R.RULES[rule].title,
                _line_at(text, creds.start()),
            )
        )
    dump = R.ENV_DUMP.search(text)
    if dump and (network or "|" in dump.group(0)):
        found.append(
            _finding(
                "env.dump_to_network",
                "critical",
                rel,
                _line_of(text, dump.start()),
                R.RULES["env.dump_to_network"].title,
                _line_at(text, dump.start()),
            )
        )
    env, bins = declared
    for match in [*R.PY_ENV.finditer(text), *R.JS_ENV.finditer(text)]:
        name = next(g for g in match.groups() if g)
        if name not in env and name not in R.COMMON_ENV:
            env.add(name)  # one finding per variable
            found.append(
                _finding(
                    "requires.undeclared_env",
                    "low",
                    rel,
                    _line_of(text, match.start()),
                    f"reads ${name}, which `requires.env` does not list",
                    _line_at(text, match.start()),
                )
            )
    for match in R.PY_BIN.finditer(text):
        name = match.group(1)
        if name not in bins and name not in R.COMMON_BINS:
            bins.add(name)
            found.append(
                _finding(
                    "requires.undeclared_bin",
                    "low",
                    rel,
                    _line_of(text, match.start()),
                    f"runs `{name}`, which `requires.bins` does not list",
                    _line_at(text, match.start()),
                )
            )
    return found


def _finding(rule: str, severity: str, path: str, line: int | None, message: str, excerpt: str) -> dict:
    return {
        "rule": rule,
        "severity": severity,
        "path": path,
        "line": line,
        "message": message,
        "excerpt": excerpt.strip()[:EXCERPT],
    }


def _mask(line: str, match) -> str:  # noqa: ANN001
    secret = match.group(0)
    return line.replace(secret, secret[:6] + "…" + "*" * 6)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _line_at(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text[start : end if end >= 0 else None][: R.MAX_LINE]


def _capped(found: list[dict]) -> list[dict]:
    counts: dict[str, int] = {}
    kept = []
    for f in found:
        counts[f["rule"]] = counts.get(f["rule"], 0) + 1
        if counts[f["rule"]] <= MAX_FINDINGS_PER_RULE:
            kept.append(f)
    return kept
