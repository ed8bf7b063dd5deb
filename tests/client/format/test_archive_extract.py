"""extract_archive: inspect first, write only into a temporary folder, one rename, clean failure."""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path

import pytest

from skillctl.errors import SkillctlError  # noqa: E402
from skillctl.format import Limits  # noqa: E402
from skillctl.format import archive as archive_module  # noqa: E402
from skillctl.format.archive import ArchiveError, extract_archive, inspect_archive  # noqa: E402
from tests.client.format import archive_builders as ab  # noqa: E402

FORMATS = ["zip", "tar.gz"]


def skill(fmt: str, root: str = "") -> bytes:
    return ab.skill_zip(root=root) if fmt == "zip" else ab.skill_tar_gz(root=root)


def tree(folder: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every path under ``folder`` with its permission bits and, for files, its bytes."""
    out = {}
    for path in sorted(folder.rglob("*")):
        mode = stat.S_IMODE(path.lstat().st_mode)
        out[path.relative_to(folder).as_posix()] = (
            mode,
            path.read_bytes() if path.is_file() else None,
        )
    return out


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("root", ["", "demo/", "./"])
def test_extract_writes_the_skill_root_with_safe_modes(tmp_path, fmt, root):
    dest = tmp_path / "installed" / "demo"
    assert extract_archive(skill(fmt, root), dest) == dest
    assert tree(dest) == {
        "SKILL.md": (0o644, ab.SKILL_MD),
        "scripts": (0o755, None),
        "scripts/run.sh": (0o755, b"#!/bin/sh\necho hi\n"),
    }
    assert os.listdir(dest.parent) == ["demo"]  # no temporary folder left beside it


@pytest.mark.parametrize("source_kind", ["path", "bytes", "file"])
def test_extract_accepts_a_path_bytes_or_a_file(tmp_path, source_kind):
    data = skill("tar.gz")
    (tmp_path / "a.tgz").write_bytes(data)
    source = {"path": tmp_path / "a.tgz", "bytes": data, "file": io.BytesIO(data)}[source_kind]
    extract_archive(source, tmp_path / "out")
    assert (tmp_path / "out" / "SKILL.md").read_bytes() == ab.SKILL_MD


def test_setuid_and_odd_modes_are_not_kept(tmp_path):
    data = ab.skill_tar_gz(
        ab.TarMember("bin/suid", b"x", mode=0o4777),
        ab.TarMember("bin/private", b"y", mode=0o600),
        ab.TarMember("bin/group-exec", b"z", mode=0o2010),
    )
    extract_archive(data, tmp_path / "out")
    modes = {path: mode for path, (mode, _) in tree(tmp_path / "out").items()}
    assert modes["bin/suid"] == 0o755
    assert modes["bin/private"] == 0o644
    assert modes["bin/group-exec"] == 0o755


def test_empty_folders_in_the_archive_are_created(tmp_path):
    data = ab.skill_zip(ab.ZipMember("assets/", method=0, mode=stat.S_IFDIR | 0o700))
    extract_archive(data, tmp_path / "out")
    assert (tmp_path / "out" / "assets").is_dir()
    assert stat.S_IMODE((tmp_path / "out" / "assets").stat().st_mode) == 0o755


HOSTILE = {
    "traversal": lambda: ab.skill_zip(ab.ZipMember("../../evil", b"x")),
    "absolute": lambda: ab.skill_tar_gz(ab.TarMember("/tmp/evil", b"x")),
    "symlink": lambda: ab.skill_tar_gz(ab.TarMember("link", type=tarfile.SYMTYPE, linkname="/etc")),
    "collision": lambda: ab.skill_zip(ab.ZipMember("A.txt", b"x"), ab.ZipMember("a.txt", b"y")),
    "bomb": lambda: ab.zip_bomb(64),
    "truncated": lambda: ab.skill_tar_gz()[:-20],
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_refused_archive_writes_nothing(tmp_path, name):
    parent = tmp_path / "skills"
    parent.mkdir()
    with pytest.raises(ArchiveError) as refused:
        extract_archive(HOSTILE[name](), parent / "demo")
    assert refused.value.findings and all(f.code.startswith("archive.") for f in refused.value.findings)
    assert list(tmp_path.rglob("*")) == [parent]  # nothing written anywhere


def test_refusal_message_lists_the_codes():
    with pytest.raises(ArchiveError) as refused:
        extract_archive(HOSTILE["traversal"](), "/nonexistent/never/created")
    assert "archive.path_traversal" in str(refused.value)
    assert not Path("/nonexistent").exists()


def test_existing_destination_is_refused_and_untouched(tmp_path):
    dest = tmp_path / "demo"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine")
    with pytest.raises(SkillctlError):
        extract_archive(skill("zip"), dest)
    assert [p.name for p in tmp_path.iterdir()] == ["demo"]
    assert os.listdir(dest) == ["keep.txt"] and (dest / "keep.txt").read_text() == "mine"


def test_existing_empty_destination_and_dangling_symlink_are_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    for dest in ("empty", "link"):
        with pytest.raises(SkillctlError):
            extract_archive(skill("zip"), tmp_path / dest)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "link"]
    assert not (tmp_path / "nowhere").exists()


def _skip_inspection(monkeypatch, files=None):
    """Make inspection pass whatever it sees, to prove the writing pass checks on its own."""
    real = archive_module._inspect_bytes

    def lenient(data, limits, inspection, **options):
        real(data, limits, inspection, **options)
        inspection.findings.clear()
        if files is not None:
            inspection.files = files

    monkeypatch.setattr(archive_module, "_inspect_bytes", lenient)


@pytest.mark.parametrize("name", ["traversal", "absolute", "symlink", "collision"])
def test_writing_pass_refuses_on_its_own_and_cleans_up(tmp_path, monkeypatch, name):
    _skip_inspection(monkeypatch)
    parent = tmp_path / "skills"
    parent.mkdir()
    with pytest.raises(ArchiveError):
        extract_archive(HOSTILE[name](), parent / "demo")
    assert list(tmp_path.rglob("*")) == [parent]


def test_writing_pass_recounts_the_unpacked_limit(tmp_path, monkeypatch):
    data = ab.skill_zip(ab.ZipMember("big.bin", b"\0" * 10_000))
    inspection = inspect_archive(data)
    _skip_inspection(monkeypatch, files=inspection.files)
    with pytest.raises(ArchiveError) as refused:
        extract_archive(data, tmp_path / "demo", limits=Limits(max_unpacked_bytes=5_000))
    assert {f.code for f in refused.value.findings} == {"archive.unpacked_too_large"}
    assert list(tmp_path.iterdir()) == []


def test_failure_while_writing_removes_the_temporary_folder(tmp_path, monkeypatch):
    from skillctl.format import _extract

    calls = []
    real = _extract._write_file

    def failing(*args):
        calls.append(args)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(*args)

    monkeypatch.setattr(_extract, "_write_file", failing)
    with pytest.raises(OSError):
        extract_archive(skill("zip"), tmp_path / "demo")
    assert list(tmp_path.iterdir()) == []


def test_a_tool_archive_without_skill_md_extracts_whole_with_the_same_checks(tmp_path):
    """check --fix extracts downloaded tools with skill=False: no SKILL.md needed, no root
    folder stripped, and every path check still applies."""
    import io
    import tarfile

    def tar_gz(name: str) -> bytes:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            info = tarfile.TarInfo(name)
            info.size, info.mode = 3, 0o755
            tar.addfile(info, io.BytesIO(b"hi\n"))
        return buffer.getvalue()

    with pytest.raises(ArchiveError):
        extract_archive(tar_gz("tool-1.0/bin/tool"), tmp_path / "as-skill")
    out = extract_archive(tar_gz("tool-1.0/bin/tool"), tmp_path / "tool", skill=False)
    assert (out / "tool-1.0" / "bin" / "tool").read_bytes() == b"hi\n"
    with pytest.raises(ArchiveError) as refused:
        extract_archive(tar_gz("../tool"), tmp_path / "evil", skill=False)
    assert "archive.path_traversal" in {f.code for f in refused.value.findings}
