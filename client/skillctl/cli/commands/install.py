"""``install``, ``update``, ``uninstall``, ``list`` and ``verify``.

Thin callers of :mod:`skillctl.installer`: parse arguments, call one operation, print the
result through :mod:`skillctl.console` (messages to stderr, ``--json`` data to stdout).
"""

from __future__ import annotations

import click

from skillctl import console
from skillctl.agents import CHOICES as AGENT_CHOICES
from skillctl.cli.app import App, json_option, pass_app
from skillctl.cli.version_diff import print_diff
from skillctl.errors import ExitCode, SkillctlError, UsageError


def _global_option(func):
    return click.option(
        "-g", "--global", "global_", is_flag=True, help="Use the user scope (~/.agents/skills) instead of the project."
    )(func)


def _force_option(func):
    return click.option("--force", is_flag=True, help="Replace local edits, collisions and a changed registry URL.")(
        func
    )


def scope_operations(app: App, global_: bool, force: bool = False):
    from skillctl.installer import Operations
    from skillctl.installer.project import Scope
    from skillctl.reporting import ConsoleReporter

    scope = Scope.user() if global_ else Scope.project()
    reporter = ConsoleReporter(progress=not app.json)
    return Operations.for_scope(scope, config=app.config, reporter=reporter, force=force)


def _finish(ops, changes, as_json: bool, extra: dict | None = None) -> None:  # noqa: ANN001
    """Print what an install or update did, then the one-line audit summary (``--json``: the
    audit under ``audit``, null when nothing was asked; ``extra`` joins the document)."""
    from skillctl.cli.commands.audit import summary

    if as_json:
        console.out_json({"changes": [c.to_dict() for c in changes], "audit": summary(ops, changes), **(extra or {})})
        return
    _print_changes(changes, False)
    summary(ops, changes)


def _print_changes(changes, as_json: bool, extra: dict | None = None) -> None:  # noqa: ANN001
    if as_json:
        console.out_json({"changes": [c.to_dict() for c in changes], **(extra or {})})
        return
    for c in changes:
        agents = f" (linked for {', '.join(c.agents)})" if c.agents else ""
        label = f"{c.name} {c.new}".rstrip()  # folder and git sources may have no version
        if c.action in ("installed", "would-install"):
            verb = "installed" if c.action == "installed" else "would install"
            where = f" into {_shown(c.path)}" if c.path else ""
            console.success(f"{verb} {label} from {c.source}{where}{agents}")
        elif c.action in ("updated", "would-update"):
            prefix = "" if c.action == "updated" else "would update "
            console.success(f"{prefix}{c.name} {c.old or '?'} → {c.new or '?'}{agents}")
        elif c.action in ("replaced-yanked", "would-replace-yanked"):
            prefix = "" if c.action == "replaced-yanked" else "would move "
            console.success(f"{prefix}{c.name} {c.old} (yanked) → {c.new}: the newest non-yanked version in its range")
        elif c.action == "restored":
            console.success(f"restored {label} from {c.source} into {_shown(c.path)}")
        elif c.action == "removed":
            console.success(f"removed {c.name} {c.old}".rstrip())
        else:
            console.info(f"{label} is up to date")


def _shown(path: str) -> str:
    """A path relative to the current folder when it is inside it (shorter, copy-pastable)."""
    from pathlib import Path

    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path


