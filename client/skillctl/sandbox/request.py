"""A run request for an installed skill, as ``skillctl run`` builds it from the user's config.

Shared by ``skillctl run`` and the ``run_skill`` tool of ``skillctl mcp``, so both run a skill
the same way: with the variables and keys the skill declares and ``skillctl check`` accepts
(:func:`skill_env`), their secrets masked in what it prints. Network consent comes from the
caller's flag or from the per-skill config (``[skills.NAME] network = true``); whoever asks over
MCP can never grant it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from skillctl.errors import SkillctlError
from skillctl.sandbox.policy import HostCaps
from skillctl.sandbox.runner import RunRequest


class InvalidSkill(SkillctlError):
    code = "run.invalid_skill"


def skill_runtime(folder: Path):
    """The ``runtime`` block of the skill in ``folder`` (None when it declares none)."""
    from skillctl.format import load_skill

    report = load_skill(folder)
    if report.manifest is None:
        codes = ", ".join(f.code for f in report.errors) or "no manifest"
        raise InvalidSkill(f"{folder} is not a valid skill ({codes})", hint=f"Run `skillctl validate {folder}`.")
    return report.manifest.runtime


def skill_env(folder: Path, config) -> tuple[dict[str, str], Callable[[str], str]]:
    """(the variables a run of the skill in ``folder`` gets, the function masking their secrets
    in its output): what it declares, with the values ``skillctl check`` accepts."""
    from skillctl.format import load_skill
    from skillctl.vars import ResolvedVars, run_env

    report = load_skill(folder)
    if report.manifest is None:
        return {}, str  # skill_runtime says what is wrong with the skill
    env, secrets = run_env(report.manifest, folder, config=config)
    return env, ResolvedVars(secrets=secrets).mask


def network_consent(config, name: str) -> bool:
    """The per-skill consent: ``[skills.NAME] network = true`` in config.toml."""
    if config is None:
        return False
    return bool(config.skill_settings(name).get("network", False))


def request_for(folder: Path, *, config, input: Any = None, allow_network: bool = False, **fields) -> RunRequest:
    """The request that runs the skill in ``folder``: its runtime, the config's caps, and the
    network only with consent (``allow_network`` from the user, or the per-skill config)."""
    allowed = (config.get("sandbox.network_allow") if config is not None else None) or []
    return RunRequest(
        skill_dir=folder,
        runtime=skill_runtime(folder),
        input=input,
        caps=HostCaps.from_config(config),
        allow_network=allow_network or network_consent(config, folder.name),
        network_allow=[str(c) for c in allowed],
        **fields,
    )
