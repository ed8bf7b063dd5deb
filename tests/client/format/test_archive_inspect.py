"""inspect_archive: every rejection and limit of DESIGN §4 has its own code and its own archive.

Each archive is built by the test (see archive_builders); tests assert codes, not wording.
"""

from __future__ import annotations

import io
import random
import stat
import tarfile
import time
import unicodedata

import pytest

from skillctl.format import CODES, Limits  # noqa: E402
from skillctl.format.archive import inspect_archive  # noqa: E402
from tests.client.format import archive_builders as ab  # noqa: E402

FORMATS = ["zip", "tar.gz"]


def build(fmt: str, *names: str, root: str = "", data: bytes = b"x\n") -> bytes:
    """A valid skill plus one extra file per name, in the given format."""
    if fmt == "zip":
        return ab.skill_zip(*(ab.ZipMember(n, data) for n in names), root=root)
    return ab.skill_tar_gz(*(ab.TarMember(n, data) for n in names), root=root)


def codes(source, **kwargs) -> set[str]:
    inspection = inspect_archive(source, **kwargs)
    assert all(f.code in CODES for f in inspection.findings)
    return {f.code for f in inspection.findings if f.is_error}


# --- accepted layouts --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("root", ["", "demo/", "./demo/", "./"])
def test_skill_md_at_root_or_in_one_top_folder_is_accepted(fmt, root):
    inspection = inspect_archive(build(fmt, root=root))
    assert inspection.ok, inspection.findings
    assert inspection.kind == fmt
    assert inspection.root == ("demo" if "demo" in root else "")
    assert [f.path for f in inspection.files] == ["SKILL.md", "scripts/run.sh"]
    assert inspection.skill_md == ab.SKILL_MD
    assert inspection.skill_json is None


@pytest.mark.parametrize("fmt", FORMATS)
def test_inspection_reports_sizes_and_digests(fmt):
    import hashlib

    data = build(fmt, "skill.json", data=b'{"version": "1.0.0"}')
    inspection = inspect_archive(data)
    assert inspection.sha256 == hashlib.sha256(data).hexdigest() and inspection.size == len(data)
    by_path = {f.path: f for f in inspection.files}
    assert by_path["SKILL.md"].sha256 == hashlib.sha256(ab.SKILL_MD).hexdigest()
    assert by_path["SKILL.md"].size == len(ab.SKILL_MD)
    assert inspection.skill_json == b'{"version": "1.0.0"}'


def test_zip_with_directory_entries_including_the_root_is_accepted():
    members = [
        ab.ZipMember("demo/", method=0, mode=stat.S_IFDIR | 0o755),
        ab.ZipMember("demo/SKILL.md", ab.SKILL_MD),
        ab.ZipMember("demo/scripts/", method=0, mode=None),
        ab.ZipMember("demo/scripts/run.sh", b"echo\n"),
    ]
    inspection = inspect_archive(ab.zip_bytes(members))
    assert inspection.ok, inspection.findings
    assert inspection.root == "demo"
    assert [f.path for f in inspection.files] == ["SKILL.md", "scripts/run.sh"]


def test_tar_with_directory_entries_and_dot_root_is_accepted():
    members = [
        ab.TarMember("./", type=tarfile.DIRTYPE, mode=0o755),
        ab.TarMember("./SKILL.md", ab.SKILL_MD),
        ab.TarMember("./scripts", type=tarfile.DIRTYPE, mode=0o755),
        ab.TarMember("./scripts/run.sh", b"echo\n"),
    ]
    inspection = inspect_archive(ab.tar_gz_bytes(members))
    assert inspection.ok, inspection.findings
    assert inspection.root == ""


@pytest.mark.parametrize("fmt", FORMATS)
def test_nested_skill_md_below_a_root_skill_md_is_an_ordinary_file(fmt):
    inspection = inspect_archive(build(fmt, "examples/SKILL.md"))
    assert inspection.ok, inspection.findings
    assert "examples/SKILL.md" in [f.path for f in inspection.files]


@pytest.mark.parametrize("fmt", FORMATS)
def test_sixteen_levels_deep_is_accepted(fmt):
    assert inspect_archive(build(fmt, "/".join(["d"] * 15) + "/f")).ok


