"""The soak's processes (bench/soak.py): a fresh PostgreSQL database on scripts/services.sh's
cluster, a Redis of its own (broker + shared cache, no persistence, as in docker-compose), moto's
S3 server, web processes started with scripts/web.sh (the production command: whichever server
it runs), Celery workers and one beat. Each is started, killed (kill -9, a whole process group
where it has children) and restarted here: a supervisor restarts any web, worker or beat process
that exits, 3 s later, as docker-compose's ``restart: unless-stopped`` does, and records the exits
nobody caused (``crashes``). Every wait has a deadline."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import boto3
import httpx

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
POSTGRES = os.environ.get("SKILLYARD_TEST_POSTGRES_URL", "postgres://skillyard:skillyard@127.0.0.1:5432/skillyard")
# The recovery timings (settings.py, SKILLYARD_CHECK_*), shortened for a run of minutes as
# compose-test shortens them: a check whose worker died is taken over after 150 s (above any
# check of these small skills, the Docker test run included), a check whose message Redis lost is
# queued again after 150 s pending, the beat sweeps every 30 s, and Redis redelivers after 180 s.
RECOVERY = {
    "SKILLYARD_CHECK_STALE_SECONDS": "150",
    "SKILLYARD_CHECK_PENDING_SECONDS": "150",
    "SKILLYARD_CHECK_SWEEP_SECONDS": "30",
    "SKILLYARD_BROKER_VISIBILITY_TIMEOUT": "180",
}


RESTART_DELAY = 3.0  # seconds before the supervisor starts an exited process again


@dataclass
class Stack:
    tmp: Path
    env: dict[str, str]
    redis_port: int
    web_ports: list[int]
    web_workers: int
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    crashes: list[str] = field(default_factory=list)  # exits nobody caused, with when and how
    killed: set[str] = field(default_factory=set)  # processes a fault killed on purpose
    stopping: threading.Event = field(default_factory=threading.Event)

    def start(self, label: str, command: list[str], *, env: dict[str, str] | None = None) -> None:
        """Each in a process group of its own, so a kill takes its children (a pool, server workers)."""
        log = (self.tmp / f"{label}.log").open("a")
        self.procs[label] = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**self.env, **(env or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self, label: str) -> None:
        """kill -9 of the process and everything it started (no graceful shutdown); the
        supervisor starts it again."""
        proc = self.procs[label]
        self.killed.add(label)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)

    def supervise(self) -> None:
        """Until ``stop``: restart web, worker and beat processes that exited."""
        while not self.stopping.wait(0.5):
            for label, proc in list(self.procs.items()):
                if label.startswith(("web", "worker", "beat")) and proc.poll() is not None:
                    if label not in self.killed:
                        self.crashes.append(f"{label} exited ({proc.returncode}) at {time.strftime('%H:%M:%S')}")
                    self.killed.discard(label)
                    time.sleep(RESTART_DELAY)
                    if not self.stopping.is_set():
                        self.restart(label)

    def restart(self, label: str) -> None:
        if label == "beat":
            self.beat()
        elif label.startswith("web"):
            self.web(int(label[3:]))
        else:
            self.worker(int(label[6:]))

    def web(self, index: int) -> None:
        """One web process as production starts it: scripts/web.sh on its own port."""
        port = self.web_ports[index]
        env = {"SKILLYARD_WEB_HOST": "127.0.0.1", "SKILLYARD_WEB_PORT": str(port)}
        self.start(f"web{index}", ["sh", "scripts/web.sh"], env={**env, "SKILLYARD_WEB_WORKERS": str(self.web_workers)})

    def worker(self, index: int) -> None:
        celery = [str(BIN / "celery"), "-A", "worker", "worker", "--loglevel", "WARNING", "--concurrency", "2"]
        self.start(f"worker{index}", [*celery, "-n", f"soak{index}@%h"])

    def beat(self) -> None:
        """The schedule (the sweep of lost checks): exactly one, as in docker-compose."""
        schedule = str(self.tmp / "celerybeat-schedule")
        self.start(
            "beat", [str(BIN / "celery"), "-A", "worker", "beat", "--loglevel", "WARNING", "--schedule", schedule]
        )

    def redis(self) -> None:
        port = str(self.redis_port)
        self.start("redis", ["redis-server", "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no"])
        wait_for(lambda: subprocess.run(["redis-cli", "-p", port, "ping"], capture_output=True).stdout == b"PONG\n")

    def restart_redis(self) -> None:
        """A Redis restart without persistence: its queue and cache are gone."""
        self.procs["redis"].terminate()
        self.procs["redis"].wait(10)
        time.sleep(2)
        self.redis()

    def stop(self) -> None:
        self.stopping.set()
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def wait_for(ready, timeout: float = 60) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if ready():
                return
        except Exception:  # noqa: BLE001 - whatever a service not yet up raises
            pass
        time.sleep(0.2)
    raise SystemExit(f"not ready within {timeout:.0f} s: {ready}")


def web_up(port: int) -> bool:
    return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200


def manage(env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout + proc.stderr


def psql(database: str, sql: str) -> None:
    url = POSTGRES.rsplit("/", 1)[0] + f"/{database}"
    subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", sql], check=True, capture_output=True)


def stack_env(tmp: Path, database: str, s3_port: int, redis_port: int) -> dict[str, str]:
    env = {
        **os.environ,
        "PATH": f"{BIN}:{os.environ.get('PATH', '')}",  # scripts/web.sh runs the venv's server
        "DJANGO_SETTINGS_MODULE": "skillyard.settings",
        "DATABASE_URL": POSTGRES.rsplit("/", 1)[0] + f"/{database}",
        "SKILLYARD_SECRET_KEY": "soak-" + uuid.uuid4().hex * 2,
        "SKILLYARD_ALLOWED_HOSTS": "127.0.0.1",
        "SKILLYARD_HTTPS": "0",
        "SKILLYARD_DATA_DIR": str(tmp / "data"),
        "SKILLYARD_STATIC_ROOT": str(tmp / "static"),
        "SKILLYARD_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0",
        "SKILLYARD_CACHE_URL": f"redis://127.0.0.1:{redis_port}/1",
        "SKILLYARD_STORAGE": "s3",
        "SKILLYARD_S3_ENDPOINT_URL": f"http://127.0.0.1:{s3_port}",
        "SKILLYARD_S3_BUCKET": "soak",
        "SKILLYARD_S3_ACCESS_KEY_ID": "soak",
        "SKILLYARD_S3_SECRET_ACCESS_KEY": "soak",
        "SKILLYARD_METRICS_DIR": str(tmp / "metrics"),
        "SKILLYARD_THROTTLE_ANON": "100000000/min",
        "SKILLYARD_THROTTLE_USER": "100000000/min",
        "SKILLYARD_THROTTLE_PUBLISH": "100000000/hour",
        **RECOVERY,
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    return env


def build_stack(tmp: Path, *, web_workers: int) -> tuple[Stack, str, str]:
    """The stack with its database migrated and a publish token; (stack, database, token)."""
    from bench.api import free_port

    database = f"skillyard_soak_{uuid.uuid4().hex[:8]}"
    psql(POSTGRES.rsplit("/", 1)[1], f"CREATE DATABASE {database}")
    s3_port, redis_port = free_port(), free_port()
    env = stack_env(tmp, database, s3_port, redis_port)
    stack = Stack(
        tmp=tmp, env=env, redis_port=redis_port, web_ports=[free_port(), free_port()], web_workers=web_workers
    )
    stack.start("s3", [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(s3_port)])
    s3 = boto3.client("s3", endpoint_url=env["SKILLYARD_S3_ENDPOINT_URL"], region_name="us-east-1",
                      aws_access_key_id="soak", aws_secret_access_key="soak")  # fmt: skip
    wait_for(lambda: s3.list_buckets() is not None)
    s3.create_bucket(Bucket="soak")
    stack.redis()
    manage(env, "migrate", "--noinput", "-v0")
    issued = manage(env, "issue_token", "soak", "--scope", "publish", "--create-user").split()
    token = next(word for word in issued if word.startswith("sky_"))
    return stack, database, token


def drop_database(database: str) -> None:
    psql(POSTGRES.rsplit("/", 1)[1], f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
