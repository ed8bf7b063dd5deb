"""A finding's evidence: the dict every rule module reports, with its excerpt cut and secrets masked."""

from __future__ import annotations

import re

from skillctl.format.scanner.rules import MAX_LINE, RULES

EXCERPT = 160  # one line of a terminal or a table cell: enough to recognise the match
MAX_FINDINGS_PER_RULE = 20  # per file: enough to show a pattern, not a flood


def finding(rule: str, severity: str, path: str, line: int | None, message: str, excerpt: str) -> dict:
    return {
        "rule": rule,
        "severity": severity,
        "path": path,
        "line": line,
        "message": message,
        "excerpt": excerpt.strip()[:EXCERPT],
    }


def of_rule(rule: str, path: str, line: int | None, excerpt: str, severity: str | None = None) -> dict:
    """A finding with the rule's own severity and title."""
    return finding(rule, severity or RULES[rule].severity, path, line, RULES[rule].title, excerpt)


def mask(line: str, match: re.Match) -> str:
    secret = match.group(0)
    return line.replace(secret, secret[:6] + "…" + "*" * 6)


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def line_at(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text[start : end if end >= 0 else None][:MAX_LINE]


def capped(found: list[dict]) -> list[dict]:
    counts: dict[str, int] = {}
    kept = []
    seen = set()
    for f in found:
        key = (f["rule"], f["line"], f["excerpt"])
        if key in seen:
            continue  # the same evidence found twice (a literal decoded by two routes)
        seen.add(key)
        counts[f["rule"]] = counts.get(f["rule"], 0) + 1
        if counts[f["rule"]] <= MAX_FINDINGS_PER_RULE:
            kept.append(f)
    return kept
