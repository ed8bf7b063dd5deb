"""Advisories as OSV: every object the API serves validates against the OSV JSON schema, and
skillctl ranges become the SEMVER events they mean.

tests/registry/osv-schema.json is the OSV schema 1.6.7 (OpenSSF, Apache-2.0), unmodified, as the
`osv` 0.0.22 wheel ships it (osv/osv-schema/validation/schema.json). It accepts only registered
ecosystems and id prefixes; ``Skillyard`` and ``SKY-`` are our own, so :func:`validator` widens
exactly those two definitions and nothing else — and a test proves they are the only things
the unmodified schema objects to.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from registry.osv import range_events
from skillctl.format.versions import matches
from tests.registry.conftest import make_zip

SCHEMA = json.loads((Path(__file__).parent / "osv-schema.json").read_text())


def validator(schema: dict = SCHEMA, *, ours: bool = True) -> Draft202012Validator:
    schema = copy.deepcopy(schema)
    if ours:
        defs = schema["$defs"]
        defs["ecosystem"]["pattern"] = defs["ecosystem"]["pattern"].replace("^(", "^(Skillyard|", 1)
        defs["prefix"]["pattern"] = defs["prefix"]["pattern"].replace("^(", "^(SKY|", 1)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def assert_valid(osv: dict) -> None:
    errors = sorted(validator().iter_errors(osv), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]


@pytest.mark.parametrize(
    ("spec", "events"),
    [
        ("^1.2", [[{"introduced": "1.2.0"}, {"fixed": "2.0.0-0"}]]),
        (">=1.0,<1.4", [[{"introduced": "1.0.0"}, {"fixed": "1.4.0"}]]),
        ("1.2.3", [[{"introduced": "1.2.3"}, {"last_affected": "1.2.3"}]]),
        ("*", [[{"introduced": "0"}]]),
        ("~1.2.3", [[{"introduced": "1.2.3"}, {"fixed": "1.3.0-0"}]]),
        ("<=1.4.0", [[{"introduced": "0"}, {"last_affected": "1.4.0"}]]),
        (">1.2.3", [[{"introduced": "1.2.4-0"}]]),
        ("!=1.2.3", [[{"introduced": "0"}, {"fixed": "1.2.3"}], [{"introduced": "1.2.4-0"}]]),
        (
            "^1.0 || ^3.0",
            [[{"introduced": "1.0.0"}, {"fixed": "2.0.0-0"}], [{"introduced": "3.0.0"}, {"fixed": "4.0.0-0"}]],
        ),
        (">=1,<3 || >=2,<4", [[{"introduced": "1.0.0"}, {"fixed": "4.0.0"}]]),  # overlapping: one interval
        ("<1.0.0 || >=1.0.0", [[{"introduced": "0"}]]),  # touching: one interval
        ("1.x", [[{"introduced": "1.0.0"}, {"fixed": "2.0.0-0"}]]),
    ],
)
def test_a_range_becomes_the_semver_events_it_means(spec, events):
    assert range_events(spec) == events


@pytest.mark.parametrize("spec", ["^1.2", ">=1.0,<1.4", "!=1.2.3", "^1.0 || ^3.0", ">1.2.3", "<=1.4.0", "~1.2"])
@pytest.mark.parametrize(
    "version", ["0.9.0", "1.0.0", "1.2.0", "1.2.3", "1.2.4", "1.3.9", "1.4.0", "1.9.9", "2.0.0", "3.1.0", "4.0.0"]
)
def test_the_events_hold_exactly_the_releases_the_range_matches(spec, version):
    assert _in_events(range_events(spec), version) == matches(spec, version)


def _in_events(ranges: list[list[dict]], version: str) -> bool:
    from skillctl.format.versions import Version

    v = Version.parse(version)
    for events in ranges:
        low = events[0]["introduced"]
        if low != "0" and v < Version.parse(low):
            continue
        end = events[1] if len(events) > 1 else {}
        if "fixed" in end and not v < Version.parse(end["fixed"]):
            continue
        if "last_affected" in end and v > Version.parse(end["last_affected"]):
            continue
        return True
    return False


def file(api, name: str, **fields) -> dict:
    body = {"summary": "Leaks the token", "severity": "high", "affected": "^1.0", **fields}
    response = api.post(f"/api/v1/skills/{name}/advisories", body)
    assert response.status_code == 201, response.json()
    return response.json()


@pytest.mark.django_db
@pytest.mark.parametrize("affected", ["^1.0", "1.0.0", "*", "!=1.1.0", ">=1.0,<1.1 || >=2", "<=1.1.0"])
def test_every_advisory_the_api_serves_validates_against_the_osv_schema(alice_api, anon_api, affected):
    for version in ("1.0.0", "1.1.0", "2.0.0"):
        assert alice_api.publish("pdf-tools", make_zip("pdf-tools", version=version)).status_code == 201
    created = file(
        alice_api, "pdf-tools", affected=affected, details="## How\n\nIt *sends* it.", aliases=["CVE-2026-1"]
    )
    withdrawn = alice_api.post(f"/api/v1/advisories/{created['id']}/withdraw").json()
    served = [
        created,
        withdrawn,
        anon_api.get(f"/api/v1/advisories/{created['id']}").json(),
        *anon_api.get("/api/v1/skills/pdf-tools/advisories").json()["advisories"],
        *anon_api.get("/api/v1/advisories").json()["advisories"],
    ]
    for osv in served:
        assert_valid(osv)
    assert withdrawn["withdrawn"] and withdrawn["id"] == created["id"]


@pytest.mark.django_db
def test_the_unmodified_schema_objects_only_to_our_ecosystem_and_id_prefix(alice_api):
    assert alice_api.publish("pdf-tools", make_zip("pdf-tools")).status_code == 201
    osv = file(alice_api, "pdf-tools")
    errors = list(validator(ours=False).iter_errors(osv))
    assert sorted(list(e.path) for e in errors) == [["affected", 0, "package", "ecosystem"], ["id"]]


def test_the_schema_would_catch_a_wrong_object():
    """The validator is not a yes-machine: a severity that is no CVSS vector, fixed together with
    last_affected, and a timestamp without its zone are each refused."""
    base = {"id": "SKY-2026-0001", "modified": "2026-01-01T00:00:00Z"}
    bad = [
        {**base, "severity": [{"type": "CVSS_V3", "score": "high"}]},
        {**base, "modified": "2026-01-01T00:00:00"},
        {
            **base,
            "affected": [
                {
                    "package": {"ecosystem": "Skillyard", "name": "x"},
                    "ranges": [
                        {"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "1"}, {"last_affected": "2"}]}
                    ],
                }
            ],
        },
    ]
    assert validator().is_valid(base)
    assert not any(validator().is_valid(osv) for osv in bad)
