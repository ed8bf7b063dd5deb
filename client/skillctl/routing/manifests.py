"""Routing manifests: what routing knows about a skill (DESIGN section 7).

A manifest comes from the registry (LLM-generated: category, keywords, phrases, synthetic user
queries, a negative constraint) when the installed version has one, or is built offline from the
skill's name, description, headings and ``triggers``: no network, no model. Registry manifests
are stored under ``paths.state_dir()``, never inside a skill folder.

A skill installed from a folder, archive, URL or git gets a stored manifest too
(:func:`installed_manifest`, saved by the installer): the same generator the registry's manifest
check runs (:mod:`skillctl.routing.llm_manifest`: the LLM's with ``SKILLYARD_LLM_*``, else the
offline one), with the ``keywords.json`` a skill ships (seed 000's ``category``, ``keywords``,
``phrases``) taking the place of the generated fields it gives.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from skillctl import paths
from skillctl.format.manifest import Triggers
from skillctl.routing.text import STOPWORDS, split_name, stem, terms, without_code_blocks, words

MAX_KEYWORDS = 20  # DESIGN section 7: 15-20 keywords per skill
MAX_PHRASES = 15  # DESIGN section 7: 10-15 phrases per skill
MAX_HEADINGS = 30  # a long SKILL.md's later headings are details, not what the skill is for
# Passages: what the body says the skill does, in its author's words (list items, the opening
# paragraph), each a semantic example of a skill without synthetic queries. Read from the body's
# first PASSAGE_SCAN characters (PASSAGE_LINE of a line); items of PASSAGE_WORDS words, at most MAX_PASSAGES of them.
MAX_PASSAGES = 12
PASSAGE_WORDS = (3, 30)
OPENING_WORDS = 120
PASSAGE_SCAN = 40_000
PASSAGE_LINE = 1_000  # characters of a line read (a list item of 30 words is far shorter)
# An author's `triggers`, in the author's order (each word is 2 points; the validator warns past these).
MAX_TRIGGER_WORDS = Triggers.MAX_WORDS
MAX_TRIGGER_PATTERNS = Triggers.MAX_PATTERNS
# Words that say nothing about what a skill does ("pdf-tool", "git-helper").
GENERIC_NAME_WORDS = frozenset({"skill", "skills", "tool", "tools", "helper", "plugin", "util"})

# "Do not use for X", "Don't use it when X", "Not for X", "NOT suitable for X" up to the sentence end.
_NEGATIVE = re.compile(
    r"(?:\b(?:do not|don't|never) use (?:it |this (?:skill )?)?(?:for|when|to|if|with)\b"
    r"|\bnot (?:for|suitable for|intended for|meant for)\b)([^.;\n]*)",
    re.IGNORECASE,
)
# A whole heading line, trimmed in Python: a lazy text group before optional trailing spaces and
# hashes backtracked cubically on a heading line of many spaces (5,000: minutes).
_HEADING = re.compile(r"^#{1,3}[ \t]+(\S.*)$", re.MULTILINE)
MAX_HEADING_CHARS = 200
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
# Bounded, and a bracket or angle bracket ends an attempt: linear on a hostile line ("[[[[...").
_LINK = re.compile(r"!?\[([^\[\]\n]{0,200})\]\([^()\n]{0,500}\)")
_MARKUP = re.compile(r"[*_`]+|<[^<>\n]{0,200}>")


@dataclass
class RoutingManifest:
    name: str
    description: str = ""
    brief: str = ""  # the author's `brief_description` (seed 004), what the catalog tier shows
    category: str = ""
    keywords: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)  # synthetic user queries (semantic centroid)
    passages: list[str] = field(default_factory=list)  # from the body: examples when there are no queries
    negative: str = ""  # the negative constraint: what the skill is NOT for
    trigger_words: list[str] = field(default_factory=list)  # `triggers` keywords + verbs
    trigger_verbs: list[str] = field(default_factory=list)  # the verbs among them (count beside a keyword)
    trigger_patterns: list[str] = field(default_factory=list)  # `triggers` regular expressions
    source: str = "offline"  # "offline" (built at indexing) | "registry" (a stored manifest)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> RoutingManifest:
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in known})


def split_negative(description: str) -> tuple[str, str]:
    """(what the skill is for, what it is not for) from a description."""
    negatives = [m.group(1).strip(" :,-") for m in _NEGATIVE.finditer(description)]
    positive = _NEGATIVE.sub(" ", description)
    return positive, "; ".join(n for n in negatives if n)


def headings(body: str) -> list[str]:
    """The text of the body's level 1-3 headings (closing hashes and emphasis dropped), at most
    :data:`MAX_HEADINGS`, each cut to :data:`MAX_HEADING_CHARS` characters."""
    found = []
    for match in _HEADING.finditer(body):
        text = match.group(1).rstrip().rstrip("#").strip("*`_ \t")[:MAX_HEADING_CHARS]
        if text:
            found.append(text)
            if len(found) == MAX_HEADINGS:
                break
    return found


def _plain(line: str) -> str:
    """A markdown line as words: links as their text, emphasis, code marks and tags dropped."""
    return " ".join(_MARKUP.sub(" ", _LINK.sub(r"\1", line)).split())


def passages(body: str) -> list[str]:
    """What the body says the skill is for, as short passages: its start (the first
    :data:`OPENING_WORDS` words of its text, headings and lists included) and its list items of
    :data:`PASSAGE_WORDS` words, in body order. Code blocks and tables are left out.

    A skill's requests share words with its body more often than with its one-line description
    ("pull out the action items and add them as tasks" for a task tracker whose body lists
    "Pull action items from meeting notes").
    """
    found: list[str] = []
    opening: list[str] = []
    for raw in without_code_blocks(body[:PASSAGE_SCAN]).splitlines():
        raw = raw[:PASSAGE_LINE]
        line = raw.strip()
        if not line or line.startswith("|") or set(line) <= set("-=*_#> "):
            continue
        if item := _LIST_ITEM.match(raw):
            line = _plain(item.group(1))
            if PASSAGE_WORDS[0] <= len(line.split()) <= PASSAGE_WORDS[1]:
                found.append(line)
        elif raw.startswith(("    ", "\t")):  # indented code
            continue
        if len(opening) < OPENING_WORDS:
            opening.extend(_plain(line.lstrip("#> ")).split())
    if len(opening) >= PASSAGE_WORDS[0]:
        found.insert(0, " ".join(opening[:OPENING_WORDS]))
    return list(dict.fromkeys(found))[:MAX_PASSAGES]


def _phrases_of(text: str) -> list[str]:
    """Adjacent pairs of content words ("pull request", "docker image"), stopwords breaking runs."""
    found, previous = [], None
    for word in words(text):
        if word in STOPWORDS or not word.isalpha() or len(word) < 3:
            previous = None
            continue
        if previous:
            found.append(f"{previous} {word}")
        previous = word
    return found


def _ranked(weights: dict[str, float], first_seen: dict[str, int], limit: int) -> list[str]:
    return sorted(weights, key=lambda t: (-weights[t], first_seen[t]))[:limit]


def _weigh(weights: defaultdict[str, float], first_seen: dict[str, int], items: list[str], weight: float) -> None:
    for item in items:
        weights[item] += weight
        first_seen.setdefault(item, len(first_seen))


def offline_keywords(name: str, positive: str, heads: list[str], queries: list[str]) -> list[str]:
    """Name words first, then description terms, then headings and query terms, by weight."""
    weights: defaultdict[str, float] = defaultdict(float)
    first: dict[str, int] = {}
    name_terms = [stem(w) for w in split_name(name) if w not in GENERIC_NAME_WORDS]
    _weigh(weights, first, [t for t in name_terms if t not in STOPWORDS], 6)
    _weigh(weights, first, terms(positive), 2)
    _weigh(weights, first, [t for h in heads for t in terms(h)], 1)
    # A term is typical of the queries when several of them use it, not when one repeats it.
    query_df = Counter(t for q in queries for t in set(terms(q)))
    _weigh(weights, first, [t for t, n in query_df.items() if n >= 2 for _ in range(n)], 0.5)
    return [t for t in _ranked(weights, first, MAX_KEYWORDS * 2) if len(t) > 1][:MAX_KEYWORDS]


def offline_phrases(name: str, positive: str, heads: list[str]) -> list[str]:
    weights: defaultdict[str, float] = defaultdict(float)
    first: dict[str, int] = {}
    name_words = [w for w in split_name(name) if w not in GENERIC_NAME_WORDS]
    if len(name_words) > 1:
        _weigh(weights, first, [" ".join(name_words)], 3)
    _weigh(weights, first, _phrases_of(positive), 2)
    _weigh(weights, first, [p for h in heads for p in _phrases_of(h)], 1)
    return _ranked(weights, first, MAX_PHRASES)


def build_offline(
    *,
    name: str,
    description: str,
    body: str = "",
    trigger_keywords: Sequence[str] = (),
    trigger_verbs: Sequence[str] = (),
    trigger_patterns: Sequence[str] = (),
    category: str = "",
    queries: Sequence[str] = (),
) -> RoutingManifest:
    """A routing manifest from what every skill has; ``queries`` when a caller has examples."""
    positive, negative = split_negative(description)
    heads = headings(body)
    return RoutingManifest(
        name=name,
        description=description,
        category=category,
        keywords=offline_keywords(name, positive, heads, list(queries)),
        phrases=offline_phrases(name, positive, heads),
        queries=list(queries),
        passages=passages(body),
        negative=negative,
        trigger_words=list(dict.fromkeys([*trigger_keywords, *trigger_verbs]))[:MAX_TRIGGER_WORDS],
        trigger_verbs=[v for v in dict.fromkeys(trigger_verbs) if v not in trigger_keywords],
        trigger_patterns=list(dict.fromkeys(trigger_patterns))[:MAX_TRIGGER_PATTERNS],
    )


def from_skill(manifest, body: str) -> RoutingManifest:
    """The offline manifest of a parsed skill (``skillctl.format.Manifest`` + SKILL.md body)."""
    routing = build_offline(
        name=manifest.name,
        description=manifest.description,
        body=body,
        trigger_keywords=manifest.triggers.keywords,
        trigger_verbs=manifest.triggers.verbs,
        trigger_patterns=manifest.triggers.patterns,
        category=manifest.category or (manifest.tags[0] if manifest.tags else ""),
    )
    routing.brief = declared_brief(manifest)
    return routing


def declared_brief(manifest) -> str:
    """The ``brief_description`` an author wrote ("" when it is only the description's first
    sentence, which the parser fills in: the catalog then shows the whole description)."""
    from skillctl.format.fields import first_sentence

    brief = manifest.brief_description or ""
    return brief if brief != first_sentence(manifest.description) else ""


def merge_registry(offline: RoutingManifest, data: dict) -> RoutingManifest:
    """The registry's manifest over the offline one; the skill's own triggers always stay."""
    queries = data.get("queries") or data.get("synthetic_queries") or []
    negative = data.get("negative") or data.get("negative_constraint") or offline.negative
    return RoutingManifest(
        name=offline.name,
        description=offline.description,
        brief=offline.brief,
        category=str(data.get("category") or offline.category),
        keywords=[stem(k.lower()) if " " not in k else k.lower() for k in data.get("keywords", [])] or offline.keywords,
        phrases=[p.lower() for p in data.get("phrases", [])] or offline.phrases,
        queries=[str(q) for q in queries],
        passages=offline.passages,
        negative=negative if isinstance(negative, str) else "; ".join(map(str, negative)),
        trigger_words=offline.trigger_words,
        trigger_verbs=offline.trigger_verbs,
        trigger_patterns=offline.trigger_patterns,
        source="registry",
    )


# --- a manifest for a skill installed from elsewhere than a registry ------------------------

KEYWORDS_FILE = "keywords.json"  # seed 000's routing keywords, shipped beside SKILL.md
MAX_KEYWORDS_FILE = 64 * 1024  # a keyword list, not a corpus: a bigger file is ignored
KEYWORDS_FIELDS = {"keywords": MAX_KEYWORDS, "phrases": MAX_PHRASES}


def shipped_keywords(folder: Path) -> dict:
    """The usable fields of a skill's ``keywords.json`` ({} when absent, too big or malformed)."""
    path = Path(folder) / KEYWORDS_FILE
    try:
        if path.stat().st_size > MAX_KEYWORDS_FILE:
            return {}
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    found: dict = {}
    if isinstance(data.get("category"), str) and data["category"].strip():
        found["category"] = data["category"].strip().lower()[:64]
    for key, limit in KEYWORDS_FIELDS.items():
        items = [" ".join(i.split()) for i in data.get(key) or [] if isinstance(i, str) and i.strip()]
        if items:
            found[key] = list(dict.fromkeys(items))[:limit]
    return found


