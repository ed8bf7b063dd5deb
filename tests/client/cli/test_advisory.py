"""``skillctl advisory create|list|withdraw`` against a registry over loopback HTTP."""

from __future__ import annotations

import json


def test_create_list_and_withdraw_round_trip(cli, registry, tmp_path):
    registry.audits = True
    details = tmp_path / "details.md"
    details.write_text("Versions before 1.1 send the token to the log.\n")
    filed = cli(
        "advisory", "create", "hello", "--affected", "<1.1.0", "--severity", "high", "--summary", "leaks the token",
        "--details", f"@{details}",
    )  # fmt: skip
    assert filed.returncode == 0, filed.stderr
    assert filed.stdout.strip() == "SKY-2026-0001" and "skillctl audit" in filed.stderr
    [stored] = registry.advisories
    assert stored["details"] == details.read_text() and stored["database_specific"]["severity"] == "high"

    listed = cli("advisory", "list", "hello")
    assert listed.returncode == 0 and "SKY-2026-0001" in listed.stdout and "leaks the token" in listed.stdout
    withdrawn = json.loads(cli("advisory", "withdraw", "SKY-2026-0001", "--json").stdout)
    assert withdrawn["withdrawn"] == registry.as_of
    assert "withdrawn 2026-11-28: leaks the token" in cli("advisory", "list", "hello").stdout


def test_bad_input_is_a_usage_error_before_any_request(cli, registry, tmp_path):
    base = ["advisory", "create", "hello", "--summary", "x"]
    bad_range = cli(*base, "--affected", "not a range", "--severity", "high")
    bad_severity = cli(*base, "--affected", "1.0.0", "--severity", "dire")
    unreadable = cli(*base, "--affected", "1.0.0", "--severity", "low", "--details", f"@{tmp_path}/nothing", "--json")
    assert (bad_range.returncode, bad_severity.returncode, unreadable.returncode) == (2, 2, 2)
    assert json.loads(unreadable.stdout)["error"] == "advisory.details_unreadable"
    assert not [r for r in registry.requests if r.startswith("POST")]


def test_refusals_keep_the_registrys_error_codes(cli, registry):
    registry.audits = True
    missing = cli("advisory", "withdraw", "SKY-2026-9999", "--json")
    assert missing.returncode == 1 and json.loads(missing.stdout)["error"] == "registry.not_found"
