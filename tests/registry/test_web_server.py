"""The production web command (scripts/web.sh: gunicorn's threads over skillyard/wsgi.py) serves
the API, and its WSGI body guard answers oversized, unauthenticated and stalled publishes
without the view ever reading them (what skillyard/asgi.py's guard does under uvicorn,
tests/deploy/test_server.py)."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port
from tests.registry.conftest import make_zip

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
IDLE_SECONDS = 2

pytestmark = pytest.mark.e2e


@dataclass
class Web:
    url: str
    port: int
    token: str
    process: subprocess.Popen
    log: Path


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    folder = tmp_path_factory.mktemp("web")
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SKILLYARD_", "DATABASE_URL"))},
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "DJANGO_SETTINGS_MODULE": "skillyard.settings",
        "SKILLYARD_DATA_DIR": str(folder / "data"),
        "SKILLYARD_CHECKS_ENABLED": "0",
        "SKILLYARD_BODY_IDLE_SECONDS": str(IDLE_SECONDS),
        "SKILLYARD_WEB_HOST": "127.0.0.1",
        "SKILLYARD_WEB_PORT": str(port),
        "SKILLYARD_WEB_WORKERS": "1",
        "SKILLYARD_WEB_THREADS": "2",
    }
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True, capture_output=True, timeout=300)
    issued = subprocess.run(
        [*manage, "issue_token", "alice", "--scope", "publish", "--create-user"],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True, timeout=120,
    ).stdout  # fmt: skip
    token = next(word for word in issued.split() if word.startswith("sky_"))
    log = folder / "web.log"
    process = subprocess.Popen(
        ["sh", "scripts/web.sh"], cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    yield Web(url, port, token, process, log)
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(30)


def upload_headers(port: int, *, length: int, token: str | None) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return (
        f"POST /api/v1/skills/slow/versions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}"
        f"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def answer_of(conn: socket.socket, timeout: float) -> tuple[int, bytes]:
    """The status and the answer's body (read to its Content-Length)."""
    conn.settimeout(timeout)
    answer = b""
    while b"\r\n\r\n" not in answer and (chunk := conn.recv(65536)):
        answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    length = int(
        next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    )
    while len(body) < length and (chunk := conn.recv(65536)):
        body += chunk
    return int(head.split()[1]), body


def test_web_sh_serves_gunicorn_threads_that_publish_list_and_download(web):
    archive = make_zip("served-skill")
    auth = {"Authorization": f"Bearer {web.token}"}
    files = {"archive": ("served-skill.zip", archive, "application/zip")}
    published = httpx.post(f"{web.url}/api/v1/skills/served-skill/versions", files=files, headers=auth, timeout=30)
    assert published.status_code == 201, published.text
    assert "served-skill" in [s["name"] for s in httpx.get(f"{web.url}/api/v1/skills", timeout=10).json()["results"]]
    download = httpx.get(f"{web.url}/api/v1/skills/served-skill/versions/1.0.0/download", timeout=10)
    assert hashlib.sha256(download.content).hexdigest() == download.headers["X-Checksum-Sha256"]
    assert download.headers["Server"].startswith("gunicorn")  # the default server of scripts/web.sh


def test_a_declared_length_over_the_limit_is_413_before_the_body(web):
    with socket.create_connection(("127.0.0.1", web.port)) as conn:
        conn.sendall(upload_headers(web.port, length=500_000_000, token=web.token))
        assert answer_of(conn, timeout=5)[0] == 413


def test_anonymous_and_bad_token_publishes_are_401_before_the_body(web):
    for token in (None, "sky_not_a_real_token"):
        with socket.create_connection(("127.0.0.1", web.port)) as conn:
            conn.sendall(upload_headers(web.port, length=45_000_000, token=token))  # headers only
            status, answer = answer_of(conn, timeout=5)
            assert status == 401 and b'"status": 401' in answer


def test_a_stalled_body_is_cut_off_with_408_and_the_thread_serves_again(web):
    with socket.create_connection(("127.0.0.1", web.port)) as conn:
        conn.sendall(upload_headers(web.port, length=1_000_000, token=web.token) + b"--b\r\n")
        start = time.monotonic()
        status, answer = answer_of(conn, timeout=IDLE_SECONDS + 10)
        assert status == 408 and b'"code": "request.body_timeout"' in answer
        assert time.monotonic() - start < IDLE_SECONDS + 5
    for _ in range(4):  # both threads answer again
        assert httpx.get(f"{web.url}/api/v1/skills", timeout=5).status_code == 200
