"""`skillctl migrate --flatten`: seed 002's flattened form, which skillctl reads as well."""

from __future__ import annotations

from skillctl.format.load import load_skill
from tests.client.cli.test_authoring import INLINE, make_skill, run


def test_migrate_flatten_writes_the_gating_fields_directly_under_metadata(tmp_path, capsys):
    folder = make_skill(tmp_path, INLINE)
    before = load_skill(folder).manifest
    assert run(capsys, "migrate", "--flatten", str(folder))[0] == 0
    data = (folder / "SKILL.md").read_bytes()
    assert b"openclaw" not in data and b"metadata:\n  emoji: x\n" in data and data.endswith(b"---\n# body\r\n")
    after = load_skill(folder).manifest
    assert after.emoji == before.emoji == "x" and after.requires == before.requires
    code, _, err = run(capsys, "migrate", "--flatten", str(folder))
    assert code == 1 and "already directly under metadata" in err
