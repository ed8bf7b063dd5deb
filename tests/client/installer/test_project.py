"""skills.toml and skills.lock: round trips, fixed order, atomic writes, clear errors."""

from __future__ import annotations

import pytest

from skillctl import paths
from skillctl.errors import SkillctlError
from skillctl.installer.project import (
    Locked,
    Scope,
    Wanted,
    read_lock,
    read_manifest,
    render_lock,
    render_manifest,
    source_kind,
    write_lock,
    write_manifest,
)


def test_manifest_round_trip_keeps_unknown_keys_and_sorts(tmp_path):
    path = tmp_path / "skills.toml"
    wanted = {
        "zeta": Wanted("zeta", {"git": "https://example.org/r.git", "ref": "v1", "subdir": "s/z"}),
        "alpha": Wanted("alpha", {"registry": "corp", "version": "^1.0"}, ["codex", "claude"], {"note": "keep me"}),
    }
    write_manifest(path, wanted)
    text = path.read_text()
    assert text.index("[skills.alpha]") < text.index("[skills.zeta]")
    back = read_manifest(path)
    assert back["alpha"].source == {"registry": "corp", "version": "^1.0"}
    assert back["alpha"].agents == ["claude", "codex"] and back["alpha"].extra == {"note": "keep me"}
    assert render_manifest(back) == text


def test_manifest_rewrite_keeps_comments_layout_and_untouched_entries(tmp_path):
    path = tmp_path / "skills.toml"
    path.write_text(
        "# Skills for this repo: ask #platform before adding one.\n\n"
        "[skills.notes]  # our own\n"
        'path = "../notes"\n\n'
        "[skills.hello]\n"
        'registry = "default"\n'
        'version = "^1.0"  # 2.x breaks the CI prompt\n\n'
        "[skills.old]\n"
        'path = "../old"\n'
    )
    wanted = read_manifest(path)
    wanted["hello"] = Wanted("hello", {"registry": "default", "version": "^1.2"}, ["claude"])
    del wanted["old"]
    wanted["fmt"] = Wanted("fmt", {"archive": "dist/fmt.zip"})
    write_manifest(path, wanted)
    text = path.read_text()
    assert text.startswith("# Skills for this repo: ask #platform before adding one.\n")
    assert "[skills.notes]  # our own\n" in text
    assert 'version = "^1.2"  # 2.x breaks the CI prompt' in text
    assert "[skills.old]" not in text
    assert text.index("[skills.notes]") < text.index("[skills.hello]") < text.index("[skills.fmt]")
    assert read_manifest(path) == wanted


def test_manifest_without_changes_is_rewritten_byte_for_byte(tmp_path):
    path = tmp_path / "skills.toml"
    original = '# header\n[skills.b]\npath = "b"   # aligned\n\n[skills.a]\nregistry = "x"\nversion = "1"\n'
    path.write_text(original)
    write_manifest(path, read_manifest(path))
    assert path.read_text() == original


def test_lock_round_trip_is_byte_identical_and_files_sorted(tmp_path):
    path = tmp_path / "skills.lock"
    entry = Locked(
        "hello",
        "1.1.0",
        "a" * 64,
        {"registry": "main"},
        registry_url="http://x",
        files={"scripts/z.py": "2" * 64, "SKILL.md": "1" * 64},
    )
    write_lock(path, {"hello": entry})
    text = path.read_text()
    assert text.index('"SKILL.md"') < text.index('"scripts/z.py"')
    assert read_lock(path)["hello"] == entry
    assert render_lock(read_lock(path)) == text


def test_missing_files_read_as_empty(tmp_path):
    assert read_manifest(tmp_path / "skills.toml") == {}
    assert read_lock(tmp_path / "skills.lock") == {}


@pytest.mark.parametrize("text", ["[skills\n", "skills = 3\n", "[skills]\nhello = 1\n"])
def test_broken_manifest_is_an_error_with_a_hint(tmp_path, text):
    (tmp_path / "skills.toml").write_text(text)
    with pytest.raises(SkillctlError) as err:
        read_manifest(tmp_path / "skills.toml")
    assert err.value.hint


def test_newer_lock_version_is_refused(tmp_path):
    (tmp_path / "skills.lock").write_text("lock-version = 99\n")
    with pytest.raises(SkillctlError) as err:
        read_lock(tmp_path / "skills.lock")
    assert err.value.code == "project.lock_version"


def test_atomic_write_leaves_no_temporary_files(tmp_path):
    write_manifest(tmp_path / "skills.toml", {})
    write_manifest(tmp_path / "skills.toml", {"a": Wanted("a", {"path": "x"})})
    assert [p.name for p in tmp_path.iterdir()] == ["skills.toml"]


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ({"registry": "r", "version": "^1"}, "registry"),
        ({}, "registry"),
        ({"path": "x"}, "folder"),
        ({"archive": "x.zip"}, "archive"),
        ({"url": "https://x"}, "url"),
        ({"git": "file:///r"}, "git"),
    ],
)
def test_source_kind_from_record(source, kind):
    assert source_kind(source) == kind


def test_scopes_put_files_where_documented(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLYARD_USER_SKILLS", str(tmp_path / "home/.agents/skills"))
    project = Scope.project(tmp_path / "proj")
    assert project.skills_dir == (tmp_path / "proj").resolve() / paths.PROJECT_SKILLS
    assert project.lock_path.name == "skills.lock" and project.lock_path.parent == (tmp_path / "proj").resolve()
    assert project.work_dir.parent == project.skills_dir.parent  # outside the folder agents scan
    user = Scope.user()
    assert user.lock_path == tmp_path / "home/.agents/skills.lock"
