"""The offline routing manifest: what the manifest check makes when no LLM is configured.

The same fields as an LLM manifest (category, keywords, phrases, synthetic queries, a negative
constraint), built only from what the author wrote: name, description, headings, ``triggers``
and the body. Synthetic queries come from "use when …" clauses, "when to use" sections and
task-like headings, so routing gets examples of requests even without a model. Pure code: no
database, no network.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from skillctl.format import Manifest
from skillctl.routing.manifests import GENERIC_NAME_WORDS, headings, offline_phrases, split_negative
from skillctl.routing.text import STOPWORDS, split_name, stem, words

MAX_KEYWORDS = 20  # DESIGN §7: 15-20 keywords
MAX_QUERIES = 20  # DESIGN §7: ~20 synthetic user queries
MAX_QUERY_CHARS = 200  # a query is one request, not a paragraph
MIN_QUERY_WORDS = 2  # "Overview" or "Usage" is not a request

# "Use when X", "Use this skill to X", "Trigger when X", "Invoke for X" up to the sentence end.
_USE_WHEN = re.compile(
    r"\b(?:use|invoke|trigger|activate|apply|call)(?: (?:it|this|this skill|me))?"
    r"(?: only)? (?:when(?:ever)?|for|to|if|on)\b\s*([^.;\n]+)",
    re.IGNORECASE,
)
# Who wants it is not part of the request: "Claude needs to fill a form" -> "fill a form".
_WHO = re.compile(
    r"^(?:(?:when\s+)?(?:claude|the user|users?|you|an? agent|the agent|someone)\s+"
    r"(?:needs?|wants?|asks?|is asked|has|requests?|would like|says)\s+(?:to\s+)?|(?:when\s+)?asked\s+to\s+)",
    re.IGNORECASE,
)
# Every alternative starts at a fixed character or at the start of a whitespace run, and the
# items are stripped after: linear on a clause of many spaces (a skill's text is untrusted).
_LIST_SPLIT = re.compile(r",\s*(?:or|and)\s+|;|,\s+|(?<!\s)\s+or\s+(?=\w+ing\b)", re.IGNORECASE)
_WHEN_SECTION = re.compile(
    r"\b(?:when to use|use cases?|use this skill when|triggers?|example (?:requests|prompts))\b", re.I
)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(\S.*)$")  # the text is stripped after
_MARKUP = re.compile(r"[`*_\[\]<>\"“”]|\(https?://[^()\s]{0,500}\)")
_QUOTED = re.compile(r"[\"“]([^\"“”\n]{3,200})[\"”]")
# Headings that name a part of the document, not something a user asks for.
_GENERIC_HEADINGS = frozenset(
    """overview usage installation install setup requirements prerequisites configuration notes
    examples example references reference introduction summary troubleshooting faq license
    contributing changelog quick start quickstart getting started best practices tips resources
    description when to use output format workflow instructions important guidelines core
    principles table of contents contents see also api background context purpose features""".split()
)

# A small fixed vocabulary, so offline categories group skills the way a catalog filter does.
CATEGORIES: dict[str, frozenset[str]] = {
    "documents": frozenset("pdf docx word document documents xlsx excel spreadsheet pptx slides powerpoint".split()),
    "development": frozenset(
        "code coding git commit commits github repository refactor debug debugging api typescript python javascript rust test tests testing pull lint build compiler".split()
    ),
    "devops": frozenset(
        "deploy deployment kubernetes docker terraform ci cd pipeline cloud aws gcp azure server infrastructure monitoring".split()
    ),
    "data": frozenset(
        "data csv sql database query analytics dataset pandas chart charts visualization statistics etl".split()
    ),
    "writing": frozenset(
        "write writing blog article copy content essay edit editing resume email newsletter story".split()
    ),
    "design": frozenset("design ui ux figma css theme color colors brand logo image images art canvas svg".split()),
    "communication": frozenset("slack discord whatsapp telegram message messages chat sms teams notification".split()),
    "productivity": frozenset(
        "calendar notes todo task tasks schedule meeting meetings notion organize reminder".split()
    ),
    "security": frozenset("security vulnerability audit secrets secret auth authentication scan pentest".split()),
    "research": frozenset("research search paper papers science scientific literature web scrape browse".split()),
    "media": frozenset("video audio music podcast youtube spotify gif photo transcribe".split()),
}


def offline_manifest(manifest: Manifest, body: str) -> dict:
    """Category, keywords, phrases, queries and negative constraint of one parsed skill."""
    positive, negative = split_negative(manifest.description)
    heads = headings(body)
    queries = synthetic_queries(manifest, body, heads)
    return {
        "source": "offline",
        "category": category_of(manifest, positive),
        "keywords": keywords_of(manifest.name, positive, heads, queries),
        "phrases": offline_phrases(manifest.name, positive, heads),
        "queries": queries,
        "negative": negative,
    }


def category_of(manifest: Manifest, positive: str) -> str:
    """The author's category (or first tag), else the vocabulary category most words point at."""
    if manifest.category or manifest.tags:
        return (manifest.category or manifest.tags[0]).strip().lower()[:64]
    text = set(words(f"{' '.join(split_name(manifest.name))} {positive}"))
    scores = {name: len(text & vocab) for name, vocab in CATEGORIES.items()}
    best = max(scores, key=lambda name: scores[name])
    return best if scores[best] else "general"


