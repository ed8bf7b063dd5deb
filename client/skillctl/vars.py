"""Skill variables: where their values come from, ``{{VAR}}`` substitution, secret masking.

Precedence, highest first (DESIGN section 6):

1. ``vars.json`` in the skill folder (``{"VAR": "value"}``);
2. ``variables.json`` in ``paths.config_dir()``: the section named by the skill's key, then
   its ``_global`` section;
3. the environment (only for variables the skill declares);
4. the ``default`` the skill declares.

Values of variables declared ``secret`` are collected so every output can mask them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillctl import paths
from skillctl.errors import SkillctlError

if TYPE_CHECKING:
    from skillctl.config import Config
    from skillctl.format.manifest import Manifest

SKILL_VARS_FILE = "vars.json"
GLOBAL_VARS_FILE = "variables.json"
GLOBAL_SECTION = "_global"
MASK = "****"
# A secret this short ("1", "on", a PIN) also occurs inside ordinary words and numbers: masking
# every occurrence would garble the output without hiding anything. Shorter secrets are masked
# only where they stand alone (not inside a longer run of letters and digits).
MIN_SUBSTRING_MASK = 4
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}")


@dataclass
class ResolvedVars:
    values: dict[str, str] = field(default_factory=dict)
    secrets: set[str] = field(default_factory=set)  # the secret VALUES, to mask in output
    missing: list[str] = field(default_factory=list)  # required variables without a value
    sources: dict[str, str] = field(default_factory=dict)  # name -> where its value came from

    unset: set[str] = field(default_factory=set)  # declared variables without a value

    def substitute(self, text: str) -> str:
        """Replace ``{{VAR}}`` with known values, and a declared variable without one with "" (no
        placeholder of the skill's reaches a model); other ``{{...}}`` text stays as it is."""
        return _PLACEHOLDER.sub(lambda m: self._value(m.group(1), m.group(0)), text)

    def _value(self, name: str, placeholder: str) -> str:
        if name in self.values:
            return self.values[name]
        return "" if name in self.unset else placeholder

    def require(self, skill: str) -> None:
        """SkillctlError(vars.missing) when a required variable has no value."""
        if self.missing:
            names = ", ".join(self.missing)
            raise SkillctlError(
                f"skill {skill!r} is unavailable: required variable {names} has no value",
                hint=f"set it in the skill's {SKILL_VARS_FILE} or {GLOBAL_VARS_FILE}, or export it (skillctl check)",
                code="vars.missing",
            )

    def mask(self, text: str) -> str:
        # Longest first, so a secret containing another secret is masked whole.
        for secret in sorted(self.secrets, key=len, reverse=True):
            if len(secret) >= MIN_SUBSTRING_MASK:
                text = text.replace(secret, MASK)
            else:
                text = re.sub(rf"(?<![^\W_]){re.escape(secret)}(?![^\W_])", MASK, text)
        return text

    def public_values(self) -> dict[str, str]:
        """The values with secrets masked: what may be printed or sent to an LLM."""
        return {k: self.mask(v) for k, v in self.values.items()}


def _read_json_object(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SkillctlError(
            f"{path} is not valid JSON: {exc}",
            hint='It must hold one JSON object, e.g. {"VAR": "value"}.',
            code="vars.invalid_file",
        ) from exc
    if not isinstance(data, dict):
        raise SkillctlError(
            f"{path} must hold a JSON object",
            hint='Write it as {"VAR": "value"}.',
            code="vars.invalid_file",
        )
    return data


def _strings(table: Any) -> dict[str, str]:
    if not isinstance(table, dict):
        return {}
    return {str(k): _as_text(v) for k, v in table.items() if v is not None and not isinstance(v, dict)}


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def resolve_vars(
    manifest: Manifest,
    skill_dir: Path,
    *,
    env: Mapping[str, str] | None = None,
    config: Config | None = None,
) -> ResolvedVars:
    env = os.environ if env is None else env
    layers = _layers(manifest.key, skill_dir)
    declared = manifest.vars
    names = list(declared) + [n for _, layer in layers for n in layer if n not in declared]
    result = ResolvedVars()
    for name in dict.fromkeys(names):
        value, source = _lookup(name, layers, declared, env)
        if value is None:
            if name in declared and declared[name].required:
                result.missing.append(name)
            result.unset.add(name)
            continue
        result.values[name] = value
        result.sources[name] = source
        if name in declared and declared[name].secret and value:
            result.secrets.add(value)
    if config is not None:
        result.secrets.update(_config_secrets(manifest, config))
    return result


def _layers(key: str, skill_dir: Path | None) -> list[tuple[str, dict[str, str]]]:
    """(source, values) of the files, highest first; no skill folder: no ``vars.json``."""
    global_file = _read_json_object(paths.config_dir() / GLOBAL_VARS_FILE)
    own = _read_json_object(Path(skill_dir) / SKILL_VARS_FILE) if skill_dir is not None else {}
    return [
        ("vars.json", _strings(own)),
        ("variables.json", _strings(global_file.get(key))),
        ("variables.json:_global", _strings(global_file.get(GLOBAL_SECTION))),
    ]


def unresolved(names: Sequence[str], *, key: str, skill_dir: Path | None, env: Mapping[str, str]) -> list[str]:
    """The required variables among ``names`` (declared without a default) that no file and no
    environment variable gives a value: what makes a skill unavailable (the ``vars`` gate)."""
    layers = _layers(key, skill_dir)
    return [n for n in names if not any(n in layer for _, layer in layers) and not env.get(n)]


def _lookup(name, layers, declared, env) -> tuple[str | None, str]:
    for source, layer in layers:
        if name in layer:
            return layer[name], source
    if name in declared:
        if env.get(name):
            return env[name], "environment"
        if declared[name].default is not None:
            return str(declared[name].default), "default"
    return None, ""


def _config_secrets(manifest: Manifest, config: Config) -> set[str]:
    """The skill's apiKey and env values from the config: secrets too, never shown."""
    settings = config.skill_settings(manifest.key)
    found = {str(settings["apiKey"])} if settings.get("apiKey") else set()
    env_table = settings.get("env")
    if isinstance(env_table, dict):
        found.update(str(v) for v in env_table.values() if v)
    return found


def env_for_skill(manifest: Manifest, config: Config, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a skill runs with: ``env`` plus what the config injects.

    ``[skills.<key>.env]`` entries and the ``apiKey`` (into ``primaryEnv``) fill variables
    the environment does not already set: an explicit environment always wins.
    """
    result = dict(os.environ if env is None else env)
    settings = config.skill_settings(manifest.key)
    env_table = settings.get("env")
    for name, value in env_table.items() if isinstance(env_table, dict) else ():
        if not result.get(name) and value is not None:
            result[name] = _as_text(value)
    api_key = settings.get("apiKey")
    if manifest.primary_env and api_key and not result.get(manifest.primary_env):
        result[manifest.primary_env] = str(api_key)
    return result


def render_for_model(text: str, manifest: Manifest, skill_dir: Path, *, config: Config | None = None) -> str:
    """A skill's text as a model may read it: its variables substituted (vars.missing when a
    required one has no value) and their secret values masked."""
    resolved = resolve_vars(manifest, skill_dir, config=config)
    resolved.require(manifest.name)
    return resolved.mask(resolved.substitute(text))


def run_env(
    manifest: Manifest, skill_dir: Path, *, config: Config | None, env: Mapping[str, str] | None = None
) -> tuple[dict[str, str], set[str]]:
    """(the variables a run of the skill gets, the values to mask in what it prints): the ones
    it declares (``requires.env``, ``primaryEnv``, ``vars``) with the values that satisfy
    ``skillctl check`` (environment, ``[skills.<key>.env]``, ``apiKey``, vars files, defaults).
    Nothing undeclared leaves this machine's environment."""
    from skillctl.config import Config

    config = config if config is not None else Config()
    environment = env_for_skill(manifest, config, env)
    resolved = resolve_vars(manifest, skill_dir, env=environment, config=config)
    required = [n for n in (*manifest.requires.env, manifest.primary_env) if n and environment.get(n)]
    given = {n: environment[n] for n in required}
    given.update({n: v for n, v in resolved.values.items() if n in manifest.vars})
    # Credentials: what gates on env and primaryEnv name is a token or key more often than not.
    return given, resolved.secrets | {given[n] for n in required}
