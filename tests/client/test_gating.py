"""Each gate of `skillctl check`, with its reason and the command that would fix it."""

from __future__ import annotations

import os
import stat

import pytest

from skillctl.config import Config
from skillctl.format.manifest import InstallSpec, Manifest, Requires
from skillctl.gating import check_gates, current_platform


@pytest.fixture
def bin_dir(tmp_path):
    """A PATH holding only the executables a test creates."""
    folder = tmp_path / "bin"
    folder.mkdir()
    return folder


def make_exe(folder, name):
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def gate(manifest, tmp_path, *, config=None, env=None, installed=None, platform="linux"):
    return check_gates(
        manifest,
        tmp_path,
        config=config or Config(),
        env=env if env is not None else {},
        installed=installed,
        platform=platform,
    )


def skill(**kw) -> Manifest:
    requires = kw.pop("requires", Requires())
    return Manifest(name="hello", description="d", requires=requires, **kw)


def test_a_skill_without_requirements_passes(tmp_path):
    assert gate(skill(), tmp_path).ok


def test_os_gate(tmp_path):
    m = skill(os=["darwin", "win32"])
    result = gate(m, tmp_path, platform="linux")
    assert not result.ok
    [failure] = result.failures
    assert failure.gate == "os"
    assert "darwin" in failure.reason and "linux" in failure.reason
    assert gate(m, tmp_path, platform="darwin").ok


def test_current_platform_uses_the_manifest_names():
    assert current_platform() in ("linux", "darwin", "win32")


def test_bins_gate_names_each_missing_binary_and_its_install_command(tmp_path, bin_dir):
    make_exe(bin_dir, "git")
    m = skill(
        requires=Requires(bins=["git", "jq", "rg"]),
        install=[
            InstallSpec(kind="brew", package="jq", bins=["jq"], os=["darwin"]),
            InstallSpec(kind="apt", package="jq", bins=["jq"], os=["linux"]),
        ],
    )
    result = gate(m, tmp_path, env={"PATH": str(bin_dir)})
    assert [(f.gate, f.fix) for f in result.failures] == [
        ("bins", "sudo apt-get install jq"),
        ("bins", None),
    ]
    assert "`jq`" in result.failures[0].reason and "`rg`" in result.failures[1].reason


def test_bins_fix_prefers_an_installer_present_on_this_machine(tmp_path, bin_dir):
    make_exe(bin_dir, "npm")
    m = skill(
        requires=Requires(bins=["prettier"]),
        install=[
            InstallSpec(kind="brew", package="prettier", bins=["prettier"]),
            InstallSpec(kind="npm", package="prettier", bins=["prettier"]),
        ],
    )
    [failure] = gate(m, tmp_path, env={"PATH": str(bin_dir)}).failures
    assert failure.fix == "npm install -g prettier"


def test_bins_present_pass(tmp_path, bin_dir):
    make_exe(bin_dir, "jq")
    assert gate(skill(requires=Requires(bins=["jq"])), tmp_path, env={"PATH": str(bin_dir)}).ok


def test_any_bins_gate_passes_with_one_and_fails_with_none(tmp_path, bin_dir):
    m = skill(
        requires=Requires(any_bins=["chromium", "google-chrome"]),
        install=[InstallSpec(kind="apt", package="chromium", bins=["chromium"])],
    )
    [failure] = gate(m, tmp_path, env={"PATH": str(bin_dir)}).failures
    assert failure.gate == "anyBins"
    assert "`chromium`" in failure.reason and "`google-chrome`" in failure.reason
    assert failure.fix == "sudo apt-get install chromium"
    make_exe(bin_dir, "google-chrome")
    assert gate(m, tmp_path, env={"PATH": str(bin_dir)}).ok


def test_env_gate_is_satisfied_by_environment_config_env_or_api_key(tmp_path):
    m = skill(requires=Requires(env=["WEATHER_KEY", "REGION"]), primary_env="WEATHER_KEY")
    result = gate(m, tmp_path)
    assert [f.gate for f in result.failures] == ["env", "env"]
    assert "WEATHER_KEY" in result.failures[0].reason
    assert "skills.hello.env.WEATHER_KEY" in result.failures[0].fix
    assert gate(m, tmp_path, env={"WEATHER_KEY": "k", "REGION": "eu"}).ok
    config = Config(skills={"hello": {"apiKey": "k", "env": {"REGION": "eu"}}})
    assert gate(m, tmp_path, config=config).ok


def test_empty_env_value_counts_as_unset(tmp_path):
    m = skill(requires=Requires(env=["X"]))
    assert not gate(m, tmp_path, env={"X": ""}).ok


def test_config_gate_needs_a_truthy_dotted_key(tmp_path):
    m = skill(requires=Requires(config=["browser.enabled"]))
    [failure] = gate(m, tmp_path).failures
    assert failure.gate == "config" and "browser.enabled" in failure.reason
    assert failure.fix == "skillctl config set browser.enabled true"
    assert not gate(m, tmp_path, config=Config(values={"browser": {"enabled": False}})).ok
    assert gate(m, tmp_path, config=Config(values={"browser": {"enabled": True}})).ok


def test_required_skills_gate(tmp_path):
    m = skill(requires=Requires(skills=["pdf", "docx"]))
    result = gate(m, tmp_path, installed={"hello", "pdf"})
    [failure] = result.failures
    assert failure.gate == "skills" and "docx" in failure.reason
    assert failure.fix == "skillctl install docx"
    assert gate(m, tmp_path, installed={"pdf", "docx"}).ok
    assert gate(m, tmp_path, installed=None).ok  # unknown: not judged