def installed_manifest(folder: Path, *, llm=None) -> dict | None:
    """The stored manifest of an installed skill folder: generated (``llm``: an
    ``LLMConfig``, else offline) with its shipped ``keywords.json`` over it; None when the
    folder has no readable SKILL.md."""
    from skillctl.format import load_skill
    from skillctl.routing.llm_manifest import manifest_fields

    report = load_skill(Path(folder))
    if report.manifest is None:
        return None
    data = manifest_fields(report.manifest, report.body, llm)
    shipped = shipped_keywords(folder)
    return {**data, **shipped, **({"keywords_file": True} if shipped else {})}


# --- registry manifests on disk (pm-install saves them after an install) -------------------


def registry_dir() -> Path:
    return paths.state_dir() / "routing" / "registry"


def registry_manifest_path(name: str) -> Path:
    return registry_dir() / f"{name}.json"


def save_registry_manifest(name: str, archive_sha256: str, data: dict) -> None:
    """Keep the registry's routing manifest of an installed version, outside the skill folder."""
    path = registry_manifest_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"archive_sha256": archive_sha256, "manifest": data}), "utf-8")
    tmp.replace(path)


def load_registry_manifest(name: str) -> dict | None:
    try:
        stored = json.loads(registry_manifest_path(name).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    data = stored.get("manifest") if isinstance(stored, dict) else None
    return data if isinstance(data, dict) else None


def phrase_key(phrase: str) -> str:
    """A phrase as the scorer matches it: stemmed content words joined by spaces."""
    return " ".join(terms(phrase))
