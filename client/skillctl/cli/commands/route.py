"""``skillctl route`` and ``skillctl prompt``: pick skills for a message, build the prompt block.

Thin: parse options, build a :class:`skillctl.skillset.SkillSet`, print. Lexical routing
imports neither numpy nor onnxruntime nor rich, so a fresh ``skillctl route`` starts fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app
from skillctl.errors import UsageError

_skills_dir = click.option(
    "--skills-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Route over every skill folder under DIR instead of the installed skills.",
)
_semantic = click.option(
    "--semantic/--no-semantic",
    default=None,
    help="Use the MiniLM model (default: when the `semantic` extra is installed).",
)


_ignore_gates = click.option(
    "--ignore-gates",
    is_flag=True,
    help="Route over every skill, whatever this machine's OS, binaries, env and config say "
    "(for evaluation, or routing on behalf of another machine).",
)


def _skillset(
    app: App,
    skills_dir: Path | None,
    semantic: bool | None,
    reindex: bool = False,
    config=None,
    ignore_gates: bool = False,
):
    from skillctl.skillset import SkillSet

    if skills_dir is not None:
        return SkillSet.from_dir(
            skills_dir, semantic=semantic, reindex=reindex, config=config, ignore_gates=ignore_gates
        )
    return SkillSet.discover(config=app.config, semantic=semantic, reindex=reindex, ignore_gates=ignore_gates)


def _line(query: str, matches, explain: bool) -> dict:
    return {"query": query, "skills": [m.to_dict(explain=explain) for m in matches]}


def _print_human(query: str, matches, explain: bool, nearest: list[dict]) -> None:
    from skillctl.routing.explain import decided_by

    if not matches:
        shown = query if len(query) <= 200 else query[:199] + "…"  # a pasted document is not echoed whole
        console.info(f"no skill matched: {shown!r}")
        for near in nearest:
            console.info(f"  nearest: {near['name']} ({near['score']:.3f}): {near['stopped_by']}")
        return
    for m in matches:
        console.out(f"{m.name}\t{m.score:.3f}\t{'; '.join(m.reasons)}")
        if explain:
            console.out(f"\t{decided_by(m)}")
            console.out("\t" + ", ".join(f"{k}={v:.3f}" for k, v in m.components.items()))


def _read_queries(path: Path) -> list[str]:
    queries = []
    for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            queries.append(row["query"] if isinstance(row, dict) else str(row))
        except (ValueError, KeyError) as err:
            raise UsageError(
                f'{path}:{number}: not a {{"query": ...}} line ({err})', code="route.bad_queries"
            ) from None
    return queries


@click.command()
@click.argument("message", required=False)
@click.option(
    "--queries",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='Route every {"query": ...} line of a JSONL file (one output line each).',
)
@click.option("--history", multiple=True, help="An earlier message (repeatable), for continuations.")
@click.option("--explain", is_flag=True, help="Show every score component and the stage that decided.")
@click.option("--ask", is_flag=True, help="Ask before loading each skill: [Y/n/a/?].")
@click.option("--reindex", is_flag=True, help="Rebuild the routing index from the skill folders.")
@_skills_dir
@_semantic
@_ignore_gates
@json_option
@pass_app
def route(
    app: App, message, queries, history, explain, ask, reindex, skills_dir, semantic, ignore_gates, as_json
) -> int:
    """Pick the skills MESSAGE needs (at most 3, best first, with the reasons)."""
    if message is None and queries is None and not reindex:
        raise UsageError(
            "give a MESSAGE, --queries FILE or --reindex",
            hint="skillctl route 'deploy to staging'",
            code="route.no_message",
        )
    skills = _skillset(app, skills_dir, semantic, reindex, ignore_gates=ignore_gates)
    for c in skills.collisions:
        console.warn(
            f"skill {c.name!r} found more than once: using {c.used}, ignoring {', '.join(map(str, c.shadowed))}"
        )
    if message is None and queries is None:
        console.success(f"indexed {len(skills.names)} skills")
        return 0
    if not skills.names:
        places = ", ".join(str(root) for _, root in skills.roots)
        console.info(
            f"no skills found in {places}; `skillctl install NAME` adds one, --skills-dir routes over a folder"
        )
    if ask:
        return _ask(app, skills, message, list(history), as_json)
    left_out = skills.left_out() if explain else {}
    for name, why in left_out.items():
        console.info(f"not offered: {name}: {why}")
    for query in [message] if queries is None else _read_queries(queries):
        matches = skills.route(query, history=list(history))
        nearest = skills.nearest(query, history=list(history)) if explain and not matches else []
        if as_json:
            line = _line(query, matches, explain)
            if explain:
                line["left_out"] = [{"name": n, "reason": why} for n, why in left_out.items()]
                line["nearest"] = nearest
            console.out_json(line, compact=True)
        else:
            _print_human(query, matches, explain, nearest)
    return 0


def _ask(app: App, skills, message: str | None, history: list[str], as_json: bool) -> int:
    from skillctl.routing import approval, state

    if message is None:
        raise UsageError("--ask needs a MESSAGE", code="route.ask_needs_message")
    autoload, show_matches = app.config.setting("autoload", False), app.config.setting("show_matches", False)
    if not autoload and not sys.stdin.isatty():
        raise UsageError(
            "--ask needs a terminal to ask on",
            hint="Run it interactively, or drop --ask.",
            code="route.ask_needs_terminal",
        )
    matches = skills.route(message, history=history)

    def tokens(name: str) -> int:
        entry = skills.entry(name)
        return entry.tokens if entry else 0

    def write(text: str) -> None:
        sys.stderr.write(text)
        sys.stderr.flush()

    if show_matches:  # seed 000's `show_matches`: what matched, before the question
        write("".join(f"'{m.name}' matched: {'; '.join(m.reasons)}\n" for m in matches))
    # Seed 000's `autoload`: every routed skill loads as if approved for this session.
    approved = state.approved_skills() | ({m.name for m in matches} if autoload else set())
    result = approval.ask(
        matches, tokens, read=lambda: sys.stdin.readline() or None, write=write, approved=frozenset(approved)
    )
    for name in result.remembered:
        state.remember_approval(name)
    skills.record_use(result.loaded)
    if as_json:
        console.out_json({"query": message, "loaded": result.loaded, "declined": result.declined}, compact=True)
    else:
        for name in result.loaded:
            console.out(name)
    return 0


@click.command()
@click.option("--message", "-m", help="The user's message (routing picks the skills for `full`).")
@click.option(
    "--tier",
    type=click.Choice(["auto", "none", "breadcrumb", "catalog", "full"]),
    default="auto",
    show_default=True,
    help="How much to disclose.",
)
@click.option("--format", "fmt", type=click.Choice(["xml", "markdown", "json"]), default="xml", show_default=True)
@click.option("--skill", "chosen", multiple=True, help="Use these skills for `full` instead of routing.")
@click.option("--history", multiple=True, help="An earlier message (repeatable), for continuations.")
@_skills_dir
@_semantic
@_ignore_gates
@json_option
@pass_app
def prompt(app: App, message, tier, fmt, chosen, history, skills_dir, semantic, ignore_gates, as_json) -> int:
    """Build the skills block of an agent's prompt (progressive disclosure).

    --tier auto gives the chosen skills' instructions when routing picks some, else the catalog
    (closest skills first, within a token budget), or the breadcrumb "[N skills available]" when
    no skill comes near the message and the catalog would not fit the budget. An unknown --skill
    is an error (exit 2)."""
    skills = _skillset(app, skills_dir, semantic, config=app.config, ignore_gates=ignore_gates)
    used, block = skills.build_prompt(message, tier=tier, fmt=fmt, history=list(history), chosen=list(chosen) or None)
    if as_json:
        console.out_json({"tier": used, "format": fmt, "prompt": block})
    elif block:
        console.out(block)
    return 0