def test_disabled_in_config(tmp_path):
    config = Config(skills={"hello": {"enabled": False}})
    [failure] = gate(skill(), tmp_path, config=config).failures
    assert failure.gate == "disabled" and "enabled = false" in failure.reason
    assert failure.fix == "skillctl config set skills.hello.enabled true"


def test_disabled_by_default_unless_enabled_in_config(tmp_path):
    m = skill(default_enabled=False)
    [failure] = gate(m, tmp_path).failures
    assert failure.gate == "disabled" and "default_enabled" in failure.reason
    assert gate(m, tmp_path, config=Config(skills={"hello": {"enabled": True}})).ok


def test_skill_key_selects_the_config_section(tmp_path):
    m = skill(skill_key="hello-key")
    assert not gate(m, tmp_path, config=Config(skills={"hello-key": {"enabled": False}})).ok
    assert gate(m, tmp_path, config=Config(skills={"hello": {"enabled": False}})).ok


def test_all_failures_are_reported_together(tmp_path):
    m = skill(os=["win32"], requires=Requires(bins=["nope"], env=["E"], config=["c"], skills=["s"]))
    result = gate(m, tmp_path, installed=set())
    assert [f.gate for f in result.failures] == ["os", "bins", "env", "config", "skills"]
    assert result.to_dict()["ok"] is False


def test_reasons_never_contain_env_or_config_values(tmp_path):
    m = skill(requires=Requires(env=["A", "B"]), primary_env="A")
    config = Config(skills={"hello": {"env": {"B": ""}, "apiKey": ""}})
    result = gate(m, tmp_path, config=config, env={"OTHER": "s3cret-value"})
    assert "s3cret-value" not in repr(result.to_dict())


def test_default_env_is_the_process_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("PMCORE_GATE_TEST", "1")
    m = skill(requires=Requires(env=["PMCORE_GATE_TEST"]))
    assert check_gates(m, tmp_path, config=Config()).ok
    assert os.environ["PMCORE_GATE_TEST"] == "1"


def test_gates_kept_by_the_routing_index_give_the_same_verdict(tmp_path):
    from skillctl.gating import Gates, check

    manifest = Manifest(
        name="deploy",
        os=["linux", "darwin"],
        primary_env="API_KEY",
        default_enabled=True,
        requires=Requires(bins=["no-such-bin-xyz"], env=["API_KEY"], config=["a.b"], skills=["x"]),
        install=[InstallSpec(kind="apt", package="no-such-bin-xyz")],
    )
    gates = Gates.of(manifest)
    assert gates.declared() and not Gates("plain").declared()
    stored = Gates.from_dict(gates.to_dict())
    assert stored == Gates.of(Manifest(**{**manifest.__dict__, "install": []}))  # install specs are not kept
    config = Config()
    direct = check_gates(manifest, tmp_path, config=config, env={}, installed=set(), platform="linux")
    again = check(stored, config=config, env={}, installed=set(), platform="linux")
    assert [f.gate for f in again.failures] == [f.gate for f in direct.failures] == ["bins", "env", "config", "skills"]
    assert [f.gate for f in check(stored, config=None, env={}, installed=set(), platform="win32").failures][0] == "os"


# --- seed 002's `always`, seed 003's required variables (issue 36 items 2, 3) -------------------
def test_always_skips_the_machine_gates(tmp_path):
    m = skill(always=True, os=["win32"], requires=Requires(bins=["nope"], env=["NOPE_TOKEN"], config=["x.y"]))
    assert gate(m, tmp_path, platform="linux").ok
    assert not gate(skill(os=["win32"], requires=Requires(bins=["nope"])), tmp_path, platform="linux").ok


def test_always_does_not_override_disabling_in_config(tmp_path):
    config = Config(skills={"hello": {"enabled": False}})
    result = gate(skill(always=True), tmp_path, config=config)
    assert [f.gate for f in result.failures] == ["disabled"]


def test_a_required_variable_without_value_fails_the_vars_gate_naming_it(tmp_path, monkeypatch):
    from skillctl.format.manifest import VarSpec

    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    m = skill(vars={"API_TOKEN": VarSpec(required=True, secret=True), "STYLE": VarSpec(default="x")})
    [failure] = gate(m, tmp_path).failures
    assert failure.gate == "vars" and "API_TOKEN" in failure.reason and "STYLE" not in failure.reason
    assert gate(m, tmp_path, env={"API_TOKEN": "t"}).ok
    (tmp_path / "vars.json").write_text('{"API_TOKEN": "from-file"}')
    assert gate(m, tmp_path).ok
    assert gate(skill(always=True, vars=m.vars), tmp_path / "elsewhere").failures[0].gate == "vars"


def test_the_routing_index_keeps_always_and_required_variables(tmp_path, monkeypatch):
    from skillctl.format.manifest import VarSpec
    from skillctl.gating import Gates, check

    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    m = skill(always=True, requires=Requires(bins=["nope"]), vars={"API_TOKEN": VarSpec(required=True)})
    stored = Gates.from_dict(Gates.of(m).to_dict())
    assert stored.always and stored.vars == ("API_TOKEN",) and Gates.of(skill(vars=m.vars)).declared()
    result = check(stored, config=None, env={}, skill_dir=tmp_path)
    assert [(f.gate, "API_TOKEN" in f.reason) for f in result.failures] == [("vars", True)]
