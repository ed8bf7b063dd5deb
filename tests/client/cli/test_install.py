"""The install commands as a user meets them: JSON, colour, hints, exit codes, progress."""

from __future__ import annotations

import json
import os
import pty
import subprocess

import pytest

from tests.client.cli.conftest import COMMAND


def test_every_install_command_speaks_json_on_stdout(cli, registry):
    install = json.loads(cli("install", "hello@^1.0", "--json").stdout)
    assert install["changes"][0] | {"path": None} == {
        "name": "hello",
        "action": "installed",
        "from": None,
        "to": "1.1.0",
        "source": f"registry {registry.url}",
        "path": None,
        "agents": [],
        "notices": [],
    }
    registry.publish("hello", "1.2.0")
    update = json.loads(cli("update", "--dry-run", "--json").stdout)
    assert update["changes"][0]["action"] == "would-update"
    assert json.loads(cli("list", "--json").stdout)["skills"][0]["version"] == "1.1.0"
    verify = json.loads(cli("verify", "--json").stdout)
    assert verify["ok"] is True and verify["skills"][0]["name"] == "hello"
    removed = json.loads(cli("uninstall", "hello", "--json").stdout)
    assert removed["changes"][0]["action"] == "removed"


def test_update_prints_from_to_and_never_crosses_the_range(cli, registry):
    cli("install", "hello@^1.0")
    registry.publish("hello", "1.2.0")
    r = cli("update", "hello")
    assert r.returncode == 0 and "hello 1.1.0 → 1.2.0" in r.stderr
    r = cli("update", "--all")
    assert "hello 1.2.0 is up to date" in r.stderr


def test_errors_have_hints_and_documented_exit_codes(cli, registry, tmp_path):
    usage = cli("install", "Not_A_Name")
    assert usage.returncode == 2 and "hint:" in usage.stderr
    missing = cli("install", "nosuch")
    assert missing.returncode == 1 and "hint:" in missing.stderr
    offline = cli("install", "hello", SKILLYARD_REGISTRY=f"http://127.0.0.1:{_closed_port()}")
    assert offline.returncode == 3 and "hint:" in offline.stderr
    registry.served[("hello", "2.0.0")] = b"PK\x05\x06" + b"\0" * 18
    tampered = cli("install", "hello")
    assert tampered.returncode == 4 and "hint:" in tampered.stderr
    assert not (cli.project / ".agents/skills/hello").exists()
    frozen = cli("install", "--frozen", "hello")
    assert frozen.returncode == 2 and "hint:" in frozen.stderr
    nothing = cli("uninstall", "hello")
    assert nothing.returncode == 1 and "hint:" in nothing.stderr


def test_json_errors_are_one_json_line_on_stdout(cli):
    r = cli("install", "nosuch", "--json")
    assert r.returncode == 1
    assert json.loads(r.stdout)["error"] == "registry.not_found"


def test_verify_names_the_edited_file_and_exits_1(cli):
    cli("install", "hello@^1.0")
    (cli.project / ".agents/skills/hello/SKILL.md").write_text("edited\n")
    r = cli("verify")
    assert r.returncode == 1 and "SKILL.md" in r.stdout and "hint:" in r.stderr


def test_no_color_is_honoured(cli):
    coloured = cli("install", "nosuch", FORCE_COLOR="1")
    assert "\x1b[" in coloured.stderr  # the test can see colour when there is some
    plain = cli("install", "nosuch", FORCE_COLOR="1", NO_COLOR="1")
    assert "\x1b[" not in plain.stderr and "error:" in plain.stderr


def test_download_shows_a_progress_bar_on_a_terminal(cli):
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*COMMAND, "install", "hello"], cwd=cli.project, env=cli.env, stdout=subprocess.PIPE, stderr=slave
    )
    proc.wait(timeout=60)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert proc.returncode == 0
    assert b"bytes" in seen and "━".encode() in seen


def test_agents_are_linked_and_listed(cli):
    r = cli("install", "hello", "--agent", "claude", "--agent", "gemini")
    assert r.returncode == 0, r.stderr
    for folder in (".claude/skills/hello", ".gemini/skills/hello"):
        assert (cli.project / folder / "SKILL.md").exists()
    bad = cli("install", "hello", "--agent", "vim")
    assert bad.returncode == 2


