"""load_skill on folders, SKILL.md paths and archives; never raises, keeps the path as given."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from skillctl.format.load import load_skill

SKILL = "---\nname: demo\ndescription: Does a thing.\nlicense: MIT\nversion: 1.0.0\n---\n# Demo\n"


def error_codes(report) -> set[str]:
    return {f.code for f in report.errors}


@pytest.fixture
def skill_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "demo"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL)
    (folder / "scripts" / "run.py").write_text("print('hi')\n")
    return folder


def test_folder_is_valid(skill_dir):
    report = load_skill(skill_dir)
    assert report.valid and report.name == "demo" and report.version == "1.0.0"
    assert report.path == str(skill_dir)


def test_folder_lists_its_files_when_archive_support_is_there(skill_dir):
    pytest.importorskip("skillctl.format.archive")
    paths = {f.path for f in load_skill(skill_dir).files}
    assert {"SKILL.md", "scripts/run.py"} <= paths


def test_skill_md_path_uses_its_parent_as_folder(skill_dir, tmp_path):
    report = load_skill(skill_dir / "SKILL.md")
    assert report.valid and report.findings == []
    other = tmp_path / "other"
    other.mkdir()
    (other / "SKILL.md").write_text(SKILL)
    assert "name.folder_mismatch" in {f.code for f in load_skill(other / "SKILL.md").warnings}


def test_path_is_kept_exactly_as_given(skill_dir, monkeypatch):
    monkeypatch.chdir(skill_dir.parent)
    assert load_skill("./demo/").path == "./demo/"
    assert load_skill("demo").valid
    monkeypatch.chdir(skill_dir)
    report = load_skill(".")
    assert report.path == "." and report.valid  # the folder name comes from the real path


def test_lower_case_skill_md_is_accepted_with_a_warning(tmp_path):
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "skill.md").write_text(SKILL)
    report = load_skill(folder)
    assert report.valid and "skill.filename_case" in {f.code for f in report.warnings}


def test_missing_path(tmp_path):
    report = load_skill(tmp_path / "nope")
    assert error_codes(report) == {"skill.not_found"} and not report.valid


def test_folder_without_skill_md(tmp_path):
    assert error_codes(load_skill(tmp_path)) == {"skill.missing"}


def test_unsupported_file(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hi")
    assert error_codes(load_skill(path)) == {"skill.unsupported_input"}


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_skill_md(skill_dir):
    (skill_dir / "SKILL.md").chmod(0)
    try:
        assert error_codes(load_skill(skill_dir)) == {"skill.unreadable"}
    finally:
        (skill_dir / "SKILL.md").chmod(0o644)


def test_unreadable_folder_is_a_finding_not_an_exception(tmp_path):
    target = tmp_path / "loop"
    target.symlink_to(target)  # a symlink loop: every stat fails
    report = load_skill(target)
    assert not report.valid and error_codes(report) <= {"skill.unreadable", "skill.not_found"}


def test_skill_md_over_one_mib(skill_dir):
    (skill_dir / "SKILL.md").write_bytes(SKILL.encode() + b"x" * (1024 * 1024))
    assert error_codes(load_skill(skill_dir)) == {"skill.too_large"}


def test_skill_md_not_utf8(skill_dir):
    (skill_dir / "SKILL.md").write_bytes(SKILL.encode() + b"\xff\xfe")
    assert error_codes(load_skill(skill_dir)) == {"skill.not_utf8"}


def test_skill_json_beside_skill_md_gives_the_runtime(skill_dir):
    (skill_dir / "skill.json").write_text('{"entrypoint": "scripts/run.py", "timeout_seconds": 9}')
    runtime = load_skill(skill_dir).manifest.runtime
    assert runtime.entrypoint == "scripts/run.py" and runtime.timeout_seconds == 9.0


def test_broken_skill_json_is_an_error(skill_dir):
    (skill_dir / "skill.json").write_text("{oops")
    assert error_codes(load_skill(skill_dir)) == {"skill.json_invalid"}


def test_strict_flag_is_recorded(skill_dir):
    report = load_skill(skill_dir, strict=True)
    assert report.strict and error_codes(report) == {"spec.extension_field"}


# --- archives (needs skillctl.format.archive) ----------------------------------------------------
def _zip(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _tar_gz(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.mark.parametrize("suffix, build", [(".zip", _zip), (".tar.gz", _tar_gz)])
@pytest.mark.parametrize("prefix", ["", "demo/"])
def test_archive_with_skill_at_root_or_in_one_folder(tmp_path, suffix, build, prefix):
    pytest.importorskip("skillctl.format.archive")
    path = tmp_path / f"demo{suffix}"
    path.write_bytes(build({f"{prefix}SKILL.md": SKILL.encode(), f"{prefix}scripts/run.py": b"print(1)\n"}))
    report = load_skill(path)
    assert report.valid, report.to_json()
    assert report.root == prefix.rstrip("/")
    assert len(report.archive_sha256) == 64 and report.archive_size == path.stat().st_size
    assert {f.path for f in report.files} >= {"SKILL.md", "scripts/run.py"}


def test_archive_folder_name_is_checked_against_the_name(tmp_path):
    pytest.importorskip("skillctl.format.archive")
    path = tmp_path / "x.zip"
    path.write_bytes(_zip({"other/SKILL.md": SKILL.encode()}))
    report = load_skill(path)
    assert report.valid and "name.folder_mismatch" in {f.code for f in report.warnings}


def test_archive_findings_and_skill_findings_are_merged(tmp_path):
    pytest.importorskip("skillctl.format.archive")
    path = tmp_path / "x.zip"
    path.write_bytes(_zip({"SKILL.md": b"---\nname: Bad\ndescription: d\n---\n", "../evil": b"x"}))
    codes = error_codes(load_skill(path))
    assert "archive.path_traversal" in codes


def test_not_an_archive(tmp_path):
    pytest.importorskip("skillctl.format.archive")
    path = tmp_path / "junk.zip"
    path.write_bytes(b"this is not a zip")
    report = load_skill(path)
    assert not report.valid and error_codes(report) & {"archive.not_archive", "archive.truncated"}


def test_folder_with_a_symlink_is_a_finding_not_an_exception(tmp_path):
    skill = tmp_path / "linked"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: linked\ndescription: Has a link.\n---\nbody\n")
    (skill / "escape").symlink_to("/etc/passwd")
    report = load_skill(skill)
    assert not report.valid
    assert [f.code for f in report.errors] == ["archive.symlink"]


def test_load_archive_takes_bytes_and_file_objects_like_a_path(tmp_path):
    from skillctl.format import load_archive, pack_skill

    skill = tmp_path / "packed"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: packed\ndescription: Packed.\nversion: 1.0.0\n---\nbody\n")
    packed = pack_skill(skill, tmp_path / "packed.zip")
    data = packed.path.read_bytes()
    reports = [load_archive(packed.path), load_archive(data), load_archive(io.BytesIO(data))]
    assert {(r.valid, r.name, r.version, r.archive_sha256, r.archive_kind) for r in reports} == {
        (True, "packed", "1.0.0", packed.sha256, "zip")
    }