@pytest.mark.parametrize("source_kind", ["path", "bytes", "file"])
def test_sources_can_be_a_path_bytes_or_a_binary_file(tmp_path, source_kind):
    data = build("zip")
    (tmp_path / "skill.bin").write_bytes(data)  # the kind is told by content, not by name
    source = {"path": tmp_path / "skill.bin", "bytes": data, "file": io.BytesIO(data)}[source_kind]
    assert inspect_archive(source).ok


# --- paths -------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["../evil", "scripts/../../evil", "a/.."])
def test_path_traversal_is_refused(fmt, name):
    assert "archive.path_traversal" in codes(build(fmt, name))


@pytest.mark.parametrize("fmt", FORMATS)
def test_absolute_path_is_refused(fmt):
    assert "archive.path_absolute" in codes(build(fmt, "/etc/cron.d/evil"))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["scripts\\evil", "..\\..\\evil"])
def test_backslash_is_refused(fmt, name):
    assert "archive.path_backslash" in codes(build(fmt, name))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["C:/Windows/evil", "c:evil"])
def test_drive_letter_is_refused(fmt, name):
    assert "archive.path_drive" in codes(build(fmt, name))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["bad\x1bname", "new\nline", "del\x7f", "c1\x85"])
def test_control_character_is_refused(fmt, name):
    assert "archive.path_control_char" in codes(build(fmt, name))


def test_nul_in_a_zip_name_is_refused():
    assert "archive.path_control_char" in codes(build("zip", "SKILL.md\0.exe"))


def test_undecodable_tar_name_is_refused():
    assert codes(build("tar.gz", "bad\udcffname")) == {"archive.path_encoding"}


def test_empty_zip_name_is_refused():
    assert "archive.path_empty" in codes(build("zip", ""))


@pytest.mark.parametrize("fmt", FORMATS)
def test_too_deep_is_refused(fmt):
    assert codes(build(fmt, "/".join(["d"] * 16) + "/f")) == {"archive.path_too_deep"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_too_long_is_refused(fmt):
    name = "a" * 120 + "/" + "b" * 135  # 256 bytes, within the depth limit
    assert codes(build(fmt, name)) == {"archive.path_too_long"}
    assert inspect_archive(build(fmt, name[:-1])).ok


# --- entry kinds ---------------------------------------------------------------------------------


def test_zip_symlink_is_refused():
    link = ab.ZipMember("scripts/link", b"/etc/passwd", method=0, mode=stat.S_IFLNK | 0o777)
    assert codes(ab.skill_zip(link)) == {"archive.symlink"}


def test_tar_symlink_is_refused():
    link = ab.TarMember("scripts/link", type=tarfile.SYMTYPE, linkname="/etc/passwd")
    assert codes(ab.skill_tar_gz(link)) == {"archive.symlink"}


def test_tar_hardlink_is_refused():
    link = ab.TarMember("scripts/link", type=tarfile.LNKTYPE, linkname="SKILL.md")
    assert codes(ab.skill_tar_gz(link)) == {"archive.hardlink"}


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE])
def test_tar_devices_and_fifos_are_refused(kind):
    assert codes(ab.skill_tar_gz(ab.TarMember("dev", type=kind))) == {"archive.special_file"}


@pytest.mark.parametrize("mode", [stat.S_IFIFO, stat.S_IFCHR, stat.S_IFBLK, stat.S_IFSOCK])
def test_zip_devices_and_fifos_are_refused(mode):
    assert codes(ab.skill_zip(ab.ZipMember("dev", mode=mode | 0o644))) == {"archive.special_file"}


# --- duplicates and collisions -----------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("names", [("a.txt", "a.txt"), ("a/b.txt", "./a/b.txt"), ("x", "x/y")])
def test_duplicate_entries_are_refused(fmt, names):
    assert codes(build(fmt, *names)) == {"archive.duplicate_entry"}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    "names",
    [
        ("Foo.txt", "foo.txt"),
        ("Scripts/x", "scripts/y"),
        (
            unicodedata.normalize("NFC", "caf\u00e9.md"),
            unicodedata.normalize("NFD", "caf\u00e9.md"),
        ),
        ("STRASSE.md", "stra\u00dfe.md"),
    ],
)
def test_names_colliding_by_case_or_normalisation_are_refused(fmt, names):
    assert codes(build(fmt, *names)) == {"archive.name_collision"}


# --- where the skill is --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_two_top_level_skills_are_refused(fmt):
    data = build(fmt, "other/SKILL.md", root="demo/")
    assert codes(data) == {"archive.multiple_roots"}