def test_help_documents_sources_and_exit_codes(cli):
    assert "git+https://host/repo.git#REF:SUBDIR" in cli("install", "--help").stdout
    assert "4 integrity error" in cli("--help").stdout


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_list_all_adds_user_scope_and_extra_folders_with_gating(cli, registry, tmp_path):
    assert cli("install", "hello@^1.0").returncode == 0
    assert cli("install", "-g", "hello@1.0.0").returncode == 0
    extra = tmp_path / "extra/tool"
    extra.mkdir(parents=True)
    (extra / "SKILL.md").write_text(
        "---\nname: tool\ndescription: needs a binary nobody has.\n"
        "metadata:\n  openclaw:\n    requires:\n"
        "      bins: [surely-not-installed-bin]\n---\nbody\n"
    )
    (tmp_path / "home/config").mkdir(parents=True, exist_ok=True)
    (tmp_path / "home/config/config.toml").write_text(f'skill_dirs = ["{extra.parent}"]\n')
    project_only = json.loads(cli("list", "--json").stdout)["skills"]
    assert [(s["name"], s["scope"]) for s in project_only] == [("hello", "project")]
    everything = json.loads(cli("list", "--all", "--json").stdout)
    rows = {(s["name"], s["scope"]): s for s in everything["skills"]}
    assert rows[("hello", "project")]["version"] == "1.1.0"
    assert rows[("tool", "extra")]["gating"]["ok"] is False
    assert [c["name"] for c in everything["collisions"]] == ["hello"]  # project shadows user
    user_only = json.loads(cli("list", "-g", "--json").stdout)["skills"]
    assert [(s["name"], s["version"], s["scope"]) for s in user_only] == [("hello", "1.0.0", "user")]
    table = cli("list", "--all")
    assert "surely-not-installed-bin" in table.stdout


def test_yanked_versions_point_to_update_not_to_restoring_them(cli, registry):
    cli("install", "hello@^1.0")  # 1.1.0
    registry.set_version("hello", "1.1.0", yanked=True, yanked_reason="leaks tokens")
    verify = cli("verify")
    assert verify.returncode == 1 and "skillctl update hello" in verify.stderr and "--force" not in verify.stderr
    dry = cli("update", "--dry-run")
    assert "would move hello 1.1.0 (yanked) → 1.0.0: the newest non-yanked version in its range" in dry.stderr
    assert "would update" not in dry.stderr


def test_outdated_and_the_update_note_about_newer_versions_outside_the_range(cli, registry):
    cli("install", "hello@^1.0")
    out = cli("outdated", "--json")
    assert out.returncode == 0
    assert json.loads(out.stdout)["skills"][0] | {} == {
        "name": "hello",
        "current": "1.1.0",
        "wanted": "1.1.0",
        "latest": "2.0.0",
        "range": "^1.0",
        "outdated": True,
        "deprecated": "",
        "test_result": None,
    }
    table = cli("outdated")
    assert (
        table.returncode == 0
        and "hello" in table.stdout
        and "2.0.0" in table.stdout
        and "widen the range" in table.stderr
    )
    update = cli("update")
    assert "newer outside your ranges: hello 2.0.0 (^1.0)" in update.stderr


def test_list_shows_changed_files_and_agent_links_with_short_paths(cli, registry):
    cli("install", "hello@^1.0", "--agent", "claude")
    listed = json.loads(cli("list", "--json").stdout)["skills"][0]
    assert (listed["state"], listed["agents"]) == ("ok", ["claude"])
    skill_md = cli.project / ".agents/skills/hello/SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nA local edit.\n")
    listed = json.loads(cli("list", "--json").stdout)["skills"][0]
    assert listed["state"] == "changed" and listed["changes"] == [{"status": "changed", "path": "SKILL.md"}]
    table = cli("list")
    assert "changed" in table.stdout and "claude" in table.stdout and "skillctl verify" in table.stderr
    assert max(len(line) for line in table.stdout.splitlines()) < 120
    registry.publish("hello", "1.2.0")
    update = json.loads(cli("update", "--dry-run", "--json", "--force").stdout)
    assert update["changes"][0]["agents"] == ["claude"]


def test_a_skill_installed_under_its_normalised_name_goes_by_it_everywhere(cli):
    folder = cli.project / "vendor" / "ahrefs"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: Ahrefs Automation\ndescription: Automates Ahrefs backlink reports.\n---\n# Ahrefs\n"
    )
    installed = cli("install", "./vendor/ahrefs")
    assert installed.returncode == 0, installed.stderr
    assert "installed as ahrefs-automation" in installed.stderr
    [listed] = json.loads(cli("list", "--json").stdout)["skills"]
    assert (listed["name"], listed["state"]) == ("ahrefs-automation", "ok")
    check = cli("check", "ahrefs-automation", "--json")
    assert check.returncode == 0, check.stdout + check.stderr
    routed = json.loads(cli("route", "automate ahrefs backlink reports", "--json").stdout)
    assert [m["name"] for m in routed["skills"]] == ["ahrefs-automation"]


def _local_skill(root, name: str, extra: str = ""):
    folder = root / "vendor" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill, for {name} work.\n{extra}---\nDo {name}.\n"
    )
    return f"./vendor/{name}"


