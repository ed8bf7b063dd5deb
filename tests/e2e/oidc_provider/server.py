"""Start the test's OpenID provider as its own process on a free loopback port."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.e2e.conftest import ROOT, STARTUP_SECONDS, _free_port


@dataclass
class LiveProvider:
    url: str
    env: dict[str, str]
    process: subprocess.Popen
    log: Path

    @property
    def issuer(self) -> str:
        return f"{self.url}/openid"

    def seed(self, *, clients: list[dict] | None = None, users: list[dict] | None = None) -> None:
        """Add or change clients and users (see seed.py), as the provider's administrator would."""
        seed_provider(self.env, {"clients": clients or [], "users": users or []})

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def seed_provider(env: dict[str, str], spec: dict) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tests.e2e.oidc_provider.seed", json.dumps(spec)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"seeding the OpenID provider failed:\n{proc.stdout}\n{proc.stderr}")


def start_provider(data_dir: Path, *, clients: list[dict], users: list[dict]) -> LiveProvider:
    """Migrate, make its RSA key, register ``clients`` and ``users``, then serve on loopback."""
    data_dir.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.e2e.oidc_provider.settings",
        "OIDC_PROVIDER_DATA_DIR": str(data_dir),
        "OIDC_PROVIDER_SECRET_KEY": secrets.token_urlsafe(32),
        "OIDC_PROVIDER_URL": url,
        "PYTHONPATH": str(ROOT),
    }
    seed_provider(env, {"clients": clients, "users": users})
    log = data_dir / "provider.log"
    command = [sys.executable, "-m", "django", "runserver", f"127.0.0.1:{port}", "--noreload"]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the OpenID provider exited:\n{log.read_text()}")
        try:
            if httpx.get(f"{url}/openid/.well-known/openid-configuration", timeout=2).status_code == 200:
                return LiveProvider(url, env, process, log)
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"the OpenID provider did not answer within {STARTUP_SECONDS}s:\n{log.read_text()}")
