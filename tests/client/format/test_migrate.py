"""skillctl migrate's library half: inline JSON metadata to block YAML, body byte for byte."""

from __future__ import annotations

import pytest

from skillctl.format.migrate import MigrateError, migrate_skill_md, plan_migration
from skillctl.format.parse import parse_skill_md

HEAD = b'---\nname: demo\ndescription: Use when: things happen\nmetadata: {"clawdbot":{"emoji":"\xf0\x9f\x8e\xae","requires":{"bins":["jq"]}}}\n---\n'
ODD_BODY = b"# Body\r\n\r\nmixed\nendings\r\x00\x01 \xff\xfe not utf-8 \xe2\x80\xae\r\n  trailing   \n\n"


def frontmatter_data(data: bytes):
    return parse_skill_md(data.split(b"\n---", 1)[0] + b"\n---\n").manifest


def test_inline_json_becomes_block_yaml_and_parses_to_the_same_manifest():
    out = migrate_skill_md(HEAD + b"# body\n")
    assert b'{"clawdbot"' not in out
    assert b"metadata:\n  clawdbot:\n    emoji:" in out
    before, after = parse_skill_md(HEAD), parse_skill_md(out)
    assert after.manifest.metadata == before.manifest.metadata
    assert after.manifest.requires.bins == ["jq"]
    assert "metadata.json_inline" not in {f.code for f in after.findings}


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
def test_body_is_kept_byte_for_byte(eol):
    data = HEAD.replace(b"\n", eol) + ODD_BODY
    out = migrate_skill_md(data)
    assert out.endswith(b"---" + eol + ODD_BODY)
    head = out[: len(out) - len(ODD_BODY)]
    if eol == b"\r\n":
        assert head.count(b"\n") == head.count(b"\r\n")  # new lines use the file's line ending


def test_other_frontmatter_lines_are_kept_as_they_are():
    data = HEAD.replace(b"name: demo\n", b"name:   demo   # odd spacing\n'quoted': x\n")
    out = migrate_skill_md(data + b"body")
    assert b"name:   demo   # odd spacing\n'quoted': x\ndescription: Use when: things happen\n" in out


def test_bom_and_missing_final_newline_survive():
    data = b"\xef\xbb\xbf" + HEAD + b"no newline at end"
    out = migrate_skill_md(data)
    assert out.startswith(b"\xef\xbb\xbf---\n") and out.endswith(b"---\nno newline at end")


def test_inline_gating_block_inside_block_metadata_is_migrated():
    data = b'---\nname: demo\ndescription: d\nmetadata:\n  author: me\n  openclaw: {"emoji": "x"}\n---\nbody\n'
    out = migrate_skill_md(data)
    assert b"  openclaw:\n    emoji: x\n" in out and b"  author: me\n" in out


@pytest.mark.parametrize(
    "data, code",
    [(b"---\nname: demo\ndescription: d\nmetadata:\n  a: b\n---\n", "migrate.nothing_to_do"),
     (b"---\nname: demo\ndescription: d\n---\n", "migrate.nothing_to_do"),
     (b"# no frontmatter\n", "frontmatter.missing"),
     (b'---\nname: demo\nmetadata: {"a": 1}\n', "frontmatter.unclosed"),
     (b"---\nname: [broken\nmetadata: {\"a\": 1}\n---\n", "migrate.unsafe")],
)  # fmt: skip
def test_refuses_when_nothing_to_do_or_unsafe(data, code):
    with pytest.raises(MigrateError) as info:
        migrate_skill_md(data)
    assert info.value.code == code


def test_plan_and_write_replace_the_file_atomically(tmp_path):
    folder = tmp_path / "demo"
    folder.mkdir()
    path = folder / "SKILL.md"
    path.write_bytes(HEAD + ODD_BODY)
    path.chmod(0o640)
    migration = plan_migration(folder)
    assert migration.original == HEAD + ODD_BODY
    assert "+  clawdbot:" in migration.diff()
    from skillctl.cli.main import main  # the planning is pure; `skillctl migrate` writes

    assert main(["migrate", str(folder)]) == 0
    assert path.read_bytes() == migration.migrated and path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in folder.iterdir()] == ["SKILL.md"]  # no temporary file left behind


def test_every_inline_json_skill_in_the_corpus_migrates(corpus_dir):
    migrated = 0
    for path in corpus_dir.rglob("SKILL.md"):
        data = path.read_bytes()
        if b"\nmetadata: {" not in data.replace(b"\r\n", b"\n"):
            continue
        try:
            out = migrate_skill_md(data)
        except MigrateError as exc:
            assert exc.code in {
                "migrate.unsafe",
                "migrate.nothing_to_do",
                "frontmatter.unclosed",
                "frontmatter.missing",
            }
            continue
        before, after = parse_skill_md(data), parse_skill_md(out)
        assert after.manifest.metadata == before.manifest.metadata
        assert after.body.encode() == before.body.encode()
        migrated += 1
    assert migrated > 500


# --- --flatten: seed 002's form (issue 36 item 22) ------------------------------------------------
def test_flatten_moves_the_gating_block_directly_under_metadata_with_the_same_manifest():
    from skillctl.format.migrate import flatten_skill_md

    data = HEAD + b"# body\r\nkept\n"
    out = flatten_skill_md(data)
    assert b"metadata:\n  emoji:" in out and b"clawdbot" not in out
    assert out.endswith(b"---\n# body\r\nkept\n") and out.startswith(b"---\nname: demo\n")
    before, after = parse_skill_md(data).manifest, parse_skill_md(out).manifest
    assert after.requires.bins == ["jq"] and after.emoji == before.emoji
    codes = {f.code for f in parse_skill_md(out).findings}
    assert "metadata.value_type" not in codes and codes <= {f.code for f in parse_skill_md(data).findings}


def test_flatten_keeps_other_metadata_and_block_style_blocks():
    from skillctl.format.migrate import flatten_skill_md

    data = (
        b"---\nname: demo\ndescription: d\nmetadata:\n  author: me\n  openclaw:\n    os: [linux]\n"
        b"    requires:\n      env: [TOKEN]\nlicense: MIT\n---\nbody\n"
    )
    out = flatten_skill_md(data)
    assert b"  author: me\n" in out and b"openclaw" not in out and b"license: MIT\n---\nbody\n" in out
    assert parse_skill_md(out).manifest.requires.env == ["TOKEN"] and parse_skill_md(out).manifest.os == ["linux"]


def test_flatten_with_no_gating_block_has_nothing_to_do():
    from skillctl.format.migrate import flatten_skill_md

    with pytest.raises(MigrateError) as err:
        flatten_skill_md(b"---\nname: demo\ndescription: d\nmetadata:\n  author: me\n---\n")
    assert err.value.code == "migrate.nothing_to_do"


def test_flatten_through_plan_migration(tmp_path):
    (tmp_path / "SKILL.md").write_bytes(HEAD + b"x\n")
    migration = plan_migration(tmp_path, flatten=True)
    assert b"clawdbot" not in migration.migrated and "-metadata: {" in migration.diff()
