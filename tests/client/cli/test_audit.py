"""``skillctl audit`` against a registry over loopback HTTP: advisories, malicious, yanked,
deprecated and failing versions with their fixes, --strict, the kept answer, older registries."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def installed(cli, registry):
    """hello@^1.0 installed (1.1.0) from a registry that answers POST /audit."""
    registry.audits = True
    done = cli("install", "hello@^1.0")
    assert done.returncode == 0, done.stderr
    return cli


def audit(cli, *args: str):
    done = cli("audit", "--json", *args)
    return done.returncode, json.loads(done.stdout)


def test_an_advisory_on_the_installed_version_exits_1_naming_it_with_the_update_fix(installed, registry):
    registry.publish("hello", "1.2.0")
    registry.set_version("hello", "2.0.0", deprecated="use 1.2")  # the newest clean one is 1.2.0
    registry.file_advisory("hello", "<1.2.0", summary="leaks the token", severity="critical")
    asked = len(registry.audit_bodies)
    code, data = audit(installed)
    assert code == 1 and data["ok"] is False and data["as_of"] == registry.as_of
    [skill] = data["skills"]
    [finding] = skill["findings"]
    assert finding | {"message": None} == {
        "kind": "advisory",
        "blocking": True,
        "message": None,
        "fix": "skillctl update hello",
        "id": "SKY-2026-0001",
        "severity": "critical",
    }
    # one request, with the project's range
    assert registry.audit_bodies[asked:] == [{"skills": [{"name": "hello", "version": "1.1.0", "range": "^1.0"}]}]
    table = installed("audit")
    assert table.returncode == 1 and "SKY-2026-0001" in table.stdout and "skillctl update hello" in table.stdout
    assert "1 installed skill with findings as of 2026-11-28T10:00:00Z" in table.stderr


def test_the_fix_is_an_update_when_the_range_reaches_a_clean_version_though_a_newer_one_is_outside(installed, registry):
    registry.publish("hello", "1.2.0")
    registry.publish("hello", "2.0.0")  # the newest clean version, outside ^1.0
    registry.file_advisory("hello", "<1.2.0", summary="leaks the token", severity="high")
    code, data = audit(installed)
    assert code == 1 and data["skills"][0]["findings"][0]["fix"] == "skillctl update hello"


def test_a_withdrawn_advisory_no_longer_fails(installed, registry):
    advisory = registry.file_advisory("hello", "^1.0")
    assert audit(installed)[0] == 1
    advisory["withdrawn"] = registry.as_of
    code, data = audit(installed)
    assert code == 0 and data["skills"][0]["findings"] == []


@pytest.mark.parametrize(
    ("fields", "kind", "blocking"),
    [
        ({"scan_verdict": "malicious"}, "malicious", True),
        ({"yanked": True, "yanked_reason": "broken"}, "yanked", True),
        ({"scan_verdict": "warn"}, "scan_warn", False),
        ({"deprecated": "use 2.x"}, "deprecated", False),
        ({"test_result": "failed", "test_log": "...\nFAILED (failures=2)\n"}, "tests_failed", False),
    ],
)
def test_malicious_and_yanked_fail_and_the_rest_fail_only_with_strict(installed, registry, fields, kind, blocking):
    registry.set_version("hello", "1.1.0", **fields)
    code, data = audit(installed)
    [finding] = data["skills"][0]["findings"]
    assert (finding["kind"], finding["blocking"], code) == (kind, blocking, 1 if blocking else 0)
    assert audit(installed, "--strict")[0] == 1
    if kind == "tests_failed":
        assert "FAILED (failures=2)" in finding["message"]


def test_no_clean_version_in_range_names_the_clean_one_outside_it(installed, registry):
    for version in ("1.0.0", "1.1.0"):
        registry.set_version("hello", version, scan_verdict="malicious")
    [finding] = audit(installed)[1]["skills"][0]["findings"]
    assert finding["fix"] == "no clean version in range ^1.0; clean: 2.0.0 (skillctl install hello@^2.0.0)"


def test_an_unreachable_registry_is_reported_against_the_last_answer_with_its_time(installed, registry):
    registry.file_advisory("hello", "1.1.0")
    assert audit(installed)[0] == 1  # asked, and kept
    registry.close()
    code, data = audit(installed)
    assert code == 1 and data["offline"] is True and data["as_of"] == registry.as_of
    assert any("could not be reached" in note for note in data["notes"])
    offline = installed("audit", "--offline")
    assert offline.returncode == 1 and f"answer as of {registry.as_of}" in offline.stderr


def test_offline_without_a_kept_answer_is_a_network_error(cli, registry):
    assert cli("install", "hello@^1.0").returncode == 0  # no audit endpoint: nothing asked, nothing kept
    done = cli("audit", "--offline", "--json")
    assert done.returncode == 3 and json.loads(done.stdout.splitlines()[-1])["error"] == "audit.no_answer_kept"
    registry.close()
    assert cli("audit").returncode == 3  # unreachable, nothing kept


def test_an_older_registry_without_audit_is_asked_per_skill_and_says_so(cli, registry):
    assert cli("install", "hello@^1.0").returncode == 0
    registry.set_version("hello", "1.1.0", yanked=True, yanked_reason="broken")
    done = cli("audit")
    assert done.returncode == 1 and "no batch audit (an older registry)" in done.stderr
    assert "yanked" in done.stdout and "skillctl update hello" in done.stdout


def test_skills_not_from_a_registry_are_listed_as_not_audited(cli, tmp_path):
    folder = tmp_path / "src" / "local"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: local\ndescription: A local skill for tests.\n---\nHi.\n")
    assert cli("install", str(folder)).returncode == 0
    done = cli("audit")
    assert done.returncode == 0 and "local: not audited (not from a registry)" in done.stdout
    [skill] = json.loads(cli("audit", "--json").stdout)["skills"]
    assert (skill["audited"], skill["reason"]) == (False, "not from a registry")


def test_install_ends_with_one_audit_line_only_when_something_is_found(cli, registry):
    registry.audits = True
    clean = cli("install", "hello@^2.0")
    assert clean.returncode == 0 and "skillctl audit" not in clean.stderr
    registry.file_advisory("hello", "2.0.0")
    registry.publish("hello", "2.1.0")
    done = cli("update", "--json")
    assert done.returncode == 0
    assert json.loads(done.stdout)["audit"]["line"] is None  # 2.1.0 is not affected
    registry.file_advisory("hello", "2.1.0")
    again = cli("install", "hello@^2.0", "--force", "--json")
    assert again.returncode == 0, again.stderr
    assert "1 installed skill has an advisory: run skillctl audit" in again.stderr
    assert json.loads(again.stdout)["audit"]["line"] == "1 installed skill has an advisory: run skillctl audit"


def test_install_never_fails_or_speaks_for_a_registry_without_audit(cli, registry):
    registry.file_advisory("hello", "^1.0")  # known to the fake, but it answers 404 to /audit
    done = cli("install", "hello@^1.0", "--json")
    assert done.returncode == 0 and "skillctl audit" not in done.stderr
    assert json.loads(done.stdout)["audit"] is None
