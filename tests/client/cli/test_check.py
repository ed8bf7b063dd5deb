"""`skillctl check [NAME]` on installed project skills: each gate, fixes, exit codes, secrets."""

from __future__ import annotations

import json
import stat

import pytest

from skillctl.cli.main import main

SECRETS = ("tok-vars-json-secret", "k-config-apikey-secret", "env-config-secret", "env-process-secret")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SKILLYARD_USER_SKILLS", str(tmp_path / "user-skills"))
    monkeypatch.setenv("NO_COLOR", "1")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    proj = tmp_path / "proj"
    (proj / ".agents" / "skills").mkdir(parents=True)
    monkeypatch.chdir(proj)
    return proj


def add_skill(project, name: str, extra: str = "", files: dict | None = None):
    folder = project / ".agents" / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\nversion: 1.0.0\n{extra}---\n\n# {name}\n"
    )
    for rel, text in (files or {}).items():
        (folder / rel).write_text(text)
    return folder


def add_bin(project, name: str):
    path = project.parent / "bin" / name
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def write_config(project, text: str):
    folder = project.parent / "home" / "config"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def failures(capsys, name: str) -> list[dict]:
    code, out, _ = run(capsys, "check", name, "--json")
    [skill] = json.loads(out)["skills"]
    assert code == (0 if skill["ok"] else 1)
    return skill["failures"]


def test_all_gates_pass_exit_0(capsys, project):
    add_bin(project, "jq")
    add_skill(project, "fine", "requires:\n  bins: [jq]\n")
    code, out, err = run(capsys, "check")
    assert code == 0
    assert out.split() == ["fine", "ok"]
    assert "1 checked, all ok" in err


def test_seed_002_requirements_directly_under_metadata_fail_check(capsys, project):
    add_skill(
        project,
        "github",
        "metadata:\n  requires:\n    bins: [gh]\n    env: [GITHUB_TOKEN]\n  primaryEnv: GITHUB_TOKEN\n"
        "  install:\n    - kind: brew\n      formula: gh\n      bins: [gh]\n",
    )
    found = failures(capsys, "github")
    assert [f["gate"] for f in found] == ["bins", "env"]
    assert found[0]["fix"] == "brew install gh"
    write_config(project, '[skills.github]\napiKey = "k-secret-value"\n')
    add_bin(project, "gh")
    assert failures(capsys, "github") == []


def test_always_true_skips_the_gates(capsys, project):
    add_skill(project, "always-on", "always: true\nrequires:\n  bins: [not-installed-anywhere]\n")
    assert failures(capsys, "always-on") == []


def test_os_gate(capsys, project):
    other = "darwin" if __import__("sys").platform.startswith("linux") else "linux"
    add_skill(project, "mac", f"os: [{other}]\n")
    [f] = failures(capsys, "mac")
    assert f["gate"] == "os" and other in f["reason"]


def test_bins_gate_with_install_fix(capsys, project):
    add_skill(project, "tool", "requires:\n  bins: [jq]\ninstall:\n  - kind: apt\n    package: jq\n    bins: [jq]\n")
    [f] = failures(capsys, "tool")
    assert f["gate"] == "bins" and "`jq`" in f["reason"]
    assert f["fix"] == "sudo apt-get install jq"
    code, out, _ = run(capsys, "check", "tool")
    assert code == 1
    assert "bins: needs `jq` on PATH" in out and "fix: sudo apt-get install jq" in out


def test_any_bins_gate(capsys, project):
    add_skill(project, "browser", "requires:\n  anyBins: [chromium, google-chrome]\n")
    [f] = failures(capsys, "browser")
    assert f["gate"] == "anyBins" and "chromium" in f["reason"]
    add_bin(project, "google-chrome")
    assert failures(capsys, "browser") == []


def test_env_gate_and_config_env_and_api_key(capsys, project, monkeypatch):
    add_skill(project, "weather", "primaryEnv: WEATHER_KEY\nrequires:\n  env: [WEATHER_KEY, REGION]\n")
    gates = failures(capsys, "weather")
    assert [(f["gate"], f["reason"]) for f in gates] == [
        ("env", "environment variable WEATHER_KEY is not set"),
        ("env", "environment variable REGION is not set"),
    ]
    write_config(project, '[skills.weather]\napiKey = "k"\nenv = { REGION = "eu" }\n')
    assert failures(capsys, "weather") == []


