"""The registry as `make run` serves it (scripts/run.sh, a real server process on a free port):
slow and oversized request bodies cannot stall it, an anonymous publish is refused before its
body is read, and two registries on one host leave each other alone."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 90  # migrations, collectstatic and the demo seed on a cold machine

pytestmark = pytest.mark.e2e


@dataclass
class Server:
    url: str
    port: int
    token: str
    process: subprocess.Popen
    log: Path


def start(tmp_path: Path, label: str, **env: str) -> Server:
    port = free_port()
    log = tmp_path / f"{label}.log"
    environ = {**os.environ, "PORT": str(port), "SKILLYARD_DATA_DIR": str(tmp_path / label), **env}
    for key in ("DATABASE_URL", "SKILLYARD_BROKER_URL", "SKILLYARD_CACHE_URL", "SKILLYARD_STORAGE"):
        environ.pop(key, None)
    process = subprocess.Popen(
        ["bash", "scripts/run.sh"],
        cwd=ROOT,
        env=environ,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        token = re.search(r"Publish token for the demo user: (sky_\S+)", log.read_text())
        try:
            if token and httpx.get(f"{url}/api/v1/skills", timeout=2).status_code == 200:
                return Server(url, port, token.group(1), process, log)
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    stop(process)
    raise AssertionError(f"make run did not serve within {STARTUP_SECONDS}s:\n{log.read_text()}")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


@pytest.fixture
def server(tmp_path):
    """A registry of the test's own: for tests that look at its files or its peak memory."""
    started = start(tmp_path, "registry", SKILLYARD_BODY_IDLE_SECONDS="3")
    yield started
    stop(started.process)


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory):
    """One registry for the tests that only send it requests and read the answers (each start is
    a whole `make run`: migrations, collectstatic, the demo seed and its checks)."""
    started = start(tmp_path_factory.mktemp("shared"), "registry", SKILLYARD_BODY_IDLE_SECONDS="3")
    yield started
    stop(started.process)


