"""``skillctl check [NAME]``: can the installed skills work on this machine? (gating)

Each failure has a reason and, where known, the command that fixes it. Exit 1 when any gate
fails. ``--fix`` runs install specs (planned and run by :mod:`skillctl.fixer`) with consent. Secret values (declared ``secret`` vars, apiKeys, config env values) are masked in every
line and JSON value this command prints.
"""

from __future__ import annotations

from typing import Any

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app
from skillctl.errors import ExitCode, SkillctlError


def check_one(skill, *, config, installed: set[str], masks: set[str]) -> dict[str, Any]:
    from skillctl.gating import GateFailure, check_gates
    from skillctl.vars import resolve_vars

    result = check_gates(skill.manifest, skill.path, config=config, installed=installed)
    failures = list(result.failures)
    try:
        masks.update(resolve_vars(skill.manifest, skill.path, config=config).secrets)
    except SkillctlError as err:  # an unreadable vars file (the vars gate says so when it reads one)
        if not any(f.reason == err.message for f in failures):
            failures.append(GateFailure("vars", err.message, err.hint))
    return {
        "name": skill.name,
        "path": str(skill.path),
        "scope": skill.scope,
        "ok": not failures,
        "failures": [f.to_dict() for f in failures],
    }


def _mask_data(data: Any, mask) -> Any:
    if isinstance(data, str):
        return mask(data)
    if isinstance(data, dict):
        return {k: _mask_data(v, mask) for k, v in data.items()}
    if isinstance(data, list):
        return [_mask_data(v, mask) for v in data]
    return data


@click.command()
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option("--fix", is_flag=True, help="Install missing binaries from the skills' install specs, after a plan.")
@click.option("--yes", "-y", is_flag=True, help="With --fix: run the plan without asking.")
@click.option("--dry-run", is_flag=True, help="With --fix: print the plan only.")
@json_option
@pass_app
def check(app: App, names: tuple[str, ...], fix: bool, yes: bool, dry_run: bool, as_json: bool) -> int:
    """Check OS, binaries, env, config, required skills, variables and enablement of installed skills.

    Exit 0 when every checked skill can work, 1 when any gate fails. --fix plans the install
    specs (brew, apt, npm, go, uv, download) for missing binaries, shows the exact commands,
    runs them only after --yes or a yes in the terminal (never sudo: it says what to run
    instead), then checks again and reports what is still missing.
    """
    from skillctl.discovery import discover

    config = app.config
    found = discover(extra_dirs=config.skill_dirs)
    installed = {s.name for s in found.skills}
    skills = _selected(found.skills, names)
    if fix or dry_run:
        return fix_skills(skills, config=config, installed=installed, yes=yes, dry_run=dry_run, as_json=as_json)
    masks: set[str] = set()
    results = [check_one(s, config=config, installed=installed, masks=masks) for s in skills]
    mask = _mask(config, masks)
    collisions = [
        {"name": c.name, "used": str(c.used), "shadowed": [str(p) for p in c.shadowed]}
        for c in found.collisions
        if not names or c.name in names
    ]
    ok = all(r["ok"] for r in results)
    if as_json:
        console.out_json(_mask_data({"ok": ok, "skills": results, "collisions": collisions}, mask))
    else:
        print_results(results, mask)
        _print_collisions(collisions, mask)
    return int(ExitCode.OK if ok else ExitCode.FAILURE)


def _selected(skills: list, names: tuple[str, ...]) -> list:
    if unknown := [n for n in names if n not in {s.name for s in skills}]:
        raise SkillctlError(
            f"{', '.join(unknown)} is not installed here",
            hint="`skillctl list` shows installed skills; `skillctl install NAME` adds one.",
            code="install.not_installed",
        )
    return [s for s in skills if not names or s.name in names]


def _mask(config, masks: set[str]):
    from skillctl.vars import ResolvedVars

    return ResolvedVars(secrets=masks | _config_secrets(config)).mask


def _config_secrets(config) -> set[str]:
    """Every apiKey and env value in the config, whatever skill it belongs to."""
    found: set[str] = set()
    for settings in config.skills.values():
        if settings.get("apiKey"):
            found.add(str(settings["apiKey"]))
        env = settings.get("env")
        if isinstance(env, dict):
            found.update(str(v) for v in env.values() if v)
    return found