def test_a_finder_zip_is_refused_with_a_way_out():
    data = ab.skill_zip(ab.ZipMember("__MACOSX/demo/._SKILL.md", b"\x00"), root="demo/")
    findings = [f for f in inspect_archive(data).findings if f.is_error]
    assert [f.code for f in findings] == ["archive.multiple_roots"]
    assert "__MACOSX" in findings[0].message and "skillctl pack" in findings[0].message


@pytest.mark.parametrize("fmt", FORMATS)
def test_files_beside_the_single_skill_folder_are_refused(fmt):
    if fmt == "zip":
        data = ab.skill_zip(ab.ZipMember("README.md", b"hi"), root="demo/")
    else:
        data = ab.skill_tar_gz(ab.TarMember("README.md", b"hi"), root="demo/")
    assert codes(data) == {"archive.multiple_roots"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_skill_md_is_refused(fmt):
    if fmt == "zip":
        data = ab.zip_bytes([ab.ZipMember("demo/README.md", b"hi")])
    else:
        data = ab.tar_gz_bytes([ab.TarMember("demo/README.md", b"hi")])
    assert codes(data) == {"archive.no_skill_md"}


def test_skill_md_in_a_second_level_folder_only_is_refused():
    data = ab.zip_bytes([ab.ZipMember("a/b/SKILL.md", ab.SKILL_MD)])
    assert codes(data) == {"archive.no_skill_md"}


# --- zip structure -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "member",
    [
        ab.ZipMember("secret.txt", b"x", flags=0x1),
        ab.ZipMember("aes.txt", b"x", method=99, flags=0x1),
    ],
)
def test_encrypted_zip_entry_is_refused(member):
    assert codes(ab.skill_zip(member)) == {"archive.encrypted"}


@pytest.mark.parametrize("method", [12, 14, 9, 93])  # bzip2, lzma, deflate64, zstd
def test_compression_other_than_stored_or_deflate_is_refused(method):
    assert codes(ab.skill_zip(ab.ZipMember("x.txt", compressed=b"\0" * 8, method=method))) == {
        "archive.compression_method"
    }


@pytest.mark.parametrize("shift_offsets", [False, True])
def test_data_before_the_zip_is_refused(shift_offsets):
    stub = b"\x7fELF" + b"\0" * 200  # a self-extracting stub
    assert codes(ab.skill_zip(prefix=stub, shift_offsets=shift_offsets)) == {"archive.leading_data"}


def test_png_with_a_zip_appended_is_refused():
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 64
    assert codes(ab.skill_zip(prefix=png, shift_offsets=True)) == {"archive.leading_data"}


def test_data_after_the_zip_is_refused():
    assert codes(ab.skill_zip(suffix=b"hidden payload")) == {"archive.leading_data"}


def test_data_between_zip_members_is_refused():
    assert codes(ab.skill_zip(between=b"hidden payload")) == {"archive.leading_data"}


def test_zip_comment_is_accepted():
    assert inspect_archive(ab.skill_zip(comment=b"made by hand")).ok


def test_overlapping_zip_members_are_refused():
    data = ab.skill_zip(ab.ZipMember("again.md", ab.SKILL_MD, offset=0))  # points at SKILL.md's bytes
    assert codes(data) & {"archive.leading_data", "archive.header_mismatch"}


def test_local_header_naming_another_file_is_refused():
    sneaky = ab.ZipMember("notes.txt", b"x", local_name="../../etc/evil")
    assert codes(ab.skill_zip(sneaky)) == {"archive.header_mismatch"}


def test_local_header_with_other_sizes_is_refused():
    data = bytearray(ab.skill_zip())
    # The first local header's uncompressed size field (offset 22) no longer matches the directory.
    data[22:26] = (12345).to_bytes(4, "little")
    assert codes(bytes(data)) == {"archive.header_mismatch"}


@pytest.mark.parametrize("cut", [1, 30, 0.5, 0.9])
def test_truncated_zip_is_refused(cut):
    data = ab.skill_zip()
    end = len(data) - cut if isinstance(cut, int) else int(len(data) * cut)
    assert codes(data[:end]) == {"archive.truncated"}


def test_zip_with_corrupt_member_data_is_refused():
    member = ab.ZipMember("x.txt", b"hello world" * 10)
    data = ab.skill_zip(ab.ZipMember("x.txt", member.data, crc=0xDEADBEEF))
    assert codes(data) == {"archive.truncated"}


def test_empty_zip_is_refused():
    assert codes(ab.zip_bytes([])) == {"archive.empty"}