def keywords_of(name: str, positive: str, heads: list[str], queries: list[str]) -> list[str]:
    """Content words by weight (name 6, description 2, headings and queries 1), as written."""
    weights: defaultdict[str, float] = defaultdict(float)
    surface: dict[str, Counter[str]] = {}

    def add(text: str, weight: float) -> None:
        for word in words(text):
            if word in STOPWORDS or len(word) < 3 or word in GENERIC_NAME_WORDS or word.isdigit():
                continue
            key = stem(word)
            weights[key] += weight
            surface.setdefault(key, Counter())[word] += 1

    add(" ".join(split_name(name)), 6)
    add(positive, 2)
    for text in [*heads, *queries]:
        add(text, 1)
    ranked = sorted(weights, key=lambda k: -weights[k])[:MAX_KEYWORDS]
    return [surface[k].most_common(1)[0][0] for k in ranked]


def synthetic_queries(manifest: Manifest, body: str, heads: list[str]) -> list[str]:
    """Requests a user might send, from the author's own words, most telling first."""
    found: list[str] = []
    found.extend(q for q in _QUOTED.findall(manifest.description) if len(q.split()) >= MIN_QUERY_WORDS)
    for match in _USE_WHEN.finditer(manifest.description):
        found.extend(_clause_items(match.group(1)))
    found.extend(_when_section_items(body))
    found.extend(t for t in manifest.triggers.keywords if len(t.split()) >= MIN_QUERY_WORDS)
    found.extend(h for h in heads if _task_like(h))
    found.extend(_sentences(split_negative(manifest.description)[0]))
    return _unique(found)[:MAX_QUERIES]


def _clause_items(clause: str) -> list[str]:
    items = [_WHO.sub("", part.strip()) for part in _LIST_SPLIT.split(clause)]
    return [item for item in items if len(item.split()) >= MIN_QUERY_WORDS] or [clause]


def _when_section_items(body: str) -> list[str]:
    """Bullets under a "When to use" (or "Use cases", "Triggers") heading."""
    items: list[str] = []
    inside = False
    for line in body.splitlines():
        if line.lstrip().startswith("#"):
            inside = bool(_WHEN_SECTION.search(line))
            continue
        bullet = _BULLET.match(line) if inside else None
        if bullet:
            items.append(_WHO.sub("", bullet.group(1).strip()))
    return items


def _task_like(heading: str) -> bool:
    lowered = heading.lower().strip(" :")
    content = [w for w in words(lowered) if w not in STOPWORDS]
    return (
        len(content) >= MIN_QUERY_WORDS
        and lowered not in _GENERIC_HEADINGS
        and not any(w in _GENERIC_HEADINGS for w in content[:1])
        and not heading.strip().startswith(("Step ", "Phase ", "Option "))
    )


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 3]


def _unique(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        text = " ".join(_MARKUP.sub("", item).split()).strip(" .:;,-")[:MAX_QUERY_CHARS]
        key = text.lower()
        if len(text.split()) >= MIN_QUERY_WORDS and key not in seen:
            seen.add(key)
            out.append(" ".join(w.lower() if w.istitle() and len(w) > 1 else w for w in text.split()))
    return out
