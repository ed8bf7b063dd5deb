"""``skillctl audit``: the installed versions against what their registries know now.

A thin caller of :meth:`skillctl.installer.Operations.audit`; the table and ``--json`` go to
stdout, notes to stderr. ``install`` and ``update`` end with :func:`summary` (one line, only when
something is found).
"""

from __future__ import annotations

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app
from skillctl.errors import ExitCode, SkillctlError
from skillctl.trust import Label

JSON_SHAPE = """\b
--json prints one object:
  {"ok": bool, "strict": bool, "as_of": "RFC 3339" | null, "offline": bool,
   "notes": [str],
   "skills": [{"name", "version", "registry": URL | null, "audited": bool,
               "reason": str | null, "latest_clean": str | null,
               "findings": [{"kind": "advisory|malicious|yanked|scan_warn|deprecated|
                                     tests_failed|not_found",
                             "blocking": bool, "message", "fix",
                             "id": str | null, "severity": str | null}]}]}"""


@click.command(epilog=JSON_SHAPE)
@click.option("--strict", is_flag=True, help="Also fail on scan warnings, deprecations and failing tests.")
@click.option("--offline", is_flag=True, help="Report against the registries' last answer; ask nothing.")
@click.option("-g", "--global", "global_", is_flag=True, help="Audit the user scope (~/.agents/skills).")
@json_option
@pass_app
def audit(app: App, strict: bool, offline: bool, global_: bool, as_json: bool) -> int:
    """Check the versions in skills.lock against what their registries know now: advisories,
    versions since found malicious, yanked or deprecated, failing tests; each with its fix.

    One request per registry. An unreachable registry (or --offline) is reported against its
    last answer, with the time it was given. Exit 0 clean; 1 an advisory, a malicious or a
    yanked version (--strict: any finding); 3 no registry answer and none kept.
    """
    from skillctl.cli.commands.install import scope_operations

    report = scope_operations(app, global_).audit(offline=offline)
    if as_json:
        console.out_json(report.to_dict(strict=strict))
    else:
        _print(report, strict=strict)
    return int(ExitCode.FAILURE if report.failing(strict=strict) else ExitCode.OK)


def _print(report, *, strict: bool) -> None:  # noqa: ANN001
    for note in report.notes:
        console.info(note)
    rows = [[s.name, s.version, f.label.value, f.message, f.fix] for s in report.skills for f in s.findings]
    console.table(["NAME", "VERSION", "FINDING", "DETAIL", "FIX"], rows)
    for s in report.skills:
        if s.not_audited:
            console.out(f"{s.name} {s.version}".rstrip() + f": not audited ({s.not_audited})")
    audited = [s for s in report.skills if not s.not_audited]
    failing = report.failing(strict=strict)
    when = f" as of {report.as_of}" if report.as_of else ""
    if failing:
        console.error(f"{console.plural(len(failing), 'installed skill')} with findings{when}", _hint(strict))
    elif rows:
        console.info(f"{console.plural(len(audited), 'skill')} audited{when}: only warnings (--strict fails on them)")
    else:
        console.success(f"{console.plural(len(audited), 'skill')} audited{when}: nothing found")


def _hint(strict: bool) -> str:
    return "Each finding's FIX column says what to run." + ("" if strict else " --strict also fails on warnings.")


def summary(ops, changes) -> dict | None:  # noqa: ANN001
    """After an install or update from registries: one audit request per registry, and its one
    line on stderr when something is found. Never fails the command; a registry without the
    audit endpoint, or any error, gives None silently."""
    from skillctl.installer.project import source_kind

    locked = [ops.locked[c.name] for c in changes if c.name in ops.locked]
    if not any(source_kind(entry.source) == "registry" for entry in locked):
        return None
    try:
        report = ops.audit(quiet_fallback=True)
    except SkillctlError:
        return None
    if all(s.not_audited for s in report.skills):
        return None  # no registry answered (none has the endpoint)
    line = _summary_line(report)
    if line:
        console.warn(line)
    return {"line": line, **report.to_dict()}


_ONE = {Label.ADVISORY: "an advisory", Label.MALICIOUS: "a malicious version", Label.YANKED: "a yanked version"}
_MANY = {Label.ADVISORY: "advisories", Label.MALICIOUS: "malicious versions", Label.YANKED: "yanked versions"}


def _summary_line(report) -> str | None:  # noqa: ANN001
    """``1 installed skill has an advisory: run skillctl audit`` (None: nothing blocking)."""
    failing = report.failing()
    if not failing:
        return None
    kinds = sorted({f.label for s in failing for f in s.failing(strict=False)})
    one = len(failing) == 1
    words = (_ONE if one else _MANY)[kinds[0]] if len(kinds) == 1 else "findings (" + ", ".join(kinds) + ")"
    return f"{console.plural(len(failing), 'installed skill')} {'has' if one else 'have'} {words}: run skillctl audit"