# --- tar.gz structure ----------------------------------------------------------------------------


@pytest.mark.parametrize("cut", [1, 10, 0.5])
def test_truncated_tar_gz_is_refused(cut):
    data = ab.skill_tar_gz()
    end = len(data) - cut if isinstance(cut, int) else int(len(data) * cut)
    assert codes(data[:end]) == {"archive.truncated"}


def test_tar_member_cut_short_inside_a_whole_gzip_is_refused():
    tar = ab.tar_bytes([ab.TarMember("SKILL.md", ab.SKILL_MD)], end=False)
    assert codes(ab.gzip_bytes(tar[:-300])) == {"archive.truncated"}


@pytest.mark.parametrize("payload", [b"", b"\0" * 10240])
def test_empty_tar_gz_is_refused(payload):
    assert codes(ab.gzip_bytes(payload)) == {"archive.empty"}


def test_gzip_of_something_else_is_not_an_archive():
    assert codes(ab.gzip_bytes(b"just some text, not a tar\n" * 40)) == {"archive.not_archive"}


def test_data_after_the_gzip_stream_is_refused():
    assert codes(ab.skill_tar_gz() + b"hidden payload") == {"archive.leading_data"}


def test_data_after_the_end_of_the_tar_is_refused():
    tar = ab.tar_bytes([ab.TarMember("SKILL.md", ab.SKILL_MD)]) + b"hidden payload".ljust(512, b"\0")
    assert codes(ab.gzip_bytes(tar)) == {"archive.leading_data"}


def test_garbage_header_after_members_is_refused():
    tar = ab.tar_bytes([ab.TarMember("SKILL.md", ab.SKILL_MD)], end=False) + b"\xff" * 512 + b"\0" * 1024
    assert codes(ab.gzip_bytes(tar)) == {"archive.leading_data"}


def test_concatenated_gzip_members_are_accepted():
    tar = ab.tar_bytes([ab.TarMember("SKILL.md", ab.SKILL_MD)])
    assert inspect_archive(ab.gzip_bytes(tar[:512]) + ab.gzip_bytes(tar[512:])).ok


def test_uncompressed_tar_is_not_an_archive():
    assert codes(ab.tar_bytes([ab.TarMember("SKILL.md", ab.SKILL_MD)])) == {"archive.not_archive"}


# --- not an archive at all -----------------------------------------------------------------------


def test_empty_file_is_refused(tmp_path):
    (tmp_path / "empty.zip").write_bytes(b"")
    assert codes(tmp_path / "empty.zip") == {"archive.empty"}


@pytest.mark.parametrize(
    "data",
    [
        random.Random(7).randbytes(4096),
        b"\x89PNG\r\n\x1a\n" + random.Random(8).randbytes(512),
        b"%PDF-1.7\n" + b"x" * 100,
        b"PK\x03\x04",  # a zip signature and nothing else
    ],
)
def test_not_an_archive_is_refused(data):
    assert codes(data) & {"archive.not_archive", "archive.truncated"}
    if not data.startswith(b"PK"):
        assert codes(data) == {"archive.not_archive"}


def test_missing_path_is_a_finding_not_an_exception(tmp_path):
    assert codes(tmp_path / "nope.zip") == {"skill.not_found"}