def test_agent_auto_and_all_link_only_where_agents_are_and_uninstall_tidies_up(cli, tmp_path):
    home = tmp_path / "fake-home"
    (home / ".gemini").mkdir(parents=True)  # gemini is used on this machine
    (cli.project / ".cursor" / "rules").mkdir(parents=True)  # cursor is used in this project
    source = _local_skill(cli.project, "alpha")
    auto = cli("install", source, "--agent", "auto", "--json", HOME=str(home))
    assert auto.returncode == 0, auto.stderr
    assert json.loads(auto.stdout)["changes"][0]["agents"] == ["cursor", "gemini"]
    assert (cli.project / ".cursor/skills/alpha/SKILL.md").is_file()
    assert (cli.project / ".gemini/skills/alpha/SKILL.md").is_file()
    assert not (cli.project / ".claude").exists() and not (cli.project / ".windsurf").exists()

    every = cli("install", _local_skill(cli.project, "beta"), "--agent", "all", "--json", HOME=str(home))
    assert json.loads(every.stdout)["changes"][0]["agents"] == ["cursor", "gemini"]  # none invented

    assert cli("uninstall", "alpha", "beta", HOME=str(home)).returncode == 0
    assert not (cli.project / ".gemini/skills").exists()  # made by the install, left empty: removed
    assert (cli.project / ".gemini").is_dir()  # the agent's folder is never removed
    assert (cli.project / ".cursor/rules").is_dir() and not (cli.project / ".cursor/skills").exists()


def test_install_all_of_a_folder_of_several_skills(cli):
    _local_skill(cli.project, "alpha")
    _local_skill(cli.project, "beta")
    asked = cli("install", "./vendor")
    assert asked.returncode == 2 and "--all" in asked.stderr and "alpha, beta" in asked.stderr
    done = cli("install", "./vendor", "--all", "--json")
    assert done.returncode == 0, done.stderr
    assert sorted(c["name"] for c in json.loads(done.stdout)["changes"]) == ["alpha", "beta"]


def test_install_warns_when_a_skill_cannot_work_here(cli):
    source = _local_skill(cli.project, "needs-tool", "requires:\n  bins:\n    - no-such-binary-here\n")
    done = cli("install", source)
    assert done.returncode == 0, done.stderr
    assert "no-such-binary-here" in done.stderr and "needs-tool" in done.stderr


@pytest.mark.parametrize("resolves_downloads", [False, True])
def test_install_update_and_use_print_a_deprecation_message_and_carry_it_in_json(cli, registry, resolves_downloads):
    registry.resolves_downloads = resolves_downloads  # the download's headers, or the version list
    registry.set_version("hello", "1.1.0", deprecated="use 2.x")
    message = "hello 1.1.0 is deprecated: use 2.x"
    done = cli("install", "hello@~1.1.0", "--json")
    assert done.returncode == 0 and message in done.stderr
    assert json.loads(done.stdout)["changes"][0]["notices"] == [{"code": "deprecated", "message": message}]
    used = cli("use", "hello@1.1.0", "--json")
    assert message in used.stderr and json.loads(used.stdout)["notices"][0]["code"] == "deprecated"
    registry.publish("hello", "1.1.1")
    registry.set_version("hello", "1.1.1", deprecated="also old")
    updated = cli("update")
    assert updated.returncode == 0 and "hello 1.1.1 is deprecated: also old" in updated.stderr


@pytest.mark.parametrize("resolves_downloads", [False, True])
def test_failed_tests_warn_with_the_checks_summary(cli, registry, resolves_downloads):
    registry.resolves_downloads = resolves_downloads
    registry.set_version("hello", "2.0.0", test_result="failed", test_log="test_add ... FAIL\n\nFAILED (failures=1)\n")
    done = cli("install", "hello", "--json")
    assert done.returncode == 0, done.stderr
    message = "hello 2.0.0: its tests failed: FAILED (failures=1)"
    assert "warning: " + message in done.stderr
    assert json.loads(done.stdout)["changes"][0]["notices"] == [{"code": "tests_failed", "message": message}]
    quiet = cli("install", "hello@1.1.0")
    assert "warning" not in quiet.stderr  # passing (or unknown) tests say nothing


def test_show_outdated_and_verify_carry_deprecation_and_test_results(cli, registry):
    assert cli("install", "hello@^1.0").returncode == 0
    registry.set_version("hello", "1.1.0", deprecated="use 2.x", test_result="failed", test_log="FAILED (errors=3)")
    shown = cli("show", "hello@1.1.0")
    assert "note: hello 1.1.0 is deprecated: use 2.x" in shown.stdout
    assert "note: hello 1.1.0: its tests failed: FAILED (errors=3)" in shown.stdout
    assert [n["code"] for n in json.loads(cli("show", "hello@1.1.0", "--json").stdout)["notices"]] == [
        "deprecated",
        "tests_failed",
    ]
    outdated = cli("outdated")
    assert "deprecated: use 2.x; tests failed" in outdated.stdout
    verify = cli("verify")
    assert verify.returncode == 1 and "deprecated: 1.1.0 is deprecated: use 2.x" in verify.stdout
    assert "skillctl update hello" in verify.stderr
