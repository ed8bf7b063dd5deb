"""A live registry for end-to-end tests: the real Django app on a free loopback port.

``live_registry`` starts ``manage.py runserver --noreload`` with its own data folder and SQLite
database, creates a user with a publish token, and offers ``publish(folder, version=None)``
over the real HTTP API. ``registry_factory`` starts more than one (dependency-confusion tests).
``start_registry`` is importable for bench/install.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 60  # a cold start runs migrations first; generous for slow CI machines


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LiveRegistry:
    url: str
    token: str
    data_dir: Path
    process: subprocess.Popen
    log: Path
    published: list[tuple[str, str]] = field(default_factory=list)

    def publish(self, folder: Path, *, version: str | None = None, name: str | None = None) -> dict:
        """Pack ``folder`` reproducibly and POST it; returns the registry's answer."""
        from skillctl.format import load_skill, pack_skill

        name = name or load_skill(folder).name
        archive = folder.parent / f"{folder.name}.zip"
        pack_skill(folder, archive)
        data = {"version": version} if version else {}
        with archive.open("rb") as fh:
            response = httpx.post(
                f"{self.url}/api/v1/skills/{name}/versions",
                headers={"Authorization": f"Bearer {self.token}"},
                files={"archive": (archive.name, fh, "application/zip")},
                data=data,
                timeout=60,
            )
        assert response.status_code in (200, 201), response.text
        self.published.append((name, version or ""))
        return response.json()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _manage(args: list[str], env: dict[str, str]) -> str:
    proc = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    if proc.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


# `manage.py A && manage.py B` in one process: each start of Django and the apps costs ~2 s.
_CALL_COMMANDS = """
import contextlib, io, json, sys
import django
django.setup()
from django.core.management import call_command
outputs = []
for args in json.loads(sys.argv[1]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        call_command(*args, stdout=out)
    outputs.append(out.getvalue())
print(json.dumps(outputs))
"""


def _manage_all(commands: list[list[str]], env: dict[str, str]) -> list[str]:
    """Run these management commands in order in one process; what each printed."""
    proc = subprocess.run(
        [sys.executable, "-c", _CALL_COMMANDS, json.dumps(commands)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"manage.py {commands} failed:\n{proc.stdout}\n{proc.stderr}")
    return json.loads(proc.stdout)


def _server_command(server: str, port: int) -> list[str]:
    if server == "runserver":
        return [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"]
    if server == "uvicorn":  # what `make run` serves (scripts/run.sh)
        uvicorn = str(Path(sys.executable).with_name("uvicorn"))
        return [uvicorn, "skillyard.asgi:application", "--host", "127.0.0.1", "--port", str(port), "--no-proxy-headers"]
    # gunicorn's sync workers close each connection; runserver keeps it alive and then stalls
    # ~40 ms per request on loopback (Nagle against delayed ACK), which swamps timings.
    return [
        str(Path(sys.executable).with_name("gunicorn")),
        "skillyard.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        "4",
    ]


def start_registry(
    data_dir: Path,
    *,
    username: str = "alice",
    server: str = "runserver",
    env_extra: dict[str, str] | None = None,
    then: list[list[str]] | None = None,
    port: int | None = None,
) -> LiveRegistry:
    """Migrate a fresh SQLite registry in ``data_dir``, issue a token, serve it on a free port.
    ``then``: more management commands (argument lists) to run before it serves.

    ``server`` is ``runserver`` (the tests), ``gunicorn`` (bench/install.py) or ``uvicorn``
    (what `make run` serves; bench/publish.py). ``port``: serve there (a restart on the same
    data folder keeps the URL its installs recorded), else a free one.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "SKILLYARD_DATA_DIR": str(data_dir),
        "DJANGO_SETTINGS_MODULE": "skillyard.settings",
        "SKILLYARD_THROTTLE_ANON": "100000/min",
        "SKILLYARD_THROTTLE_USER": "100000/min",
        "SKILLYARD_THROTTLE_PUBLISH": "100000/hour",
    }
    env.pop("DATABASE_URL", None)
    env.pop("SKILLYARD_BROKER_URL", None)
    env.update(env_extra or {})
    _, issued, *_ = _manage_all(
        [
            ["migrate", "--noinput"],
            ["issue_token", username, "--scope", "publish", "--create-user", "--replace"],
            *(then or []),
        ],
        env,
    )
    token = issued.strip().splitlines()[-1]
    port = port or _free_port()
    log = data_dir / "server.log"
    process = subprocess.Popen(
        _server_command(server, port),
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the registry exited:\n{log.read_text()}")
        try:
            if httpx.get(f"{url}/api/v1/skills", timeout=2).status_code == 200:
                return LiveRegistry(url, token, data_dir, process, log)
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"the registry did not answer within {STARTUP_SECONDS}s:\n{log.read_text()}")


def _registry_or_skip(data_dir: Path) -> LiveRegistry:
    try:
        import django  # noqa: F401
    except ImportError:
        pytest.skip("the server extra (Django) is not installed")
    try:
        return start_registry(data_dir)
    except RuntimeError as err:
        if os.environ.get("SKILLYARD_REQUIRE_SERVICES") == "1":
            pytest.fail(str(err))
        pytest.skip(f"the registry could not start: {str(err)[:2000]}")


@pytest.fixture
def registry_factory(tmp_path):
    started: list[LiveRegistry] = []

    def start(label: str = "registry") -> LiveRegistry:
        reg = _registry_or_skip(tmp_path / label)
        started.append(reg)
        return reg

    yield start
    for reg in started:
        reg.stop()


@pytest.fixture
def live_registry(registry_factory) -> LiveRegistry:
    return registry_factory("registry")
