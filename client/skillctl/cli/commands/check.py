"""``skillctl check [NAME]``: can the installed skills work on this machine? (gating)

Each failure has a reason and, where known, the command that fixes it. Exit 1 when any gate
fails. Secret values (declared ``secret`` vars, apiKeys, config env values) are masked in every
line and JSON value this command prints.
"""

from __future__ import annotations

from typing import Any

import click

from skillctl import console
from skillctl.cli.app import App, json_option, pass_app
from skillctl.errors import ExitCode, SkillctlError


def _check_one(skill, *, config, installed: set[str], masks: set[str]) -> dict[str, Any]:
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
@click.argument("name", required=False)
@json_option
@pass_app
def check(app: App, name: str | None, as_json: bool) -> int:
    """Check OS, binaries, env, config, required skills and enablement of installed skills.

    Exit 0 when every checked skill can work, 1 when any gate fails.
    """
    from skillctl.discovery import discover
    from skillctl.vars import ResolvedVars

    config = app.config
    found = discover(extra_dirs=config.skill_dirs)
    installed = {s.name for s in found.skills}
    skills = [s for s in found.skills if name is None or s.name == name]
    if name and not skills:
        raise SkillctlError(
            f"{name} is not installed here",
            hint="`skillctl list` shows installed skills; `skillctl install NAME` adds one.",
            code="install.not_installed",
        )
    masks: set[str] = set()
    results = [_check_one(s, config=config, installed=installed, masks=masks) for s in skills]
    masks.update(ResolvedVars(secrets=_config_secrets(config)).secrets)
    mask = ResolvedVars(secrets=masks).mask
    collisions = [
        {"name": c.name, "used": str(c.used), "shadowed": [str(p) for p in c.shadowed]}
        for c in found.collisions
        if name is None or c.name == name
    ]
    ok = all(r["ok"] for r in results)
    if as_json:
        console.out_json(_mask_data({"ok": ok, "skills": results, "collisions": collisions}, mask))
    else:
        _print(results, collisions, mask)
    return int(ExitCode.OK if ok else ExitCode.FAILURE)


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


def _print(results: list[dict], collisions: list[dict], mask) -> None:
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
    for c in collisions:
        console.warn(
            mask(f"{c['name']} is in more than one place; using {c['used']}, ignoring " + ", ".join(c["shadowed"]))
        )
    failing = sum(not r["ok"] for r in results)
    console.info(f"{len(results)} checked, {failing} failing." if failing else f"{len(results)} checked, all ok.")
