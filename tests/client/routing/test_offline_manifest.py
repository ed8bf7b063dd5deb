"""The offline manifest generator: every corpus skill, and what it extracts."""

from __future__ import annotations

from skillctl.format import parse_skill_md
from skillctl.routing.offline_manifest import MAX_KEYWORDS, MAX_QUERIES, offline_manifest


def manifest_of(text: str) -> dict:
    report = parse_skill_md(text)
    assert report.manifest is not None, report.findings
    return offline_manifest(report.manifest, report.body)


def test_use_when_clauses_become_queries_without_who_asks():
    result = manifest_of(
        "---\nname: contacts\ndescription: Look up contacts. Use when Claude needs to resolve phone "
        "numbers to names, finding contact info, or searching the address book.\n---\n# Contacts\n"
    )
    assert result["queries"][:3] == [
        "resolve phone numbers to names",
        "finding contact info",
        "searching the address book",
    ]


def test_quoted_examples_and_when_to_use_bullets_are_queries():
    result = manifest_of(
        '---\nname: gitmoji\ndescription: Use when the user says "write a gitmoji commit".\n---\n'
        "## When to Use\n- add an emoji to my commit message\n* pick the right **gitmoji**\n"
        "## Installation\n- pip install gitmoji\n"
    )
    assert "write a gitmoji commit" in result["queries"]
    assert "add an emoji to my commit message" in result["queries"]
    assert "pick the right gitmoji" in result["queries"]
    assert "pip install gitmoji" not in result["queries"]


def test_generic_headings_are_not_queries_but_task_headings_are():
    result = manifest_of(
        "---\nname: sheets\ndescription: Spreadsheet helper.\n---\n## Overview\n## Quick Start\n"
        "## Merge Two Sheets\n## Step 1: open\n"
    )
    assert "merge two sheets" in result["queries"]
    assert not any(q in result["queries"] for q in ("overview", "quick start", "step 1: open"))


def test_author_category_wins_else_vocabulary_else_general():
    assert manifest_of("---\nname: a-b\ndescription: x y z.\ncategory: Finance\n---\n")["category"] == "finance"
    assert manifest_of("---\nname: k8s\ndescription: Deploy services to Kubernetes.\n---\n")["category"] == "devops"
    assert manifest_of("---\nname: zz\ndescription: Quux frobnication.\n---\n")["category"] == "general"


def test_every_corpus_skill_gets_a_complete_manifest(corpus_dir):
    made = 0
    for path in sorted(corpus_dir.rglob("SKILL.md")):
        report = parse_skill_md(path.read_bytes(), folder_name=path.parent.name)
        if report.manifest is None:
            continue  # the ~5% broken ones are refused at publish: no manifest is ever made
        result = offline_manifest(report.manifest, report.body)
        assert set(result) == {"source", "category", "keywords", "phrases", "queries", "negative"}
        assert result["category"] and len(result["keywords"]) <= MAX_KEYWORDS
        assert len(result["queries"]) <= MAX_QUERIES
        assert all(isinstance(q, str) and q.strip() for q in result["queries"])
        made += 1
    assert made > 3000


def test_a_hostile_body_is_read_in_one_pass():
    """A published SKILL.md is untrusted: a heading or a "When to use" bullet of 300,000 spaces
    kept the old lazy patterns backtracking for many minutes (past the check's time limit)."""
    spaces = " " * 300_000
    body = (
        f"# Fill a{spaces}form ##\n\n## When to use\n\n- fill a{spaces}form for the user\n"
        f"- open {'(http://' * 20_000}\n- merge two pdf files\n"
    )
    m = manifest_of(
        f"---\nname: forms\ndescription: Fill PDF forms. Use when filling forms; merging pdfs.\n---\n{body}"
    )
    assert "merge two pdf files" in m["queries"]
    assert "filling forms" in m["queries"] and "fill a form for the user" in m["queries"]
    assert all(len(q) <= 200 for q in m["queries"])  # MAX_QUERY_CHARS