@click.command()
@click.argument("sources", nargs=-1)
@_global_option
@click.option(
    "--agent",
    "agents",
    multiple=True,
    type=click.Choice(AGENT_CHOICES),
    help="Also link into this agent's skills folder (repeatable).",
)
@click.option(
    "--registry",
    default="",
    help="Registry name for NAME arguments (default: the skill's recorded registry, else the configured default).",
)
@click.option("--frozen", is_flag=True, help="Install exactly skills.lock; fail instead of changing it.")
@click.option(
    "--list", "list_only", is_flag=True, help="List the skills a folder or repository holds; install nothing."
)
@click.option(
    "--skill",
    "pick",
    multiple=True,
    metavar="NAME",
    help="From a folder or repository of several skills, install this one (repeatable).",
)
@click.option("--all", "take_all", is_flag=True, help="From a folder or repository of several skills, install all.")
@_force_option
@json_option
@pass_app
def install(
    app: App,
    sources: tuple[str, ...],
    global_: bool,
    agents: tuple[str, ...],
    registry: str,
    frozen: bool,
    list_only: bool,
    pick: tuple[str, ...],
    take_all: bool,
    force: bool,
    as_json: bool,
) -> int:
    """Install skills, or with no SOURCES exactly what skills.lock says.

    \b
    SOURCES may be:
      NAME, NAME@1.2.3, NAME@^1.2, REGISTRY:NAME@SPEC   a registry skill
      ./folder                                         a local skill folder
      skill.zip, skill.tar.gz                          a local archive
      https://host/skill.zip                           an archive URL
      git+https://host/repo.git#REF:SUBDIR             a git repository (REF, SUBDIR optional)

    Project scope (.agents/skills/, skills.toml and skills.lock in the project root) unless
    -g. A bare word is always a registry name; write ./NAME for a folder. A folder or
    repository holding several skills: --list shows them, --skill NAME picks, --all takes all.
    """
    if list_only:
        return _list_collection(sources, as_json)
    if pick and take_all:
        raise UsageError("give --skill NAME or --all, not both", code="install.skill_and_all")
    ops = scope_operations(app, global_, force)
    if frozen and sources:
        raise UsageError(
            "--frozen installs exactly skills.lock and takes no SOURCES",
            hint="Drop --frozen to add skills, or drop the SOURCES.",
            code="install.frozen_with_sources",
        )
    if sources:
        changes = ops.install(list(sources), registry=registry, agents=list(agents), pick=pick, take_all=take_all)
    else:
        if agents:
            raise UsageError(
                "--agent needs SOURCES", hint="skillctl install NAME --agent claude", code="install.agent_needs_sources"
            )
        changes = ops.sync(frozen=frozen)
    _finish(ops, changes, as_json)
    return int(ExitCode.OK)


def _list_collection(sources: tuple[str, ...], as_json: bool) -> int:
    from skillctl.installer import collections
    from skillctl.installer.arguments import SourceKind, parse_source

    if not sources:
        raise UsageError(
            "--list needs a folder or repository",
            hint="skillctl install ./skills --list",
            code="install.list_needs_source",
        )
    listed: list[dict] = []
    for arg in sources:
        source = parse_source(arg)
        if source.kind not in (SourceKind.FOLDER, SourceKind.GIT):
            raise UsageError(
                f"--list reads folders and git repositories, not {arg!r}", code="install.list_needs_source"
            )
        found = collections.skills_in(source) if collections.is_collection(source) else []
        listed.append({"source": arg, "skills": [f.to_dict() for f in found] or [{"name": "(one skill)", "path": "."}]})
    if as_json:
        console.out_json({"sources": listed})
        return int(ExitCode.OK)
    for entry in listed:
        console.out(f"{entry['source']}:")
        console.table(
            ["name", "path", "description"],
            [[s["name"], s["path"], (s.get("description") or "")[:80]] for s in entry["skills"]],
        )
    return int(ExitCode.OK)


def _verify_hint(bad: list[dict]) -> str:
    """What to do, by what went wrong: a yanked or vanished version is left by updating (restoring
    it would bring the yanked version back); edited or missing files are restored."""
    left = ("yanked", "version_gone", "deprecated")
    gone = sorted(r["name"] for r in bad if any(p["code"] in left for p in r["problems"]))
    edited = [
        r
        for r in bad
        if any(p["code"].startswith("file_") or p["code"] in ("missing", "not_locked") for p in r["problems"])
    ]
    hints = []
    if gone:
        hints.append(f"Run `skillctl update {' '.join(gone)}` to move to the newest non-yanked version in range.")
    if edited:
        hints.append("Run `skillctl install --force` to restore edited or missing files exactly as locked.")
    return " ".join(hints) or "Check the problems above."


_diff_option = click.option(
    "--diff", "show_diff", is_flag=True, help="Print what changed in each skill (files and frontmatter), as a diff."
)


