"""The start-up sweep (issue 34, item 10): ``.part`` archive writes and upload temp files a killed
process left are removed at once, whatever their age, and a file a live process is still
writing is never touched. Real processes, a real SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from registry.storage import sweep_partial_files
from tests.registry.conftest import Api, make_zip

ROOT = Path(__file__).resolve().parents[2]

# Both writers stop mid-file and print the file's path, then wait to be killed.
ARCHIVE_WRITER = """
import sys, time
from django.core.files.base import ContentFile
from registry.storage import FileSystemArchiveStorage

class Stalled(ContentFile):
    def chunks(self, chunk_size=None):
        yield b"first MiB"
        print("writing", flush=True)
        time.sleep(600)

FileSystemArchiveStorage(location=sys.argv[1]).save("archives/sha256/ab/cd/" + "ab" * 32 + ".zip", Stalled(b""))
"""
UPLOAD_WRITER = """
import time
from django.conf import settings
from django.core.files.uploadhandler import load_handler

handler = load_handler(settings.FILE_UPLOAD_HANDLERS[-1])  # the one big uploads spool through
handler.new_file("archive", "s.zip", "application/zip", 10)
handler.receive_data_chunk(b"first part", 0)
print(handler.file.temporary_file_path(), flush=True)
time.sleep(600)
"""


def start_writer(script: str, *args: str, data_dir: Path) -> tuple[subprocess.Popen, str]:
    """A Django process running ``script``; returns it and the first line it printed."""
    setup = "import django; django.setup()\n"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "skillyard.settings", "SKILLYARD_DATA_DIR": str(data_dir)}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "client"), str(ROOT)])
    process = subprocess.Popen(
        [sys.executable, "-c", setup + script, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    line = process.stdout.readline().strip()
    assert line, "the writer died before writing"
    return process, line


def kill(process: subprocess.Popen) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.wait(10)
    process.stdout.close()


def test_a_part_file_is_kept_while_its_writer_lives_and_removed_at_once_when_it_was_killed(settings, tmp_path):
    archives = Path(settings.STORAGES["archives"]["OPTIONS"]["location"])
    writer, _ = start_writer(ARCHIVE_WRITER, str(archives), data_dir=tmp_path / "writer")
    try:
        (part,) = archives.rglob("*.part")
        assert sweep_partial_files() == [] and part.exists()  # being written: not a leftover
    finally:
        kill(writer)
    assert sweep_partial_files() == [part] and not part.exists()  # seconds old, and gone


def test_an_upload_temp_file_is_kept_while_its_request_lives_and_removed_when_it_was_killed(settings, tmp_path):
    uploads = tmp_path / "writer" / "uploads"
    settings.FILE_UPLOAD_TEMP_DIR = str(uploads)
    writer, path = start_writer(UPLOAD_WRITER, data_dir=tmp_path / "writer")
    try:
        assert Path(path).parent == uploads
        assert sweep_partial_files() == [] and Path(path).exists()
    finally:
        kill(writer)
    assert sweep_partial_files() == [Path(path)] and not Path(path).exists()


def test_a_sweep_during_a_publish_leaves_its_upload_temp_file_alone(settings, tmp_path, alice, token_for, monkeypatch):
    """Uploads big enough to spool to disk go through the locking upload handler."""
    from registry.services import publish as publish_service

    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "uploads")
    (tmp_path / "uploads").mkdir()
    swept: list[list[Path]] = []
    spooled: list[Path] = []
    real_put = publish_service.archive_put

    def sweeping_put(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        spooled.extend((tmp_path / "uploads").iterdir())
        swept.append(sweep_partial_files())
        return real_put(*args, **kwargs)

    monkeypatch.setattr(publish_service, "archive_put", sweeping_put)
    data = make_zip("spooled", files={"references/data.txt": os.urandom(3 * 1024 * 1024).hex()})
    assert len(data) > settings.FILE_UPLOAD_MAX_MEMORY_SIZE
    assert Api(token_for(alice, "publish")).publish("spooled", data).status_code == 201
    assert len(spooled) == 1 and swept == [[]]  # on disk during the request, and left alone


@pytest.mark.parametrize("args", [[], ["--age", "0"]])
def test_the_sweep_command_removes_leftovers_whatever_their_age(settings, tmp_path, args, capsys):
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "uploads")
    (tmp_path / "uploads").mkdir()
    leftover = tmp_path / "uploads" / "tmpabc.upload.zip"
    leftover.write_bytes(b"a killed request's body")  # written a moment ago, by nobody alive
    call_command("sweep_uploads", *args)
    assert "removed 1" in capsys.readouterr().out and not leftover.exists()


def test_a_file_swept_between_its_creation_and_its_lock_is_replaced_by_a_new_one(tmp_path, monkeypatch):
    """The sweep may run in the instant after mkstemp and before the writer's lock: the writer
    then sees its file gone and takes a new one instead of writing to a removed file."""
    from registry import leftovers

    real_mkstemp = leftovers.tempfile.mkstemp
    swept: list[str] = []

    def mkstemp_then_sweep(**kwargs):  # noqa: ANN003, ANN202
        fd, path = real_mkstemp(**kwargs)
        if not swept and leftovers.remove_if_abandoned(Path(path)):
            swept.append(path)
        return fd, path

    monkeypatch.setattr(leftovers.tempfile, "mkstemp", mkstemp_then_sweep)
    fd, path = leftovers.locked_temp_file(folder=str(tmp_path), prefix="x.", suffix=".part")
    try:
        assert swept and path != swept[0] and Path(path).exists()
        assert not leftovers.remove_if_abandoned(Path(path))  # and it is locked
    finally:
        os.close(fd)
