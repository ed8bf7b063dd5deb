"""pack_skill and folder_files: reproducible archives of exactly the files that count."""

from __future__ import annotations

import gzip
import hashlib
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from skillctl.errors import SkillctlError  # noqa: E402
from skillctl.format.archive import (  # noqa: E402
    ArchiveError,
    InvalidSkillError,
    extract_archive,
    folder_files,
    inspect_archive,
    pack_skill,
)
from tests.client.format import archive_builders as ab  # noqa: E402

SUFFIXES = [".zip", ".tar.gz"]


@pytest.fixture
def skill_dir(tmp_path) -> Path:
    folder = tmp_path / "demo"
    (folder / "scripts").mkdir(parents=True)
    (folder / "references").mkdir()
    (folder / "SKILL.md").write_bytes(ab.SKILL_MD)
    (folder / "scripts" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (folder / "scripts" / "run.sh").chmod(0o700)
    (folder / "references" / "guide.md").write_text("# Guide\n" * 50)
    (folder / "references" / "caf\u00e9.md").write_text("accents\n")
    return folder


def test_pack_lists_files_at_the_archive_root_sorted(skill_dir, tmp_path):
    result = pack_skill(skill_dir, tmp_path / "demo.zip")
    paths = ["SKILL.md", "references/caf\u00e9.md", "references/guide.md", "scripts/run.sh"]
    assert [f.path for f in result.files] == paths
    with zipfile.ZipFile(result.path) as zf:
        assert zf.namelist() == paths
    assert result.sha256 == hashlib.sha256(result.path.read_bytes()).hexdigest()
    assert result.size == result.path.stat().st_size


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_same_folder_gives_the_same_bytes_after_mtimes_and_owners_change(skill_dir, tmp_path, suffix):
    first = pack_skill(skill_dir, tmp_path / f"one{suffix}")
    for path in [skill_dir, *skill_dir.rglob("*")]:
        os.utime(path, (1_000_000_000, 1_234_567_890))
        if os.geteuid() == 0:
            os.chown(path, 4242, 4343)
    (skill_dir / "references" / "guide.md").chmod(0o600)  # permission bits beyond exec do not count
    second = pack_skill(skill_dir, tmp_path / f"two{suffix}")
    assert first.sha256 == second.sha256
    assert (tmp_path / f"one{suffix}").read_bytes() == (tmp_path / f"two{suffix}").read_bytes()


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_changing_content_or_exec_bit_changes_the_digest(skill_dir, tmp_path, suffix):
    first = pack_skill(skill_dir, tmp_path / f"a{suffix}").sha256
    (skill_dir / "references" / "guide.md").chmod(0o755)
    assert pack_skill(skill_dir, tmp_path / f"b{suffix}").sha256 != first


def test_zip_entries_have_fixed_times_and_modes(skill_dir, tmp_path):
    with zipfile.ZipFile(pack_skill(skill_dir, tmp_path / "demo.zip").path) as zf:
        for info in zf.infolist():
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            assert info.compress_type == zipfile.ZIP_DEFLATED
            expected = 0o755 if info.filename == "scripts/run.sh" else 0o644
            assert (info.external_attr >> 16) & 0o7777 == expected
            assert info.extra == b"" and info.comment == b""


def test_tar_gz_entries_have_fixed_times_modes_and_owners(skill_dir, tmp_path):
    path = pack_skill(skill_dir, tmp_path / "demo.tar.gz").path
    header = path.read_bytes()[:10]
    assert header[:3] == b"\x1f\x8b\x08"
    assert header[3] == 0  # no FNAME (file name) or other optional fields
    assert header[4:8] == b"\0\0\0\0"  # gzip mtime 0
    with tarfile.open(path, "r:gz") as tar:
        for info in tar.getmembers():
            assert info.isreg()
            assert (info.mtime, info.uid, info.gid, info.uname, info.gname) == (
                315532800,
                0,
                0,
                "",
                "",
            )
            assert info.mode == (0o755 if info.name == "scripts/run.sh" else 0o644)
    assert gzip.decompress(path.read_bytes())  # a whole, valid gzip stream


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_packed_archive_inspects_clean_and_extracts_to_the_same_files(skill_dir, tmp_path, suffix):
    result = pack_skill(skill_dir, tmp_path / f"demo{suffix}")
    inspection = inspect_archive(result.path)
    assert inspection.ok and inspection.root == ""
    assert inspection.files == result.files == folder_files(skill_dir)
    extract_archive(result.path, tmp_path / "installed")
    assert folder_files(tmp_path / "installed") == result.files


def test_ignored_files_are_left_out_and_folder_files_agrees(skill_dir, tmp_path):
    for junk in [".git/config", "__pycache__/x.cpython-311.pyc", "scripts/old.pyc", ".DS_Store",
                 "node_modules/left-pad/index.js", "references/.DS_Store", "build/out.bin",
                 "notes/draft.md", "secret.env", "references/keep.env"]:  # fmt: skip
        (skill_dir / junk).parent.mkdir(parents=True, exist_ok=True)
        (skill_dir / junk).write_text("junk")
    (skill_dir / ".skillignore").write_text("# local things\nbuild/\n/notes\n*.env\n")
    result = pack_skill(skill_dir, tmp_path / "demo.zip")
    paths = [f.path for f in result.files]
    assert paths == [
        ".skillignore",
        "SKILL.md",
        "references/caf\u00e9.md",
        "references/guide.md",
        "scripts/run.sh",
    ]
    assert [f.path for f in folder_files(skill_dir)] == paths


def test_folder_files_digests_match_the_bytes(skill_dir):
    for entry in folder_files(skill_dir):
        data = (skill_dir / entry.path).read_bytes()
        assert (entry.size, entry.sha256) == (len(data), hashlib.sha256(data).hexdigest())


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_symlink_in_the_folder_is_refused(skill_dir, tmp_path, suffix):
    (skill_dir / "references" / "link.md").symlink_to(skill_dir / "SKILL.md")
    with pytest.raises(InvalidSkillError) as refused:
        pack_skill(skill_dir, tmp_path / f"demo{suffix}")
    assert [f.code for f in refused.value.report.errors] == ["archive.symlink"]
    with pytest.raises(ArchiveError):
        folder_files(skill_dir)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"]


def test_fifo_in_the_folder_is_refused(skill_dir, tmp_path):
    os.mkfifo(skill_dir / "scripts" / "pipe")
    with pytest.raises(InvalidSkillError) as refused:
        pack_skill(skill_dir, tmp_path / "demo.tar.gz")
    assert [f.code for f in refused.value.report.errors] == ["archive.special_file"]
    with pytest.raises(ArchiveError):
        folder_files(skill_dir)


def test_invalid_skill_is_refused_with_its_report(skill_dir, tmp_path):
    (skill_dir / "SKILL.md").write_text("---\nname: Not Valid!\n---\nbody\n")
    with pytest.raises(InvalidSkillError) as refused:
        pack_skill(skill_dir, tmp_path / "demo.zip")
    report = refused.value.report
    assert not report.valid
    assert isinstance(refused.value, SkillctlError)
    assert all(f.code in str(refused.value) for f in report.errors)
    assert not (tmp_path / "demo.zip").exists()


def test_unknown_suffix_is_a_usage_error(skill_dir, tmp_path):
    with pytest.raises(SkillctlError):
        pack_skill(skill_dir, tmp_path / "demo.rar")


def test_pack_that_fails_its_own_check_leaves_no_file(skill_dir, tmp_path):
    (skill_dir / "references" / "CAF\u00c9.md").write_text("collides with caf\u00e9.md on macOS and Windows")
    with pytest.raises(ArchiveError) as refused:
        pack_skill(skill_dir, tmp_path / "demo.zip")
    assert {f.code for f in refused.value.findings} == {"archive.name_collision"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"]


def test_pack_replaces_an_existing_archive_atomically(skill_dir, tmp_path):
    out = tmp_path / "demo.zip"
    out.write_bytes(b"old")
    result = pack_skill(skill_dir, out)
    assert out.read_bytes() != b"old" and inspect_archive(out).sha256 == result.sha256
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo", "demo.zip"]