def print_results(results: list[dict], mask) -> None:
    if not results:
        console.info("No skills installed here (`skillctl install NAME` adds one).")
        return
    width = max(len(r["name"]) for r in results)
    for r in results:
        status = "ok" if r["ok"] else f"FAIL ({len(r['failures'])})"
        console.out(mask(f"{r['name'].ljust(width)}  {status}"))
        for f in r["failures"]:
            console.out(mask(f"  {f['gate']}: {f['reason']}"))
            if f["fix"]:
                console.out(mask(f"    fix: {f['fix']}"))
    failing = sum(not r["ok"] for r in results)
    console.info(f"{len(results)} checked, {failing} failing." if failing else f"{len(results)} checked, all ok.")


def _print_collisions(collisions: list[dict], mask) -> None:
    for c in collisions:
        console.warn(
            mask(f"{c['name']} is in more than one place; using {c['used']}, ignoring " + ", ".join(c["shadowed"]))
        )


# --- check --fix ----------------------------------------------------------------------------


def fix_skills(skills: list, *, config, installed: set[str], yes: bool, dry_run: bool, as_json: bool) -> int:
    """Plan, show, ask, run, check again: the one flow of ``check --fix``."""
    import os

    from skillctl import fixer
    from skillctl.gating import current_platform

    env = dict(os.environ)
    planned = [(s.name, *fixer.plan_skill(s.name, s.manifest, fixer.missing_binaries(s.manifest, env),
                                          env=env, platform=current_platform())) for s in skills]  # fmt: skip
    steps = [step for _, skill_steps, _ in planned for step in skill_steps]
    unfixable = [{"skill": name, "binaries": missing} for name, _, missing in planned if missing]
    report: dict[str, Any] = {"plan": [s.to_dict() for s in steps], "unfixable": unfixable, "dry_run": dry_run}
    if not as_json:
        _print_plan(steps, unfixable)
    runnable = [s for s in steps if s.runnable]
    consent = bool(runnable) and not dry_run and (yes or _confirmed(len(runnable)))
    report["ran"] = [fixer.run_step(s, env=env).to_dict() for s in runnable] if consent else []
    if runnable and not consent and not dry_run:
        console.warn("nothing was run: confirm with --yes (or answer yes in a terminal)")
    masks: set[str] = set()
    after = [check_one(s, config=config, installed=installed, masks=masks) for s in skills]
    report.update(skills=after, ok=all(r["ok"] for r in after), path_hint=_path_hint(report["ran"], env))
    mask = _mask(config, masks)
    if as_json:
        console.out_json(_mask_data(report, mask))
    else:
        _print_ran(report["ran"], report["path_hint"])
        print_results(after, mask)
    return int(ExitCode.OK if report["ok"] else ExitCode.FAILURE)


def _confirmed(count: int) -> bool:
    import sys

    if not sys.stdin.isatty():
        return False
    try:
        return click.confirm(f"Run {count} install step(s)?", default=False, err=True)
    except click.Abort:
        return False


def _path_hint(ran: list[dict], env: dict) -> str:
    from skillctl.fixer import path_hint

    return path_hint(env) if any(r["ok"] and r["kind"] == "download" for r in ran) else ""


def _print_plan(steps: list, unfixable: list[dict]) -> None:
    if not steps and not unfixable:
        console.info("Nothing to install: no skill misses a binary.")
        return
    console.out("Plan:")
    for step in steps:
        console.out(f"  {step.skill}: {step.describe()}" + (f"  ({step.label})" if step.label else ""))
        if step.instead:
            console.out(f"    not run: {step.instead}")
    for item in unfixable:
        console.out(f"  {item['skill']}: no install spec fits this machine for {', '.join(item['binaries'])}")


def _print_ran(ran: list[dict], hint: str) -> None:
    for result in ran:
        (console.success if result["ok"] else console.warn)(
            f"{result['skill']}: {result['describe']}: " + ("done" if result["ok"] else "failed")
        )
        if result["detail"] and not result["ok"]:
            console.info(result["detail"].rstrip())
    if hint:
        console.warn(hint)
