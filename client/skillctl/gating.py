"""Gating: can this skill work on this machine? (DESIGN section 6, ``skillctl check``)

Gates, in order: ``disabled`` (config ``enabled = false``, or ``default_enabled: false`` without
``enabled = true``), ``os``, ``bins`` (all on PATH), ``anyBins`` (one on PATH), ``env`` (set in
the environment, in ``[skills.<key>.env]``, or the ``apiKey`` for ``primaryEnv``), ``config``
(dotted keys of config.toml that must be truthy), ``skills`` (other skills installed), ``vars``
(required variables have a value, seed 003: else the instructions cannot be rendered).

``always: true`` (seed 002) skips the machine's gates, os to skills. It does not skip
``disabled`` (the user's own choice wins over the author's) nor ``vars`` (a skill whose
variables have no value is never given to a model).

Every failure has a reason and, where one is known, the command that would fix it (from the
skill's ``install`` specs, or the ``skillctl`` command). Reasons name variables, never values.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillctl.format.coerce import dict_at

if TYPE_CHECKING:
    from skillctl.config import Config
    from skillctl.format.manifest import InstallSpec, Manifest

# The tool each install kind needs; a spec whose tool is present is suggested first.
_INSTALLER_TOOL = {"brew": "brew", "apt": "apt-get", "npm": "npm", "go": "go", "uv": "uv"}


@dataclass
class GateFailure:
    gate: str  # os | bins | anyBins | env | config | skills | disabled | vars
    reason: str
    fix: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class GateResult:
    ok: bool
    failures: list[GateFailure] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "failures": [f.to_dict() for f in self.failures]}


@dataclass(frozen=True)
class Gates:
    """What a skill needs in order to work, as the gates read it: from its manifest
    (:meth:`of`), or from the routing index (:meth:`from_dict`), which keeps these few fields
    so that routing can leave out skills that cannot work here without parsing them again."""

    key: str
    default_enabled: bool = True
    os: tuple[str, ...] = ()
    bins: tuple[str, ...] = ()
    any_bins: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    config: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    primary_env: str = ""
    always: bool = False  # seed 002: the machine's gates do not apply
    vars: tuple[str, ...] = ()  # required variables without a default
    install: tuple = ()  # InstallSpec, for fix suggestions only; not kept in the index

    @classmethod
    def of(cls, manifest: Manifest) -> Gates:
        r = manifest.requires
        return cls(
            manifest.key,
            manifest.default_enabled,
            tuple(manifest.os),
            tuple(r.bins),
            tuple(r.any_bins),
            tuple(r.env),
            tuple(r.config),
            tuple(r.skills),
            manifest.primary_env,
            manifest.always,
            tuple(n for n, v in manifest.vars.items() if v.required and v.default is None),
            tuple(manifest.install),
        )

    def declared(self) -> bool:
        """Any requirement beyond being enabled?"""
        return bool(self.os or self.bins or self.any_bins or self.env or self.config or self.skills or self.vars)

    def to_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items() if k != "install"}

    @classmethod
    def from_dict(cls, data: dict) -> Gates:
        fields: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in cls.__dataclass_fields__
        }
        return cls(**fields)


def current_platform() -> str:
    """``linux``, ``darwin`` or ``win32``: the names manifests use (normalised by the parser)."""
    return "win32" if sys.platform.startswith(("win", "cygwin")) else sys.platform.rstrip("0123456789")


def check_gates(
    manifest: Manifest,
    skill_dir: Path,
    *,
    config: Config,
    env: Mapping[str, str] | None = None,
    installed: set[str] | None = None,
    platform: str | None = None,
) -> GateResult:
    """Every gate the skill fails here; ``installed=None`` skips the required-skills gate."""
    return check(
        Gates.of(manifest), config=config, env=env, installed=installed, platform=platform, skill_dir=skill_dir
    )


def check(
    gates: Gates,
    *,
    config: Config | None,
    env: Mapping[str, str] | None = None,
    installed: set[str] | None = None,
    platform: str | None = None,
    skill_dir: Path | None = None,
) -> GateResult:
    """:func:`check_gates` on what the skill declared (``config=None``: no configuration;
    ``skill_dir``: where its ``vars.json`` is, None for none)."""
    env = os.environ if env is None else env
    platform = platform or current_platform()
    failures = _disabled(gates, config)
    if not gates.always:
        failures += [
            *_os(gates, platform),
            *_bins(gates, env, platform),
            *_any_bins(gates, env, platform),
            *_env(gates, config, env),
            *_config_keys(gates, config),
            *_skills(gates, installed),
        ]
    failures += _vars(gates, env, skill_dir)
    return GateResult(ok=not failures, failures=failures)


def is_enabled(setting: object, default_enabled: bool) -> bool:
    """The one rule for "disabled" (``check``, routing, the prompt): ``[skills.<key>] enabled``
    in config when set, else the skill's own ``default_enabled``."""
    return default_enabled if setting is None else setting is not False


