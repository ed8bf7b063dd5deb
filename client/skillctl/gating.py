"""Gating: can this skill work on this machine? (DESIGN section 6, ``skillctl check``)

Gates, in order: ``disabled`` (config ``enabled = false``, or ``default_enabled: false`` without
``enabled = true``), ``os``, ``bins`` (all on PATH), ``anyBins`` (one on PATH), ``env`` (set in
the environment, in ``[skills.<key>.env]``, or the ``apiKey`` for ``primaryEnv``), ``config``
(dotted keys of config.toml that must be truthy), ``skills`` (other skills installed).

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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillctl.config import Config
    from skillctl.format.manifest import InstallSpec, Manifest

# The tool each install kind needs; a spec whose tool is present is suggested first.
_INSTALLER_TOOL = {"brew": "brew", "apt": "apt-get", "npm": "npm", "go": "go", "uv": "uv"}


@dataclass
class GateFailure:
    gate: str  # os | bins | anyBins | env | config | skills | disabled
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
    env = os.environ if env is None else env
    platform = platform or current_platform()
    failures = [
        *_disabled(manifest, config),
        *_os(manifest, platform),
        *_bins(manifest, env, platform),
        *_any_bins(manifest, env, platform),
        *_env(manifest, config, env),
        *_config_keys(manifest, config),
        *_skills(manifest, installed),
    ]
    return GateResult(ok=not failures, failures=failures)


def is_enabled(setting: object, default_enabled: bool) -> bool:
    """The one rule for "disabled" (``check``, routing, the prompt): ``[skills.<key>] enabled``
    in config when set, else the skill's own ``default_enabled``."""
    return default_enabled if setting is None else setting is not False


def _disabled(manifest: Manifest, config: Config) -> list[GateFailure]:
    enabled = config.skill_settings(manifest.key).get("enabled")
    if is_enabled(enabled, manifest.default_enabled):
        return []
    fix = f"skillctl config set skills.{manifest.key}.enabled true"
    if enabled is False:
        return [GateFailure("disabled", f"disabled in config (skills.{manifest.key}.enabled = false)", fix)]
    return [GateFailure("disabled", "disabled by default (default_enabled: false)", fix)]


def _os(manifest: Manifest, platform: str) -> list[GateFailure]:
    if not manifest.os or platform in manifest.os:
        return []
    return [GateFailure("os", f"runs only on {', '.join(manifest.os)}; this machine is {platform}")]


def _on_path(binary: str, env: Mapping[str, str]) -> bool:
    return shutil.which(binary, path=env.get("PATH", os.defpath)) is not None


def _bins(manifest: Manifest, env: Mapping[str, str], platform: str) -> list[GateFailure]:
    return [
        GateFailure("bins", f"needs `{b}` on PATH; it is not there", _install_fix([b], manifest, env, platform))
        for b in manifest.requires.bins
        if not _on_path(b, env)
    ]


def _any_bins(manifest: Manifest, env: Mapping[str, str], platform: str) -> list[GateFailure]:
    wanted = manifest.requires.any_bins
    if not wanted or any(_on_path(b, env) for b in wanted):
        return []
    names = ", ".join(f"`{b}`" for b in wanted)
    return [GateFailure("anyBins", f"needs one of {names} on PATH; none is there",
                        _install_fix(wanted, manifest, env, platform))]


def _install_fix(bins: list[str], manifest: Manifest, env: Mapping[str, str], platform: str) -> str | None:
    """The install command for these binaries: a spec for this OS whose tool is present first."""
    specs = [
        s for s in manifest.install
        if (not s.os or platform in s.os) and (set(s.bins) & set(bins) or (not s.bins and s.package in bins))
    ]
    if not specs:
        return None
    specs.sort(key=lambda s: not _tool_present(s, env))
    return specs[0].command()


def _tool_present(spec: InstallSpec, env: Mapping[str, str]) -> bool:
    tool = _INSTALLER_TOOL.get(spec.kind)
    return tool is None or _on_path(tool, env)


def _env(manifest: Manifest, config: Config, env: Mapping[str, str]) -> list[GateFailure]:
    settings = config.skill_settings(manifest.key)
    from_config = settings.get("env") if isinstance(settings.get("env"), dict) else {}
    failures = []
    for name in manifest.requires.env:
        if env.get(name) or from_config.get(name):
            continue
        if name == manifest.primary_env and settings.get("apiKey"):
            continue
        fix = f"export {name}=... (or: skillctl config set skills.{manifest.key}.env.{name} VALUE)"
        failures.append(GateFailure("env", f"environment variable {name} is not set", fix))
    return failures


def _config_keys(manifest: Manifest, config: Config) -> list[GateFailure]:
    return [
        GateFailure("config", f"config key {key} is not set to a true value", f"skillctl config set {key} true")
        for key in manifest.requires.config
        if not config.get(key)
    ]


def _skills(manifest: Manifest, installed: set[str] | None) -> list[GateFailure]:
    if installed is None:
        return []
    return [
        GateFailure("skills", f"needs the skill {name}, which is not installed", f"skillctl install {name}")
        for name in manifest.requires.skills
        if name not in installed
    ]