def test_a_folder_as_source_is_a_finding_not_an_exception(tmp_path):
    assert codes(tmp_path) == {"skill.unreadable"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_random_damage_never_raises(fmt):
    data = build(fmt, "references/guide.md", data=b"lorem ipsum " * 200)
    rng = random.Random(fmt)
    for _ in range(300):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        if rng.random() < 0.3:
            damaged = damaged[: rng.randrange(len(damaged))]
        inspection = inspect_archive(bytes(damaged))  # must not raise
        assert inspection.ok or inspection.findings


# --- limits --------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_too_many_entries_is_refused(fmt):
    data = build(fmt, *(f"references/{i}.md" for i in range(10)))
    assert codes(data, limits=Limits(max_entries=5)) == {"archive.too_many_entries"}
    assert inspect_archive(data, limits=Limits(max_entries=12)).ok


def test_a_thousand_and_one_entries_are_refused_by_default():
    data = build("zip", *(f"r/{i}" for i in range(999)))  # 2 + 999 files
    assert codes(data) == {"archive.too_many_entries"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_too_large_in_total_when_unpacked_is_refused(fmt):
    data = build(fmt, "a.bin", "b.bin", data=random.Random(1).randbytes(3000))
    assert codes(data, limits=Limits(max_unpacked_bytes=5000)) == {"archive.unpacked_too_large"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_archive_file_over_the_limit_is_refused(fmt, tmp_path):
    data = build(fmt, "a.bin", data=random.Random(2).randbytes(5000))
    path = tmp_path / f"big.{fmt}"
    path.write_bytes(data)
    for source in (data, path, io.BytesIO(data)):
        assert codes(source, limits=Limits(max_archive_bytes=4000)) == {"archive.too_large"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_skill_md_over_one_mib_is_refused(fmt):
    text = random.Random(3).randbytes(800 * 1024).hex().encode()  # 1.6 MiB, barely compressible
    big = ab.SKILL_MD + text
    if fmt == "zip":
        data = ab.zip_bytes([ab.ZipMember("SKILL.md", big)])
    else:
        data = ab.tar_gz_bytes([ab.TarMember("SKILL.md", big)])
    inspection = inspect_archive(data)
    assert {f.code for f in inspection.findings} == {"archive.skill_md_too_large"}
    assert inspection.skill_md is None


def test_skill_md_not_utf8_is_refused_by_validation(tmp_path):
    pytest.importorskip("skillctl.format.load")
    from skillctl.format.load import load_skill

    path = tmp_path / "skill.zip"
    path.write_bytes(ab.zip_bytes([ab.ZipMember("SKILL.md", ab.SKILL_MD.replace(b"Demo", b"D\xffmo"))]))
    assert inspect_archive(path).ok  # the archive itself is fine; its SKILL.md is not
    assert "skill.not_utf8" in {f.code for f in load_skill(path).errors}


# --- bombs: refused fast, without inflating ------------------------------------------------------


def refused_fast(data: bytes, expected: str) -> None:
    start = time.perf_counter()
    found = codes(data)
    elapsed = time.perf_counter() - start
    assert expected in found, found
    assert elapsed < 2.0, f"took {elapsed:.2f}s"


def test_zip_bomb_is_refused_by_its_compression_ratio():
    refused_fast(ab.zip_bomb(1024), "archive.compression_ratio")


def test_zip_bomb_declaring_a_small_size_is_refused_without_inflating():
    # The directory claims 40 MiB (under the limit, ratio 40): reading stops at the claim.
    refused_fast(ab.zip_bomb(1024, declared=40 * ab.MiB), "archive.truncated")


def test_tar_gz_bomb_is_refused_on_its_declared_size():
    refused_fast(ab.tar_gz_bomb(1024), "archive.unpacked_too_large")


def test_gzip_bomb_after_a_valid_tar_is_refused_while_streaming():
    refused_fast(ab.gzip_zero_bomb(1024), "archive.unpacked_too_large")


# --- archives real tools make --------------------------------------------------------------------


class _Unseekable(io.RawIOBase):
    """A write-only pipe: zipfile then writes data descriptors after each member."""

    def __init__(self) -> None:
        self.buffer = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.buffer += data
        return len(data)


def test_streamed_zip_with_data_descriptors_is_accepted():
    import zipfile

    pipe = _Unseekable()
    with zipfile.ZipFile(pipe, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("demo/SKILL.md", ab.SKILL_MD)
        zf.writestr("demo/scripts/run.sh", b"echo\n" * 100)
    data = bytes(pipe.buffer)
    assert data[6] & 0x08  # the first member really uses a data descriptor
    inspection = inspect_archive(data)
    assert inspection.ok, inspection.findings
    assert inspection.root == "demo"


@pytest.mark.parametrize("tool", ["zip", "tar"])
def test_archives_from_the_system_tools_are_accepted(tmp_path, tool):
    import shutil
    import subprocess

    if not shutil.which(tool):
        pytest.skip(f"{tool} is not installed")
    folder = tmp_path / "demo"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(ab.SKILL_MD)
    (folder / "scripts" / "run.sh").write_text("echo\n")
    out = tmp_path / ("demo.zip" if tool == "zip" else "demo.tar.gz")
    command = ["zip", "-qr", str(out), "demo"] if tool == "zip" else ["tar", "czf", str(out), "demo"]
    subprocess.run(command, cwd=tmp_path, check=True)
    inspection = inspect_archive(out)
    assert inspection.ok, inspection.findings
    assert inspection.root == "demo"
    assert [f.path for f in inspection.files] == ["SKILL.md", "scripts/run.sh"]