def upload_headers(port: int, *, length: int, token: str | None) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return (
        f"POST /api/v1/skills/slow/versions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}"
        f"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def read_status(conn: socket.socket, timeout: float) -> int:
    conn.settimeout(timeout)
    head = b""
    while b"\r\n" not in head:
        chunk = conn.recv(4096)
        if not chunk:
            break
        head += chunk
    return int(head.split()[1])


def test_two_slow_uploads_in_flight_do_not_stall_other_requests(shared_server):
    slow = []
    for _ in range(2):
        conn = socket.create_connection(("127.0.0.1", shared_server.port))
        conn.sendall(upload_headers(shared_server.port, length=10_000_000, token=shared_server.token) + b"--b\r\n")
        slow.append(conn)
    try:
        for _ in range(3):
            for conn in slow:
                conn.sendall(b"x")  # a trickle: alive, never done
            start = time.monotonic()
            response = httpx.get(f"{shared_server.url}/api/v1/skills", timeout=5)
            assert response.status_code == 200
            assert time.monotonic() - start < 1.0
            time.sleep(0.5)
    finally:
        for conn in slow:
            conn.close()


def test_a_stalled_body_is_cut_off_with_408(shared_server):
    with socket.create_connection(("127.0.0.1", shared_server.port)) as conn:
        conn.sendall(upload_headers(shared_server.port, length=1_000_000, token=shared_server.token) + b"--b\r\n")
        start = time.monotonic()
        assert read_status(conn, timeout=15) == 408
        assert time.monotonic() - start < 10  # SKILLYARD_BODY_IDLE_SECONDS=3 here


def test_anonymous_publish_is_refused_before_its_body_is_sent(shared_server):
    with socket.create_connection(("127.0.0.1", shared_server.port)) as conn:
        conn.sendall(upload_headers(shared_server.port, length=45_000_000, token=None))  # headers only
        assert read_status(conn, timeout=5) == 401


def test_a_bad_token_is_refused_before_the_body_too(shared_server):
    with socket.create_connection(("127.0.0.1", shared_server.port)) as conn:
        conn.sendall(upload_headers(shared_server.port, length=45_000_000, token="sky_not_a_real_token"))
        assert read_status(conn, timeout=5) == 401


def test_a_declared_length_over_the_limit_is_413_before_the_body(shared_server):
    with socket.create_connection(("127.0.0.1", shared_server.port)) as conn:
        conn.sendall(upload_headers(shared_server.port, length=500_000_000, token=shared_server.token))
        assert read_status(conn, timeout=5) == 413


def test_host_header_not_allowed_is_refused(shared_server):
    response = httpx.get(
        f"{shared_server.url}/.well-known/skills/index.json", headers={"Host": "evil.example"}, timeout=5
    )
    assert response.status_code == 400
    assert "evil.example" not in response.text


def test_two_registries_on_one_host_leave_each_other_alone(tmp_path):
    first = start(tmp_path, "first")
    second = start(tmp_path, "second")
    try:
        stop(first.process)  # its shutdown must not take the other's sockets with it
        time.sleep(1)
        assert httpx.get(f"{second.url}/api/v1/skills", timeout=5).status_code == 200
        third = start(tmp_path, "third")
        try:
            assert httpx.get(f"{second.url}/api/v1/skills", timeout=5).status_code == 200
            assert httpx.get(f"{third.url}/api/v1/skills", timeout=5).status_code == 200
        finally:
            stop(third.process)
    finally:
        stop(second.process)
        stop(first.process)


def test_a_restart_keeps_the_demo_token_and_sigterm_stops_quietly(tmp_path):
    first = start(tmp_path, "registry")
    os.killpg(first.process.pid, signal.SIGTERM)
    assert first.process.wait(15) == 0  # `make run` says nothing of an error
    log = first.log.read_text()
    assert "Traceback" not in log and "Shutting down" in log
    again = start(tmp_path, "registry")  # the same data folder
    try:
        assert again.token == first.token
        me = httpx.get(f"{again.url}/api/v1/me", headers={"Authorization": f"Bearer {again.token}"}, timeout=5)
        assert me.status_code == 200
    finally:
        stop(again.process)


def test_publishes_that_succeed_or_are_refused_leave_no_temp_files(server, tmp_path):
    from tests.registry.test_storage import big_zip

    data_dir = tmp_path / "registry"
    for valid, status in ((True, 201), (False, 422)):
        response = httpx.post(
            f"{server.url}/api/v1/skills/spooled/versions",
            headers={"Authorization": f"Bearer {server.token}"},
            files={"archive": ("spooled.zip", big_zip("spooled", valid=valid), "application/zip")},
            timeout=60,
        )
        assert response.status_code == status, response.text[:300]
    # Under ASGI, Django closes (and so deletes) a request's upload files once the response is
    # sent, which may be a moment after the client has read it.
    deadline = time.monotonic() + 10
    while list((data_dir / "uploads").iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list((data_dir / "uploads").iterdir()) == []
    assert not list((data_dir / "archives").rglob("*.part"))
    assert list((data_dir / "archives").rglob("*.zip"))  # the accepted one is there


def _uvicorn_pid(group: int) -> int:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == group and b"uvicorn" in (entry / "cmdline").read_bytes():
                    return int(entry.name)
            except (OSError, ProcessLookupError):
                continue
    raise AssertionError("no uvicorn process in the server's group")


def _peak_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^VmHWM:\s+(\d+) kB", status, re.M).group(1))


def test_downloads_stream_instead_of_loading_the_archive_into_memory(server, tmp_path):
    """Django reads a sync iterator whole under ASGI; the archive is served in chunks instead."""
    import hashlib
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(
            "big/SKILL.md",
            "---\nname: big\ndescription: A skill with a large asset, for streaming.\nversion: 1.0.0\n---\n# Big\n",
        )
        zf.writestr("big/assets/blob.bin", os.urandom(24 * 1024 * 1024))
    archive = buffer.getvalue()
    published = httpx.post(
        f"{server.url}/api/v1/skills/big/versions",
        headers={"Authorization": f"Bearer {server.token}"},
        files={"archive": ("big.zip", archive, "application/zip")},
        timeout=120,
    )
    assert published.status_code == 201, published.text
    # The publish checks run in this process after the publish (the manifest check loads the
    # sentence encoder for the skill's vector): let them finish so only the downloads count.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        checks = httpx.get(f"{server.url}/api/v1/skills/big/versions/1.0.0", timeout=10).json()["checks"]
        if all(c["status"] in ("done", "error", "skipped") for c in checks.values()):
            break
        time.sleep(0.2)

    pid = _uvicorn_pid(os.getpgid(server.process.pid))
    before = _peak_rss_kib(pid)
    import concurrent.futures

    def fetch() -> str:
        digest = hashlib.sha256()
        with httpx.stream("GET", f"{server.url}/api/v1/skills/big/versions/1.0.0/download", timeout=120) as response:
            assert response.status_code == 200
            for chunk in response.iter_bytes():
                digest.update(chunk)
        return digest.hexdigest()

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        digests = list(pool.map(lambda _: fetch(), range(4)))
    assert digests == [hashlib.sha256(archive).hexdigest()] * 4
    grown_mib = (_peak_rss_kib(pid) - before) / 1024
    # Read whole, four downloads took ~140 MiB more; streamed, what grows is buffers (~35 MiB).
    assert grown_mib < 48, f"peak memory grew {grown_mib:.0f} MiB for four 24 MiB downloads"
    assert "must consume synchronous iterators" not in server.log.read_text()


def test_make_run_prints_the_catalog_url_and_a_working_demo_sign_in(shared_server):
    printed = shared_server.log.read_text()
    catalog = re.search(r"Skillyard catalog: (\S+)", printed)
    assert catalog and catalog.group(1) == f"{shared_server.url}/"
    signin = re.search(r"Sign in as: (\S+) / (\S+)", printed)
    assert signin, printed
    with httpx.Client(base_url=shared_server.url) as browser:
        assert browser.get("/").status_code == 200  # the catalog, not a 404
        form = browser.get("/accounts/login/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
        signed_in = browser.post(
            "/accounts/login/",
            data={"username": signin.group(1), "password": signin.group(2), "csrfmiddlewaretoken": csrf},
            headers={"Referer": f"{shared_server.url}/accounts/login/"},
        )
        assert signed_in.status_code == 302, signed_in.text[:500]
        assert browser.get("/publish").status_code == 200  # only for someone signed in


@pytest.fixture
def run_script(tmp_path):
    """scripts/run.sh in a copy of the tree whose .venv/bin programs only record their arguments
    (one line each in ``calls``): python fails when ``FAKE_PYTHON_EXIT`` says so (the script
    then stops at its first `manage.py` call), celery and uvicorn end at once. No server starts."""
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    (tree / "scripts" / "run.sh").write_text((ROOT / "scripts" / "run.sh").read_text())
    (tree / ".venv" / "bin").mkdir(parents=True)
    for program in ("python", "celery", "uvicorn"):
        fake = tree / ".venv" / "bin" / program
        fake.write_text(f'#!/bin/sh\necho "{program} $@" >> {tree / "calls"}\nexit ${{FAKE_PYTHON_EXIT:-0}}\n')
        fake.chmod(0o755)

    def run(**env: str) -> tuple[subprocess.CompletedProcess, str]:
        environ = {k: v for k, v in os.environ.items() if not k.startswith("SKILLYARD_")}
        (tree / "calls").unlink(missing_ok=True)
        result = subprocess.run(
            ["bash", str(tree / "scripts" / "run.sh")], env={**environ, **env}, capture_output=True, text=True
        )
        calls = tree / "calls"
        return result, calls.read_text() if calls.exists() else ""

    return run


def test_more_than_one_web_process_without_a_shared_cache_is_refused(run_script):
    result, calls = run_script(SKILLYARD_WEB_WORKERS="2")
    assert result.returncode == 2 and "SKILLYARD_CACHE_URL" in result.stderr
    assert calls == ""  # refused before anything ran


@pytest.mark.parametrize(
    "env", [{}, {"SKILLYARD_WEB_WORKERS": "1"}, {"SKILLYARD_WEB_WORKERS": "2", "SKILLYARD_CACHE_URL": "redis://r/1"}]
)
def test_one_process_or_a_shared_cache_goes_on_to_start(run_script, env):
    result, calls = run_script(FAKE_PYTHON_EXIT="3", **env)
    assert result.returncode == 3 and calls.startswith("python manage.py migrate")  # the fake python's exit


def test_with_a_broker_make_run_starts_a_worker_with_the_beat_sweep(run_script, tmp_path):
    data = tmp_path / "data"
    _, calls = run_script(SKILLYARD_BROKER_URL="redis://r/0", SKILLYARD_DATA_DIR=str(data))
    [worker] = [line for line in calls.splitlines() if line.startswith("celery ")]
    assert " worker " in worker and " -B " in f"{worker} "  # checks a dead worker left running come back
    assert f"--schedule {data}/celerybeat-schedule" in worker  # per registry, not the shared cwd
    _, calls = run_script(SKILLYARD_DATA_DIR=str(data))
    assert "celery " not in calls  # no broker: the web process runs the checks itself