def _settings(config: Config | None, key: str) -> dict:
    return config.skill_settings(key) if config is not None else {}


def _disabled(gates: Gates, config: Config | None) -> list[GateFailure]:
    enabled = _settings(config, gates.key).get("enabled")
    if is_enabled(enabled, gates.default_enabled):
        return []
    fix = f"skillctl config set skills.{gates.key}.enabled true"
    if enabled is False:
        return [GateFailure("disabled", f"disabled in config (skills.{gates.key}.enabled = false)", fix)]
    return [GateFailure("disabled", "disabled by default (default_enabled: false)", fix)]


def _os(gates: Gates, platform: str) -> list[GateFailure]:
    if not gates.os or platform in gates.os:
        return []
    return [GateFailure("os", f"runs only on {', '.join(gates.os)}; this machine is {platform}")]


def on_path(binary: str, env: Mapping[str, str]) -> bool:
    return shutil.which(binary, path=env.get("PATH", os.defpath)) is not None


def _bins(gates: Gates, env: Mapping[str, str], platform: str) -> list[GateFailure]:
    return [
        GateFailure("bins", f"needs `{b}` on PATH; it is not there", _install_fix([b], gates, env, platform))
        for b in gates.bins
        if not on_path(b, env)
    ]


def _any_bins(gates: Gates, env: Mapping[str, str], platform: str) -> list[GateFailure]:
    wanted = gates.any_bins
    if not wanted or any(on_path(b, env) for b in wanted):
        return []
    names = ", ".join(f"`{b}`" for b in wanted)
    return [
        GateFailure(
            "anyBins", f"needs one of {names} on PATH; none is there", _install_fix(wanted, gates, env, platform)
        )
    ]


def _install_fix(bins, gates: Gates, env: Mapping[str, str], platform: str) -> str | None:
    """The install command for these binaries: a spec for this OS whose tool is present first."""
    specs = [
        s
        for s in gates.install
        if (not s.os or platform in s.os) and (set(s.bins) & set(bins) or (not s.bins and s.package in bins))
    ]
    if not specs:
        return None
    specs.sort(key=lambda s: not tool_present(s, env))
    return specs[0].command()


def tool_present(spec: InstallSpec, env: Mapping[str, str]) -> bool:
    """Is the tool this install spec runs on PATH? (``download`` needs none.)"""
    tool = _INSTALLER_TOOL.get(spec.kind)
    return tool is None or on_path(tool, env)


def _env(gates: Gates, config: Config | None, env: Mapping[str, str]) -> list[GateFailure]:
    settings = _settings(config, gates.key)
    from_config = dict_at(settings, "env")
    failures = []
    for name in gates.env:
        if env.get(name) or from_config.get(name):
            continue
        if name == gates.primary_env and settings.get("apiKey"):
            continue
        fix = f"export {name}=... (or: skillctl config set skills.{gates.key}.env.{name} VALUE)"
        failures.append(GateFailure("env", f"environment variable {name} is not set", fix))
    return failures


def _config_keys(gates: Gates, config: Config | None) -> list[GateFailure]:
    return [
        GateFailure("config", f"config key {key} is not set to a true value", f"skillctl config set {key} true")
        for key in gates.config
        if config is None or not config.get(key)
    ]


def _skills(gates: Gates, installed: set[str] | None) -> list[GateFailure]:
    if installed is None:
        return []
    return [
        GateFailure("skills", f"needs the skill {name}, which is not installed", f"skillctl install {name}")
        for name in gates.skills
        if name not in installed
    ]


def _vars(gates: Gates, env: Mapping[str, str], skill_dir: Path | None) -> list[GateFailure]:
    from skillctl.errors import SkillctlError
    from skillctl.vars import SKILL_VARS_FILE, unresolved

    if not gates.vars:
        return []
    try:
        missing = unresolved(gates.vars, key=gates.key, skill_dir=skill_dir, env=env)
    except SkillctlError as err:  # a vars.json or variables.json that is not a JSON object
        return [GateFailure("vars", err.message, err.hint)]
    where = f"{skill_dir / SKILL_VARS_FILE} or variables.json" if skill_dir is not None else "variables.json"
    return [
        GateFailure("vars", f"required variable {name} has no value", f"set it in {where}, or export {name}")
        for name in missing
    ]
