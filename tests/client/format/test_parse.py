"""SKILL.md frontmatter edge cases: every input gets a verdict, asserted by finding codes."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillctl.format.findings import CODES
from skillctl.format.parse import parse_skill_md

GOOD = "---\nname: demo\ndescription: Does a thing. Then more.\nlicense: MIT\n---\n# Body\n"


def codes(report) -> set[str]:
    return {f.code for f in report.findings}


def error_codes(report) -> set[str]:
    return {f.code for f in report.errors}


def test_minimal_skill_is_valid_without_findings():
    report = parse_skill_md(GOOD, folder_name="demo")
    assert report.valid and report.findings == []
    assert report.body == "# Body\n"
    assert report.manifest.name == "demo"


def test_bytes_and_text_give_the_same_verdict():
    assert parse_skill_md(GOOD.encode()).to_json() == parse_skill_md(GOOD).to_json()


def test_bom_is_a_warning():
    report = parse_skill_md(b"\xef\xbb\xbf" + GOOD.encode())
    assert report.valid and codes(report) == {"skill.bom"}


def test_crlf_is_accepted():
    report = parse_skill_md(GOOD.replace("\n", "\r\n"))
    assert report.valid and report.manifest.description == "Does a thing. Then more."


@pytest.mark.parametrize(
    "text, code",
    [
        ("", "frontmatter.missing"),
        ("# Just markdown\n", "frontmatter.missing"),
        ("\n---\nname: x\n---\n", "frontmatter.missing"),
        ("---\nname: demo\ndescription: d\n", "frontmatter.unclosed"),
        ("---", "frontmatter.unclosed"),
        ("---\nname: [unclosed\n---\n", "frontmatter.invalid_yaml"),
        ("---\n\tname: demo\n---\n", "frontmatter.invalid_yaml"),
        ("---\n- a\n- b\n---\n", "frontmatter.not_mapping"),
        ("---\njust a string\n---\n", "frontmatter.not_mapping"),
        ("---\n---\n", "name.missing"),
    ],
)
def test_broken_frontmatter_is_an_error(text, code):
    report = parse_skill_md(text)
    assert not report.valid
    assert code in error_codes(report)


def test_binary_junk_is_not_utf8():
    report = parse_skill_md(b"\xff\xfe\x00\x01garbage\x80")
    assert error_codes(report) == {"skill.not_utf8"}


def test_valid_utf8_junk_is_missing_frontmatter():
    assert error_codes(parse_skill_md(b"\x00\x01\x02 PK\x03\x04")) == {"frontmatter.missing"}


def test_huge_skill_md_is_refused_before_parsing():
    data = GOOD.encode() + b"x" * (1024 * 1024)
    assert error_codes(parse_skill_md(data)) == {"skill.too_large"}


def test_long_body_is_a_warning():
    report = parse_skill_md(GOOD + "line\n" * 600)
    assert report.valid and "skill.too_long" in codes(report)


def test_alias_bomb_is_refused_quickly():
    lines = ["---", "a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 12):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 10) + "]")
    text = "\n".join(lines + ["---", ""])
    start = time.monotonic()
    report = parse_skill_md(text)
    assert time.monotonic() - start < 2
    assert error_codes(report) == {"frontmatter.too_complex"}


def test_small_aliases_are_fine():
    text = "---\nname: demo\ndescription: d\nx: &v [1]\ny: *v\n---\n"
    assert parse_skill_md(text).valid


@pytest.mark.parametrize("value", ["x: &a [*a]", "metadata: &m {self: *m}", "m: &m {a: {b: [*m]}}"])
def test_recursive_alias_is_refused(value):
    report = parse_skill_md(f"---\nname: demo\ndescription: d\n{value}\n---\n")
    assert error_codes(report) == {"frontmatter.too_complex"}


def test_aliases_repeating_a_long_string_are_refused_before_anything_expands():
    # The audit's archive: one 100 KB string and 300 aliases to it (a 30 MB manifest once stored).
    lines = ["---", "name: demo", "description: d", "metadata:", "  a: &a " + "x" * 100_000]
    lines += [f"  k{i}: *a" for i in range(300)]
    start = time.monotonic()
    report = parse_skill_md("\n".join(lines + ["---", ""]))
    assert time.monotonic() - start < 2
    assert error_codes(report) == {"frontmatter.too_complex"} and report.manifest is None


def test_more_than_the_allowed_alias_uses_is_refused():
    from skillctl.format.frontmatter import MAX_ALIASES

    uses = "\n".join(f"k{i}: *a" for i in range(MAX_ALIASES + 1))
    report = parse_skill_md(f"---\nname: demo\ndescription: d\na: &a v\n{uses}\n---\n")
    assert error_codes(report) == {"frontmatter.too_complex"}


def test_deeply_nested_yaml_is_refused():
    depth = 5000
    text = "---\nname: demo\ndescription: d\nx: " + "[" * depth + "]" * depth + "\n---\n"
    report = parse_skill_md(text)
    assert not report.valid
    assert error_codes(report) & {"frontmatter.too_complex", "frontmatter.invalid_yaml"}


def test_flow_style_is_a_portability_warning():
    report = parse_skill_md("---\nname: demo\ndescription: d\nlicense: MIT\ntags: [a, b]\n---\n")
    assert report.valid and codes(report) == {"frontmatter.flow_style"}
    assert report.manifest.tags == ["a", "b"]


def test_whole_frontmatter_in_flow_style_is_accepted():
    report = parse_skill_md('---\n{name: demo, description: "d", license: MIT}\n---\n')
    assert report.valid and "frontmatter.flow_style" in codes(report)


def test_inline_json_metadata_is_accepted_with_its_own_warning():
    text = '---\nname: demo\ndescription: d\nlicense: MIT\nmetadata: {"openclaw":{"emoji":"x"}}\n---\n'
    report = parse_skill_md(text)
    assert report.valid
    assert "metadata.json_inline" in codes(report)
    assert "frontmatter.flow_style" not in codes(report)
    assert report.manifest.emoji == "x"


def test_lenient_retry_quotes_colon_values():
    text = "---\nname: demo\ndescription: Use when: the user asks\nlicense: MIT\n---\n"
    report = parse_skill_md(text)
    assert report.valid and codes(report) == {"frontmatter.lenient_parse"}
    assert report.manifest.description == "Use when: the user asks"


def test_duplicate_keys_are_reported_with_their_line():
    report = parse_skill_md("---\nname: demo\ndescription: d\nlicense: MIT\nname: demo\n---\n")
    dup = [f for f in report.findings if f.code == "frontmatter.duplicate_key"]
    assert dup and dup[0].location == "SKILL.md:5"


def test_error_location_names_the_line():
    report = parse_skill_md("---\nname: Bad Name\ndescription: d\n---\n")
    (finding,) = [f for f in report.errors if f.code == "name.pattern"]
    assert finding.location == "SKILL.md:2"


def test_dates_stay_strings():
    report = parse_skill_md("---\nname: demo\ndescription: d\nmetadata:\n  updated: 2024-01-01\n---\n")
    assert report.manifest.metadata["updated"] == "2024-01-01"


def test_binary_yaml_tags_do_not_break_json():
    import json

    report = parse_skill_md("---\nname: demo\ndescription: d\nmetadata:\n  blob: !!binary aGVsbG8=\n---\n")
    json.dumps(report.manifest.to_dict())


def test_skill_json_invalid_is_an_error():
    report = parse_skill_md(GOOD, skill_json=b"{not json")
    assert error_codes(report) == {"skill.json_invalid"}
    report = parse_skill_md(GOOD, skill_json=b"[1]")
    assert error_codes(report) == {"skill.json_invalid"}


# --- strict ---------------------------------------------------------------------------------
def test_strict_rejects_extension_fields():
    report = parse_skill_md(GOOD.replace("license: MIT", "license: MIT\nversion: 1.0.0"), strict=True)
    assert error_codes(report) == {"spec.extension_field"}


def test_strict_rejects_non_string_metadata():
    text = GOOD.replace("license: MIT", "license: MIT\nmetadata:\n  n: 1")
    assert parse_skill_md(text).valid
    assert error_codes(parse_skill_md(text, strict=True)) == {"metadata.value_type"}


def test_strict_requires_name_equal_to_folder():
    assert parse_skill_md(GOOD, folder_name="other").valid
    assert error_codes(parse_skill_md(GOOD, folder_name="other", strict=True)) == {"name.folder_mismatch"}


def test_default_policy_warns_where_strict_errors():
    text = GOOD.replace("license: MIT", "license: MIT\nfoo: bar")
    assert codes(parse_skill_md(text)) == {"frontmatter.unknown_key"}
    assert error_codes(parse_skill_md(text, strict=True)) == {"spec.extension_field"}


# --- never crash -----------------------------------------------------------------------------
def _check_never_raises(data) -> None:
    report = parse_skill_md(data)
    assert all(f.code in CODES for f in report.findings)
    report.to_json()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_random_bytes_never_raise(data):
    _check_never_raises(data)
    _check_never_raises(b"---\n" + data + b"\n---\n")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=500))
def test_random_frontmatter_text_never_raises(text):
    _check_never_raises("---\n" + text + "\n---\nbody")
    _check_never_raises("---\nname: x\ndescription: " + text + "\n---\n")


YAMLISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=20)),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)
FIELDS = ["name", "description", "license", "compatibility", "metadata", "allowed-tools", "version",
          "requires", "install", "vars", "mcp", "triggers", "runtime", "os", "scripts", "toolsets",
          "conditional_next_skills", "always", "user-invocable"]  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(FIELDS), YAMLISH, max_size=6))
def test_any_field_types_become_findings_not_exceptions(fields):
    import json

    import yaml

    text = "---\n" + yaml.safe_dump(fields) + "---\n"
    _check_never_raises(text)
    manifest = parse_skill_md(text).manifest
    if manifest is not None:
        json.dumps(manifest.to_dict())


@pytest.mark.parametrize("word", ["off", "on", "yes", "no", "y", "n"])
def test_yaml_1_1_boolean_words_stay_strings(word):
    report = parse_skill_md(f"---\nname: {word}\ndescription: A skill named {word}.\n---\nbody\n")
    assert report.valid, [f.code for f in report.errors]
    assert report.name == word


def test_true_and_false_are_still_booleans():
    text = "---\nname: flags\ndescription: d\nalways: true\nuser-invocable: False\n---\nbody\n"
    manifest = parse_skill_md(text).manifest
    assert manifest.always is True and manifest.user_invocable is False
