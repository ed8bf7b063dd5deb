"""The skills block of an agent's prompt, by progressive disclosure (DESIGN section 7).

Tiers: ``none`` (nothing); ``breadcrumb`` (``[N skills available]``); ``catalog`` (name +
description + location of every skill the model may invoke: the Agent Skills
``<available_skills>`` XML, markdown or JSON); ``full`` (the chosen skills' instructions, vars
substituted, ``{baseDir}`` resolved, secrets masked, resources listed but not read, a token
estimate each). ``auto``: ``full`` when routing chose skills for the message; when it chose
none, the catalog if it fits ``CATALOG_BUDGET_TOKENS``; else, when some skills come near the
message, the catalog cut to the budget (closest skills first, descriptions cut to their first
sentence, then the farthest skills left out), so the model still learns that a skill routing
missed exists; else (nothing near, and a catalog too dear for every turn) the breadcrumb, as
seed 004 does for skills that do not match. The catalog shows an author's
``brief_description`` (seed 004) instead of the description. An empty block is "".

Rendering is pure; :func:`load_full` reads one skill folder.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

TIERS = ("auto", "none", "breadcrumb", "catalog", "full")
FORMATS = ("xml", "markdown", "json")
RESOURCE_DIRS = ("scripts/", "references/", "assets/")
CHARS_PER_TOKEN = 4  # rough estimate for English text and code
# The catalog given when routing picked nothing: every turn pays for it, so a few percent of a
# small model's context at most (~50 skills with one-sentence descriptions).
CATALOG_BUDGET_TOKENS = 2000


@dataclass
class CatalogItem:
    name: str
    description: str
    location: str  # the SKILL.md path the agent reads


@dataclass
class FullSkill:
    name: str
    location: str
    instructions: str
    resources: list[str] = field(default_factory=list)
    tokens: int = 0


def estimate_tokens(text: str) -> int:
    return max(1, (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN)


def breadcrumb(count: int) -> str:
    return f"[{count} skills available]" if count else ""


def catalog(items: list[CatalogItem], fmt: str = "xml") -> str:
    if not items:
        return ""
    if fmt == "json":
        return json.dumps({"available_skills": [asdict(i) for i in items]}, ensure_ascii=False, indent=2)
    if fmt == "markdown":
        lines = ["## Available skills", ""]
        lines += [f"- **{i.name}**: {_one_line(i.description)} (`{i.location}`)" for i in items]
        return "\n".join(lines)
    parts = ["<available_skills>"]
    for i in items:
        parts += [
            "<skill>",
            f"<name>{escape(i.name)}</name>",
            f"<description>{escape(i.description)}</description>",
            f"<location>{escape(i.location)}</location>",
            "</skill>",
        ]
    parts.append("</available_skills>")
    return "\n".join(parts)


def catalog_within(items: list[CatalogItem], fmt: str = "xml", budget: int = CATALOG_BUDGET_TOKENS) -> str:
    """The catalog in at most ``budget`` tokens: first sentences, then the first skills only."""
    text = catalog(items, fmt)
    if estimate_tokens(text) <= budget:
        return text
    items = [CatalogItem(i.name, _first_sentence(i.description), i.location) for i in items]
    low, high = 0, len(items)  # the most skills that fit with the "N more" line
    while low < high:
        mid = (low + high + 1) // 2
        if estimate_tokens(_with_rest(items, mid, fmt)) <= budget:
            low = mid
        else:
            high = mid - 1
    return _with_rest(items, low, fmt)


def _with_rest(items: list[CatalogItem], count: int, fmt: str) -> str:
    rest = len(items) - count
    if fmt == "json":
        data = json.loads(catalog(items[:count], fmt) or '{"available_skills": []}')
        return json.dumps({**data, "not_listed": rest}, ensure_ascii=False, indent=2) if rest else json.dumps(data)
    more = f"[{rest} more skills available]" if rest else ""
    return "\n".join(p for p in (catalog(items[:count], fmt), more) if p)


def _first_sentence(text: str) -> str:
    text = _one_line(text)
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def full(skills: list[FullSkill], fmt: str = "xml") -> str:
    if not skills:
        return ""
    if fmt == "json":
        return json.dumps({"skills": [asdict(s) for s in skills]}, ensure_ascii=False, indent=2)
    if fmt == "markdown":
        return "\n\n".join(_full_markdown(s) for s in skills)
    return "<active_skills>\n" + "\n".join(_full_xml(s) for s in skills) + "\n</active_skills>"


def _full_xml(s: FullSkill) -> str:
    head = f'<skill name={quoteattr(s.name)} location={quoteattr(s.location)} tokens="{s.tokens}">'
    parts = [head, f"<instructions>\n{escape(s.instructions)}\n</instructions>"]
    if s.resources:
        files = "".join(f"\n<file>{escape(r)}</file>" for r in s.resources)
        parts.append(f"<resources>{files}\n</resources>")
    parts.append("</skill>")
    return "\n".join(parts)


def _full_markdown(s: FullSkill) -> str:
    text = f"## Skill: {s.name} (~{s.tokens} tokens)\n\nLocation: `{s.location}`\n\n{s.instructions}"
    if s.resources:
        text += "\n\nResources (read them when needed):\n" + "\n".join(f"- `{r}`" for r in s.resources)
    return text


def _one_line(text: str) -> str:
    return " ".join(text.split())


def render(
    tier: str,
    *,
    fmt: str = "xml",
    visible: list[CatalogItem],
    chosen: list[FullSkill],
    has_message: bool,
    near: bool = True,
    budget: int = CATALOG_BUDGET_TOKENS,
) -> tuple[str, str]:
    """(the tier actually used, the block) for a tier name; ``auto`` decides here (``near``:
    routing found skills close to the message, though none it would choose)."""
    if tier == "auto":
        if chosen:
            return "full", full(chosen, fmt)
        return _auto_without_choice(visible, fmt=fmt, has_message=has_message, near=near, budget=budget)
    if tier == "none":
        return tier, ""
    if tier == "breadcrumb":
        return tier, breadcrumb(len(visible))
    if tier == "catalog":
        return tier, catalog(visible, fmt)
    return tier, full(chosen, fmt)


def _auto_without_choice(
    visible: list[CatalogItem], *, fmt: str, has_message: bool, near: bool, budget: int
) -> tuple[str, str]:
    whole = catalog(visible, fmt)
    if not has_message or estimate_tokens(whole) <= budget:
        return "catalog", whole
    if near:
        return "catalog", catalog_within(visible, fmt, budget)
    return "breadcrumb", breadcrumb(len(visible))


# --- reading one skill for the full tier (and the load_skill tool) ------------------------


def load_full(skill, *, config=None, env=None) -> FullSkill:
    """A discovered skill's instructions ready for a model: vars, ``{baseDir}``, secrets masked."""
    from skillctl.vars import resolve_vars

    base = Path(skill.path).resolve()
    resolved = resolve_vars(skill.manifest, base, env=env, config=config)
    resolved.require(skill.name)
    text = resolved.substitute(skill.report.body.strip()).replace("{baseDir}", str(base))
    text = resolved.mask(text)
    resources = sorted(f.path for f in skill.report.files if f.path.startswith(RESOURCE_DIRS))
    return FullSkill(
        name=skill.name,
        location=str(base / "SKILL.md"),
        instructions=text,
        resources=resources,
        tokens=estimate_tokens(text),
    )
