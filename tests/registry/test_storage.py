"""Archive storage: content-addressed, never overwritten, on files and on a real S3 server
(moto's standalone server on loopback, started here) — acceptance 5."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
import uuid
from pathlib import Path

import boto3
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import storages

from registry.storage import ArchiveExists, archive_key
from tests.conftest import free_port, require_service, tcp_open
from tests.registry.conftest import Api, make_zip, stored_archives

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="session")
def s3_endpoint():
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not tcp_open("127.0.0.1", port) and time.monotonic() < deadline and server.poll() is None:
        time.sleep(0.1)
    require_service("moto S3 server", tcp_open("127.0.0.1", port))
    yield f"http://127.0.0.1:{port}"
    server.terminate()
    server.wait(10)


@pytest.fixture
def s3_archives(settings, s3_endpoint):
    bucket = f"skillyard-{uuid.uuid4().hex[:12]}"
    credentials = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
    client = boto3.client("s3", endpoint_url=s3_endpoint, **credentials)
    client.create_bucket(Bucket=bucket)
    settings.STORAGES = {
        **settings.STORAGES,
        "archives": {
            "BACKEND": "registry.storage.S3ArchiveStorage",
            "OPTIONS": {
                "bucket_name": bucket,
                "endpoint_url": s3_endpoint,
                "access_key": "testing",
                "secret_key": "testing",
                "region_name": "us-east-1",
                "addressing_style": "path",
                "file_overwrite": False,
                "default_acl": None,
            },
        },
    }
    return client, bucket


def bucket_keys(client, bucket) -> list[str]:
    return [o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", [])]


def test_publish_and_download_through_s3(s3_archives, alice, token_for):
    client, bucket = s3_archives
    api = Api(token_for(alice, "publish"))
    data = make_zip("cloud-skill", files={"scripts/x.py": "print(1)\n"})
    assert api.publish("cloud-skill", data).status_code == 201
    sha = hashlib.sha256(data).hexdigest()
    assert bucket_keys(client, bucket) == [archive_key(sha, "zip")]
    response = api.get("/api/v1/skills/cloud-skill/download")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == data
    assert response["X-Checksum-Sha256"] == sha


def test_rejected_publish_writes_nothing_to_s3(s3_archives, alice, token_for):
    client, bucket = s3_archives
    api = Api(token_for(alice, "publish"))
    assert api.publish("cloud-skill", make_zip("cloud-skill")).status_code == 201
    assert api.publish("cloud-skill", make_zip("cloud-skill", body="# other\n")).status_code == 409
    assert api.publish("wrong", make_zip("cloud-skill")).status_code == 422
    assert len(bucket_keys(client, bucket)) == 1


@pytest.mark.parametrize("backend", ["fs", "s3"])
def test_storage_refuses_to_overwrite(backend, request):
    if backend == "s3":
        request.getfixturevalue("s3_archives")
    storage = storages["archives"]
    key = archive_key("ab" * 32, "zip")
    storage.save(key, ContentFile(b"first"))
    with pytest.raises(ArchiveExists):
        storage.save(key, ContentFile(b"second"))
    with storage.open(key, "rb") as handle:
        assert handle.read() == b"first"


@pytest.mark.parametrize("backend", ["fs", "s3"])
def test_a_wrong_object_at_the_key_is_replaced_before_a_version_uses_it(backend, request, alice, token_for):
    # What a crash before atomic writes left: a truncated file at the content address. The retry
    # of the same bytes must not reuse it (it once served 20.7 MB that matched nothing).
    if backend == "s3":
        request.getfixturevalue("s3_archives")
    data = make_zip("mended", files={"assets/data.txt": "x" * 50_000})
    key = archive_key(hashlib.sha256(data).hexdigest(), "zip")
    storages["archives"].save(key, ContentFile(data[: len(data) // 2]))
    api = Api(token_for(alice, "publish"))
    assert api.publish("mended", data).status_code == 201
    served = b"".join(api.get("/api/v1/skills/mended/download").streaming_content)
    assert served == data


def test_storage_that_keeps_wrong_bytes_fails_the_publish_and_commits_nothing(monkeypatch, alice, token_for):
    from registry import storage as archive_storage
    from registry.models import SkillVersion

    monkeypatch.setattr(archive_storage, "archive_matches", lambda key, **_: False)
    response = Api(token_for(alice, "publish")).publish("never", make_zip("never"))
    assert response.status_code == 503 and response.json()["code"] == "storage.mismatch"
    assert not SkillVersion.objects.filter(skill__name="never").exists()


def test_a_failed_write_leaves_no_part_file_and_nothing_at_the_key(tmp_path):
    from registry.storage import FileSystemArchiveStorage

    storage = FileSystemArchiveStorage(location=str(tmp_path))

    class Exploding(ContentFile):
        def chunks(self, chunk_size=None):
            yield b"first MiB"
            raise OSError("disk gone")

    key = archive_key("cd" * 32, "zip")
    with pytest.raises(OSError):
        storage.save(key, Exploding(b"ignored"))
    assert not storage.exists(key) and not list(tmp_path.rglob("*.part"))


def big_zip(name: str, *, valid: bool = True) -> bytes:
    """An archive over FILE_UPLOAD_MAX_MEMORY_SIZE (random, so it stays big): Django spools it
    to a temp file in FILE_UPLOAD_TEMP_DIR. ``valid=False`` breaks SKILL.md (a 422 publish)."""
    import base64
    import os

    payload = base64.b64encode(os.urandom(3 * 1024 * 1024)).decode()
    text = None if valid else "---\nname: [not, a, name]\n---\n"
    return make_zip(name, files={"references/data.txt": payload}, text=text)


@pytest.mark.parametrize("valid, status", [(True, 201), (False, 422)])
def test_a_publish_leaves_no_upload_temp_file_and_no_part_file(valid, status, settings, tmp_path, alice, token_for):
    from django.core.files import uploadedfile

    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "uploads")
    (tmp_path / "uploads").mkdir()
    spooled: list[str] = []
    real_init = uploadedfile.TemporaryUploadedFile.__init__

    def recording_init(self, *args, **kwargs):  # noqa: ANN001
        real_init(self, *args, **kwargs)
        spooled.append(self.temporary_file_path())

    data = big_zip("spooled", valid=valid)
    assert len(data) > settings.FILE_UPLOAD_MAX_MEMORY_SIZE
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(uploadedfile.TemporaryUploadedFile, "__init__", recording_init)
        response = Api(token_for(alice, "publish")).publish("spooled", data)
    assert response.status_code == status, response.content[:300]
    assert [Path(p).parent for p in spooled] == [tmp_path / "uploads"]  # the body did go to disk...
    assert list((tmp_path / "uploads").iterdir()) == []  # ...and is gone
    assert not list((tmp_path / "archives").rglob("*.part"))
    assert len(stored_archives()) == (1 if valid else 0)