@click.command()
@json_option
@_global_option
@_diff_option
@pass_app
def outdated(app: App, as_json: bool, global_: bool, show_diff: bool) -> int:
    """Registry skills with newer versions: current (locked), wanted (the newest the range in
    skills.toml allows) and latest (the newest there is), like `npm outdated`. Exit 0.
    --diff prints what changed from current to wanted (or latest, when wanted is current)."""
    ops = scope_operations(app, global_)
    rows = ops.outdated()
    diffs = _diffs(ops, [(r["name"], r["current"], _target(r)) for r in rows if r["outdated"]]) if show_diff else []
    if as_json:
        console.out_json({"skills": rows, **({"diffs": diffs} if show_diff else {})})
        return int(ExitCode.OK)
    shown = [r for r in rows if r["outdated"] or _current_notes(r)]
    stale = [r for r in rows if r["outdated"]]
    if not shown:
        console.info("Every registry skill is at the newest version there is." if rows else "No registry skills here.")
        return int(ExitCode.OK)
    console.table(
        ["name", "current", "wanted", "latest", "range", "current is"],
        [[r["name"], r["current"], r["wanted"], r["latest"], r["range"], _current_notes(r)] for r in shown],
    )
    if any(r["latest"] != r["wanted"] for r in stale):
        console.info("`skillctl update` moves to `wanted`; for `latest`, widen the range: skillctl install NAME@^X")
    for diff in diffs:
        print_diff(diff)
    return int(ExitCode.OK)


def _show_diffs(ops, changes, as_json: bool) -> dict:  # noqa: ANN001
    """update --diff: each registry skill's diff from its old to its new version, printed (or,
    with --json, returned to join the changes' document)."""
    diffs = _diffs(ops, [(c.name, c.old, c.new) for c in changes])
    if not as_json:
        for diff in diffs:
            print_diff(diff)
    return {"diffs": diffs}


def _target(row: dict) -> str:
    return row["wanted"] if row["wanted"] and row["wanted"] != row["current"] else row["latest"]


def _diffs(ops, pairs: list[tuple[str, str, str]]) -> list[dict]:  # noqa: ANN001
    from skillctl.cli.version_diff import fetch_diffs

    return fetch_diffs(ops, [(name, old, new) for name, old, new in pairs if old and new and old != new])


def _current_notes(row: dict) -> str:
    """What the registry says about the locked version: deprecated, failing tests."""
    notes = [f"deprecated: {row['deprecated']}"] if row.get("deprecated") else []
    notes += [f"tests {row['test_result']}"] if row.get("test_result") in ("failed", "error") else []
    return "; ".join(notes)


def _note_outside_ranges(ops) -> None:  # noqa: ANN001
    try:
        rows = ops.outdated()
    except SkillctlError:
        return  # the note is a courtesy; the update itself succeeded
    beyond = [
        f"{r['name']} {r['latest']} ({r['range']})"
        for r in rows
        if r["latest"] and r["latest"] != r["wanted"] and r["wanted"] is not None
    ]
    if beyond:
        console.info(f"newer outside your ranges: {', '.join(beyond)}; `skillctl outdated` shows them")