def test_config_gate(capsys, project):
    add_skill(project, "needs-cfg", "requires:\n  config: [browser.enabled]\n")
    [f] = failures(capsys, "needs-cfg")
    assert f["gate"] == "config" and f["fix"] == "skillctl config set browser.enabled true"
    write_config(project, "[browser]\nenabled = true\n")
    assert failures(capsys, "needs-cfg") == []


def test_required_skills_gate(capsys, project):
    add_skill(project, "report", "requires:\n  skills: [pdf]\n")
    [f] = failures(capsys, "report")
    assert f["gate"] == "skills" and "pdf" in f["reason"] and f["fix"] == "skillctl install pdf"
    add_skill(project, "pdf")
    assert failures(capsys, "report") == []


def test_disabled_gate(capsys, project):
    add_skill(project, "muted")
    add_skill(project, "opt-in", "default_enabled: false\n")
    write_config(project, "[skills.muted]\nenabled = false\n")
    [f] = failures(capsys, "muted")
    assert f["gate"] == "disabled" and f["fix"] == "skillctl config set skills.muted.enabled true"
    [f] = failures(capsys, "opt-in")
    assert f["gate"] == "disabled" and "default_enabled" in f["reason"]


def test_missing_required_var_is_reported(capsys, project):
    add_skill(project, "needs-var", "vars:\n  CITY:\n    required: true\n")
    [f] = failures(capsys, "needs-var")
    assert f["gate"] == "vars" and "CITY" in f["reason"]


def test_check_all_exits_1_when_any_fails_and_lists_each(capsys, project):
    add_skill(project, "good")
    add_skill(project, "bad", "requires:\n  bins: [nope-bin]\n")
    code, out, err = run(capsys, "check")
    assert code == 1
    assert "bad   FAIL (1)" in out and "good  ok" in out
    assert "2 checked, 1 failing" in err


def test_check_unknown_name_is_an_error_with_hint(capsys, project):
    code, _, err = run(capsys, "check", "ghost")
    assert code == 1 and "not installed" in err and "hint:" in err
    code, out, _ = run(capsys, "check", "ghost", "--json")
    assert json.loads(out)["error"] == "install.not_installed"


def test_secrets_never_appear_in_any_output(capsys, project, monkeypatch):
    # The vars.json secret is also the name of a missing binary, so an unmasked reason would
    # print it: this proves masking is applied to everything printed.
    add_skill(
        project,
        "sekrit",
        "primaryEnv: API_TOKEN\n"
        "vars:\n  API_TOKEN:\n    secret: true\n  OTHER:\n    secret: true\n"
        "requires:\n  bins: [tok-vars-json-secret]\n  env: [MISSING_ONE]\n",
        files={"vars.json": json.dumps({"API_TOKEN": "tok-vars-json-secret"})},
    )
    monkeypatch.setenv("OTHER", "env-process-secret")
    write_config(project, '[skills.sekrit]\napiKey = "k-config-apikey-secret"\nenv = { X = "env-config-secret" }\n')
    outputs = [
        run(capsys, *argv)
        for argv in (
            ["check"],
            ["check", "--json"],
            ["check", "sekrit"],
            ["check", "sekrit", "--json"],
            ["check", "nope"],
            ["check", "nope", "--json"],
            ["config"],
            ["config", "--json"],
        )
    ]
    text = "\n".join(out + err for _, out, err in outputs)
    for secret in SECRETS:
        assert secret not in text
    assert "****" in text
    assert outputs[0][0] == 1


def test_collisions_between_project_and_user_scope_are_warned(capsys, project, tmp_path):
    add_skill(project, "dup")
    user = tmp_path / "user-skills" / "dup"
    user.mkdir(parents=True)
    (user / "SKILL.md").write_text("---\nname: dup\ndescription: user copy\n---\n")
    code, out, err = run(capsys, "check")
    assert code == 0 and "dup is in more than one place" in err
    doc = json.loads(run(capsys, "check", "--json")[1])
    assert doc["collisions"][0]["name"] == "dup"


def test_an_invalid_vars_json_is_one_vars_failure(capsys, project):
    add_skill(project, "broken-vars", "vars:\n  CITY:\n    required: true\n", files={"vars.json": "not json"})
    [f] = failures(capsys, "broken-vars")
    assert f["gate"] == "vars" and "vars.json" in f["reason"]
