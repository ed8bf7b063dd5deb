"""Vars precedence, {{VAR}} substitution, apiKey injection, secrets masked."""

from __future__ import annotations

import json

import pytest

from skillctl.config import Config
from skillctl.errors import SkillctlError
from skillctl.format.manifest import Manifest, VarSpec
from skillctl.vars import MASK, env_for_skill, resolve_vars


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    folder = tmp_path / "home" / "config"
    folder.mkdir(parents=True)
    return folder


@pytest.fixture
def skill_dir(tmp_path):
    folder = tmp_path / "hello"
    folder.mkdir()
    return folder


def manifest(**vars_: VarSpec) -> Manifest:
    return Manifest(name="hello", description="d", vars=dict(vars_))


def write_layers(config_dir, skill_dir, *, skill=None, section=None, global_=None):
    if skill is not None:
        (skill_dir / "vars.json").write_text(json.dumps(skill))
    table = {}
    if section is not None:
        table["hello"] = section
    if global_ is not None:
        table["_global"] = global_
    (config_dir / "variables.json").write_text(json.dumps(table))


# Each row removes the winning layer of the row before, so every step of the order is checked.
PRECEDENCE = [
    (dict(skill="s", section="k", global_="g", env="e"), "s", "vars.json"),
    (dict(section="k", global_="g", env="e"), "k", "variables.json"),
    (dict(global_="g", env="e"), "g", "variables.json:_global"),
    (dict(env="e"), "e", "environment"),
    ({}, "dflt", "default"),
]


@pytest.mark.parametrize(("layers", "value", "source"), PRECEDENCE)
def test_vars_precedence(config_dir, skill_dir, layers, value, source):
    write_layers(
        config_dir,
        skill_dir,
        skill={"V": layers["skill"]} if "skill" in layers else None,
        section={"V": layers["section"]} if "section" in layers else None,
        global_={"V": layers["global_"]} if "global_" in layers else None,
    )
    env = {"V": layers["env"]} if "env" in layers else {}
    resolved = resolve_vars(manifest(V=VarSpec(default="dflt")), skill_dir, env=env)
    assert resolved.values["V"] == value
    assert resolved.sources["V"] == source


def test_variables_json_section_of_another_skill_is_not_used(config_dir, skill_dir):
    (config_dir / "variables.json").write_text(json.dumps({"other": {"V": "x"}}))
    assert "V" not in resolve_vars(manifest(V=VarSpec()), skill_dir, env={}).values


def test_skill_key_names_the_variables_json_section(config_dir, skill_dir):
    (config_dir / "variables.json").write_text(json.dumps({"hello-key": {"V": "x"}}))
    m = manifest(V=VarSpec())
    m.skill_key = "hello-key"
    assert resolve_vars(m, skill_dir, env={}).values["V"] == "x"


def test_environment_is_read_only_for_declared_vars(config_dir, skill_dir):
    resolved = resolve_vars(manifest(), skill_dir, env={"HOME": "/root", "PATH": "/bin"})
    assert resolved.values == {}


def test_required_var_without_value_is_missing(config_dir, skill_dir):
    resolved = resolve_vars(manifest(V=VarSpec(required=True)), skill_dir, env={})
    assert resolved.missing == ["V"]


def test_substitute_replaces_known_placeholders_and_keeps_unknown(config_dir, skill_dir):
    (skill_dir / "vars.json").write_text(json.dumps({"CITY": "Oslo", "N": 3, "ON": True}))
    resolved = resolve_vars(manifest(), skill_dir, env={})
    text = "Weather in {{CITY}} / {{ N }} / {{ON}} / {{UNKNOWN}}"
    assert resolved.substitute(text) == "Weather in Oslo / 3 / true / {{UNKNOWN}}"


def test_secret_values_are_masked(config_dir, skill_dir):
    m = manifest(TOKEN=VarSpec(secret=True), USER=VarSpec())
    resolved = resolve_vars(m, skill_dir, env={"TOKEN": "tok-s3cret", "USER": "ann"})
    assert resolved.secrets == {"tok-s3cret"}
    assert resolved.mask("auth tok-s3cret for ann") == "auth **** for ann"
    assert "tok-s3cret" not in repr(resolved.public_values())
    assert resolved.public_values()["USER"] == "ann"


def test_a_very_short_secret_is_masked_where_it_stands_alone_not_inside_words(config_dir, skill_dir):
    m = manifest(PIN=VarSpec(secret=True), FLAG=VarSpec(secret=True))
    resolved = resolve_vars(m, skill_dir, env={"PIN": "x", "FLAG": "42"})
    assert resolved.mask("next x: 42 boxes at 1420") == "next ****: **** boxes at 1420"
    assert resolved.public_values() == {"PIN": MASK, "FLAG": MASK}


def test_config_api_key_and_env_values_are_secrets(config_dir, skill_dir):
    config = Config(skills={"hello": {"apiKey": "k-abc", "env": {"X": "x-val"}}})
    resolved = resolve_vars(manifest(), skill_dir, env={}, config=config)
    assert {"k-abc", "x-val"} <= resolved.secrets


def test_invalid_vars_json_is_an_error_with_hint(config_dir, skill_dir):
    (skill_dir / "vars.json").write_text("[1, 2")
    with pytest.raises(SkillctlError) as info:
        resolve_vars(manifest(), skill_dir, env={})
    assert info.value.code == "vars.invalid_file" and info.value.hint


def test_api_key_is_injected_into_primary_env_and_env_table_fills_gaps():
    m = manifest()
    m.primary_env = "WEATHER_API_KEY"
    config = Config(skills={"hello": {"apiKey": "k-abc", "env": {"REGION": "eu", "KEEP": "cfg"}}})
    env = env_for_skill(m, config, {"KEEP": "mine"})
    assert env == {"WEATHER_API_KEY": "k-abc", "REGION": "eu", "KEEP": "mine"}


def test_explicit_environment_wins_over_api_key():
    m = manifest()
    m.primary_env = "WEATHER_API_KEY"
    config = Config(skills={"hello": {"apiKey": "k-abc"}})
    assert env_for_skill(m, config, {"WEATHER_API_KEY": "own"})["WEATHER_API_KEY"] == "own"