@click.command()
@click.argument("names", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Update every skill in skills.toml (the default).")
@click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
@click.option("--due", is_flag=True, help='Only git sources whose `refresh = "24h"` interval has passed (for cron).')
@_diff_option
@_global_option
@_force_option
@json_option
@pass_app
def update(
    app: App,
    names: tuple[str, ...],
    all_: bool,
    dry_run: bool,
    due: bool,
    show_diff: bool,
    global_: bool,
    force: bool,
    as_json: bool,
) -> int:
    """Update skills within the ranges of skills.toml, printing NAME from → to.

    Never crosses a range (^1.0 never becomes 2.0.0: edit skills.toml for that). A skill with
    local edits is refused, naming the edited files, unless --force. --due updates only the git
    sources whose `refresh` interval has passed since their last refresh: run it from cron.
    """
    if names and (all_ or due):
        raise UsageError("give NAMES, --all or --due", hint="skillctl update hello", code="update.names_and_all")
    ops = scope_operations(app, global_, force)
    from skillctl.installer import LocalChangesError, refresh

    if due:
        with ops.session():  # skills.toml is read under the install lock
            sources = {n: {**w.source, **w.extra} for n, w in ops.wanted.items()}
        names = tuple(refresh.due(sources, ops.scope.lock_path))
        if not names:
            _print_changes([], as_json)
            return int(ExitCode.OK)
    try:
        changes = ops.update(list(names), dry_run=dry_run)
        if due and not dry_run:
            refresh.record(list(names), ops.scope.lock_path)
    except LocalChangesError as err:
        _print_changes(err.changes, as_json)
        raise
    extra = _show_diffs(ops, changes, as_json) if show_diff else None
    if dry_run:
        _print_changes(changes, as_json, extra)
    else:
        _finish(ops, changes, as_json, extra)
    if not as_json:
        _note_outside_ranges(ops)
    return int(ExitCode.OK)


@click.command()
@click.argument("names", nargs=-1, required=True)
@_global_option
@json_option
@pass_app
def uninstall(app: App, names: tuple[str, ...], global_: bool, as_json: bool) -> int:
    """Remove skills: their folder, agent links, skills.toml and skills.lock entries."""
    changes = scope_operations(app, global_).uninstall(list(names))
    _print_changes(changes, as_json)
    return int(ExitCode.OK)


@click.command("list")
@click.option("--all", "all_", is_flag=True, help="Include user scope and extra folders from config.")
@_global_option
@json_option
@pass_app
def list_(app: App, all_: bool, global_: bool, as_json: bool) -> int:
    """List installed skills: scope, version, source and gating status."""
    from skillctl.installer import list_installed

    extra = list(app.config.skill_dirs) if all_ else []
    data = list_installed(include_user=all_, only_user=global_ and not all_, extra_dirs=extra, config=app.config)
    if as_json:
        console.out_json(data)
        return int(ExitCode.OK)
    rows = [
        [
            s["name"],
            s["version"] or "-",
            s["scope"],
            s["state"],
            ",".join(s["agents"]) or "-",
            _short_source(s["source"]),
            _gating_text(s["gating"]),
        ]
        for s in data["skills"]
    ]
    if not rows:
        console.info("No skills installed here. Add one with `skillctl install NAME`.")
    console.table(["name", "version", "scope", "files", "agents", "source", "here"], rows)
    if any(s["state"] in ("changed", "missing") for s in data["skills"]):
        console.info("`skillctl verify` names the changed files.")
    for c in data["collisions"]:
        console.warn(f"{c['name']}: {c['used']} shadows {', '.join(c['shadowed'])}")
    return int(ExitCode.OK)


def _gating_text(gating: dict) -> str:
    """``ok``, or which gates keep the skill from being offered (`skillctl check` says why)."""
    if gating["ok"] is None:
        return "unknown"
    if gating["ok"]:
        return "ok"
    text = "; ".join(f["reason"] for f in gating["failures"])
    return text if len(text) <= 70 else text[:69] + "…"  # `skillctl check NAME` has all of it


def _short_source(source: str) -> str:
    """A recorded source with its path relative to here, or under ~."""
    from pathlib import Path

    kind, _, where = source.partition(" ")
    if kind not in ("folder", "archive") or not where.startswith("/"):
        return source
    path, here, home = Path(where), Path.cwd(), Path.home()
    for base, prefix in ((here, ""), (home, "~/")):
        try:
            return f"{kind} {prefix}{path.relative_to(base)}"
        except ValueError:
            continue
    return source


@click.command()
@click.argument("names", nargs=-1)
@click.option("--offline", is_flag=True, help="Skip asking the registry about yanked versions.")
@_global_option
@json_option
@pass_app
def verify(app: App, names: tuple[str, ...], offline: bool, global_: bool, as_json: bool) -> int:
    """Check installed skills against skills.lock (and the registry).

    Exit 1 naming every changed, missing or extra file, and every version the registry has
    yanked, deprecated or quarantined since it was locked.
    """
    results = scope_operations(app, global_).verify(list(names), registry_status=not offline)
    bad = [r for r in results if not r["ok"]]
    if as_json:
        console.out_json({"ok": not bad, "skills": results})
    else:
        for r in results:
            label = f"{r['name']} {r['version'] or ''}".rstrip()
            console.out(f"ok      {label}" if r["ok"] else f"FAILED  {label}")
            for p in r["problems"]:
                console.out(f"  {p['code']}: {p['message']}")
        if not results:
            console.info("Nothing to verify: skills.lock is empty.")
        elif bad:
            console.error(f"{len(bad)} of {len(results)} skills failed verification", _verify_hint(bad))
    return int(ExitCode.FAILURE if bad else ExitCode.OK)
