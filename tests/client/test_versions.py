"""Version specs resolve like a package manager's, case by case."""

from __future__ import annotations

import pytest

from skillctl.errors import ExitCode
from skillctl.format.versions import (
    Version,
    VersionSpecError,
    matches,
    parse_spec,
    resolve,
    sort_key,
)


def vs(*items: str) -> list[dict]:
    """Versions; a trailing `!` marks a yanked one."""
    return [{"version": i.rstrip("!"), "yanked": i.endswith("!")} for i in items]


CATALOGUE = vs("0.9.0", "1.0.0", "1.1.0", "1.2.0!", "1.2.1-beta.1", "2.0.0-rc.1", "2.0.0", "2.1.0")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("", "2.1.0"),
        ("*", "2.1.0"),
        ("1.1.0", "1.1.0"),
        ("=1.1.0", "1.1.0"),
        ("==1.1.0", "1.1.0"),
        ("latest", "2.1.0"),  # no `latest` tag: the default
        ("~=1.0", "1.1.0"),
        ("~=1.0.0", "1.0.0"),
        ("!=2.x", "1.1.0"),
        ("!=2.1.0", "2.0.0"),
        (">=0.9, !=1.1.0 <2", "1.0.0"),
        ("<=1.1.0", "1.1.0"),
        (">2.0.0", "2.1.0"),
        ("v1.1.0", "1.1.0"),
        ("1.2.0", "1.2.0"),  # yanked, but asked for exactly
        ("1.2.1-beta.1", "1.2.1-beta.1"),
        ("3.0.0", None),
        ("^1.0", "1.1.0"),  # 1.2.0 is yanked, 1.2.1-beta.1 is a prerelease
        ("^1", "1.1.0"),
        ("^1.0.0", "1.1.0"),
        ("~1.0", "1.0.0"),
        ("~1.1.0", "1.1.0"),
        ("~2", "2.1.0"),
        (">=1,<2", "1.1.0"),
        (">=1 <2", "1.1.0"),
        (">= 1, < 2", "1.1.0"),
        (">1", "2.1.0"),
        (">1.1.0 <2.1.0", "2.0.0"),
        ("<=1", "1.1.0"),
        ("<1", "0.9.0"),
        ("1.x", "1.1.0"),
        ("1", "1.1.0"),
        ("2.0.*", "2.0.0"),
        ("0.x || 2.0.x", "2.0.0"),
        ("^0.9", "0.9.0"),
        (">=1.2.1-beta.0 <1.3", "1.2.1-beta.1"),  # a prerelease bound opts in to that release
        ("^3", None),
    ],
)
def test_resolve(spec, expected):
    assert resolve(spec, CATALOGUE) == expected


def test_a_range_never_jumps_to_the_next_major_prerelease():
    assert resolve("^1.0", vs("1.0.0", "2.0.0-rc.1")) == "1.0.0"
    assert not matches("<2", "2.0.0-rc.1")


def test_caret_below_one_keeps_the_minor_and_below_0_0_keeps_the_patch():
    assert matches("^0.2.3", "0.2.9") and not matches("^0.2.3", "0.3.0")
    assert matches("^0.0.3", "0.0.3") and not matches("^0.0.3", "0.0.4")


def test_dist_tag_resolves_through_the_tags_and_skips_yanked():
    tags = {"latest": "2.0.0", "beta": "1.2.1-beta.1", "old": "1.2.0"}
    assert resolve("latest", CATALOGUE, dist_tags=tags) == "2.0.0"
    assert resolve("beta", CATALOGUE, dist_tags=tags) == "1.2.1-beta.1"
    assert resolve("old", CATALOGUE, dist_tags=tags) is None  # tag points at a yanked version
    assert resolve("nightly", CATALOGUE, dist_tags=tags) is None
    assert resolve("latest", CATALOGUE) == "2.1.0"  # no such tag: the default
    assert parse_spec("latest").kind == "tag"


def test_all_yanked_resolves_to_nothing():
    assert resolve("", vs("1.0.0!", "1.1.0!")) is None


def test_default_falls_back_to_the_highest_prerelease_when_there_is_no_release():
    assert resolve("", vs("1.0.0-rc.1", "1.0.0-beta")) == "1.0.0-rc.1"
    assert resolve("*", vs("1.0.0-rc.1")) is None  # a range never picks a prerelease unasked


def test_unparsable_registry_versions_are_ignored():
    assert resolve("", [{"version": "banana", "yanked": False}, *vs("1.0.0")]) == "1.0.0"


@pytest.mark.parametrize("spec", ["^^1", ">=foo", "1.2.3.4", "~", ">=", "1.2.3 bad", "@1", "==", "~=1", "1.2-beta"])
def test_garbage_spec_is_a_usage_error_with_hint(spec):
    with pytest.raises(VersionSpecError) as info:
        parse_spec(spec)
    assert info.value.code == "version.spec"
    assert info.value.exit_code == ExitCode.USAGE
    assert info.value.hint


def test_semver_precedence():
    order = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.0.1",
        "1.10.0",
        "10.0.0",
    ]
    assert sorted(reversed(order), key=sort_key) == order


def test_build_metadata_is_accepted_and_ignored_for_order():
    assert Version.parse("1.0.0+build.5") == Version.parse("1.0.0")


def test_matches_is_false_for_unparsable_versions_and_tags():
    assert matches("*", "not-a-version") is False
    assert matches("latest", "1.0.0") is False
