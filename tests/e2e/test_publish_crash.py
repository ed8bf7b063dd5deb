"""A registry process killed (kill -9) while it writes an archive leaves no broken version:
the retry of the same bytes stores them whole, and every download hashes to its digest.
A real server process and a real SIGKILL (issue: 20.7 MB served that matched nothing)."""

from __future__ import annotations

import hashlib
import io
import os
import random
import signal
import threading
import time
import zipfile

import httpx
import pytest

from tests.e2e.conftest import _manage, start_registry

pytestmark = pytest.mark.e2e


def big_skill_zip(name: str, mib: int = 4) -> bytes:
    """A valid skill whose archive is ~``mib`` MiB (incompressible asset)."""
    buffer = io.BytesIO()
    noise = random.Random(7).randbytes(mib * 1024 * 1024)
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(
            f"{name}/SKILL.md", f"---\nname: {name}\ndescription: A large skill.\nversion: 1.0.0\n---\n# {name}\n"
        )
        archive.writestr(f"{name}/assets/blob.bin", noise)
    return buffer.getvalue()


def publish(url: str, token: str, name: str, data: bytes) -> httpx.Response:
    return httpx.post(
        f"{url}/api/v1/skills/{name}/versions",
        headers={"Authorization": f"Bearer {token}"},
        files={"archive": ("s.zip", data, "application/zip")},
        timeout=120,
    )


def wait_for(predicate, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_kill_during_archive_write_then_retry_serves_exact_bytes(tmp_path):
    data_dir = tmp_path / "registry"
    data = big_skill_zip("heavy")
    sha = hashlib.sha256(data).hexdigest()
    key_path = data_dir / "archives" / "archives" / "sha256" / sha[:2] / sha[2:4] / f"{sha}.zip"
    slow = start_registry(data_dir, env_extra={"SKILLYARD_TEST_STORAGE_WRITE_DELAY": "1.0"})
    try:
        thread = threading.Thread(target=lambda: _ignore_errors(publish, slow.url, slow.token, "heavy", data))
        thread.start()
        assert wait_for(lambda: list(key_path.parent.glob("*.part")) if key_path.parent.is_dir() else [])
        os.kill(slow.process.pid, signal.SIGKILL)  # mid-write: the .part file has 1 of 4 MiB
        slow.process.wait(10)
        thread.join(30)
    finally:
        if slow.process.poll() is None:
            slow.process.kill()
    assert not key_path.exists()  # never a partial archive at its content address
    assert list(key_path.parent.glob("*.part"))  # what the killed writer left

    again = start_registry(data_dir)
    try:
        response = publish(again.url, again.token, "heavy", data)
        assert response.status_code == 201, response.text
        download = httpx.get(f"{again.url}/api/v1/skills/heavy/download", timeout=60)
        assert download.status_code == 200
        assert len(download.content) == len(data) and hashlib.sha256(download.content).hexdigest() == sha
        assert download.headers["X-Checksum-Sha256"] == sha
    finally:
        again.stop()
    uploads = list((data_dir / "uploads").iterdir())  # the killed request's upload temp file
    parts = list(key_path.parent.glob("*.part"))
    assert len(uploads) == 1 and len(parts) == 1
    env = {**os.environ, "SKILLYARD_DATA_DIR": str(data_dir)}
    env.pop("DATABASE_URL", None)
    assert "removed 2" in _manage(["sweep_uploads", "--age", "0"], env)
    assert not any(p.exists() for p in uploads + parts) and key_path.exists()


def _ignore_errors(fn, *args):
    try:
        fn(*args)
    except httpx.HTTPError:
        pass  # the server was killed under this request: that is the point
