"""Registry API throughput side by side with a static file served by the same processes (the floor).

Starts the web server (real processes) on a loopback port against a registry seeded with
skills, then drives list, search, detail and download with concurrent clients, and the same
archive served as a static file by the same server (WhiteNoise). Prints req/s and latency
percentiles per endpoint and the ratio to the static floor. Bounded: each endpoint runs for
``--seconds`` (default 5) or ``--max-requests``, whichever ends first; loopback only.

Two topologies:

- default: SQLite and archives on local files (the embedded default);
- ``--production``: PostgreSQL (scripts/services.sh's cluster, a fresh database dropped at the
  end), a Redis of its own (broker + shared cache), moto's S3 server: what docker-compose runs.

``--server`` picks the command: ``web.sh`` (default: scripts/web.sh, the production command)
or one of the candidates it was chosen from (uvicorn, gunicorn-sync, gunicorn-gthread,
gunicorn-uvicorn), so a change of server is decided on numbers from one run. ``--before DIR``
first runs the same servers from another copy of the code (e.g. ``git archive <rev> | tar -x -C
DIR``) against the same data: before and after in one run. ``--uncached`` adds a pass with the
API answer cache and the archive memory off (every request does its whole work: what a cache
miss costs).

    .venv/bin/python bench/api.py [--production] [--server web.sh] [--before DIR] [--uncached]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SERVERS = ("web.sh", "uvicorn", "gunicorn-sync", "gunicorn-gthread", "gunicorn-uvicorn")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def seed(env: dict[str, str], skills: int) -> str:
    """Migrate and publish ``skills`` skills in a child process; returns one archive's key."""
    script = f"""
import io, os, zipfile, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from registry import services
from registry.access import Actor
user = services.user_create(username="bench")
key = None
for i in range({skills}):
    name = f"skill-{{i:04d}}"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"{{name}}/SKILL.md", f"---\\nname: {{name}}\\ndescription: Benchmark skill {{i}} for list and search.\\nversion: 1.0.0\\n---\\n# {{name}}\\n" + "Step.\\n" * 200)
        z.writestr(f"{{name}}/scripts/data.txt", os.urandom(16384).hex())
    buf.seek(0)
    result = services.skill_version_publish(actor=Actor(user), name=name, archive=buf)
    key = key or result.version.archive_key
print(key)
"""
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, check=True, capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


def server_command(server: str, port: int, workers: int) -> tuple[list[str], dict[str, str]]:
    """The command line and extra environment of one server candidate."""
    if server == "web.sh":
        env = {
            "SKILLYARD_WEB_HOST": "127.0.0.1",
            "SKILLYARD_WEB_PORT": str(port),
            "SKILLYARD_WEB_WORKERS": str(workers),
        }
        return ["sh", "scripts/web.sh"], env
    if server == "uvicorn":
        uvicorn = [str(BIN / "uvicorn"), "skillyard.asgi:application", "--host", "127.0.0.1", "--port", str(port)]
        return [*uvicorn, "--workers", str(workers), "--no-access-log", "--timeout-keep-alive", "5"], {}
    gunicorn = [
        str(BIN / "gunicorn"),
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--log-level",
        "warning",
    ]
    if server == "gunicorn-sync":
        return [*gunicorn, "skillyard.wsgi:application"], {}
    if server == "gunicorn-gthread":
        return [*gunicorn, "--worker-class", "gthread", "--threads", "4", "skillyard.wsgi:application"], {}
    return [*gunicorn, "--worker-class", "uvicorn.workers.UvicornWorker", "skillyard.asgi:application"], {}


def start_server(
    env: dict[str, str], server: str, port: int, workers: int, log: Path, root: Path = ROOT
) -> subprocess.Popen:
    command, extra = server_command(server, port, workers)
    code = {
        "PYTHONPATH": os.pathsep.join(filter(None, [f"{root}{os.pathsep}{root / 'client'}", env.get("PYTHONPATH")]))
    }
    code = code if root != ROOT else {}
    process = subprocess.Popen(
        command,
        env={**env, **extra, **code},
        cwd=root,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{server} exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.2)
    stop_server(process)
    raise SystemExit(f"{server} did not answer within 60 s (log: {log})")


def stop_server(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, 15)
        process.wait(15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(process.pid, 9)


def drive(url: str, *, clients: int, seconds: float, max_requests: int, expect: int = 200) -> dict:
    """``clients`` threads asking for ``url`` for ``seconds``, counted from the moment all of them
    have their HTTP client ready (making 16 of them takes over a second on a loaded machine)."""
    latencies: list[float] = []
    errors = [0]
    failures: dict[str, int] = {}
    lock = threading.Lock()
    begun = [0.0]  # set once every client is ready
    ready = threading.Barrier(clients, action=lambda: begun.__setitem__(0, time.monotonic()))
    budget = [max_requests]

    def client() -> None:
        mine: list[float] = []
        with httpx.Client(timeout=30) as http:
            ready.wait()
            stop_at = begun[0] + seconds
            while time.monotonic() < stop_at:
                with lock:
                    if budget[0] <= 0:
                        break
                    budget[0] -= 1
                start = time.perf_counter()
                try:
                    response = http.get(url)
                    ok = response.status_code == expect
                except httpx.HTTPError as exc:
                    ok, failures[type(exc).__name__] = False, failures.get(type(exc).__name__, 0) + 1
                mine.append(time.perf_counter() - start)
                if not ok:
                    errors[0] += 1
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - begun[0]
    if not latencies:
        raise SystemExit(f"no request completed against {url}: {failures}")
    latencies.sort()
    quantiles = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [latencies[0]] * 99
    return {
        "requests": len(latencies),
        "errors": errors[0],
        "failures": failures,
        "rps": len(latencies) / elapsed,
        "p50_ms": quantiles[49] * 1000,
        "p99_ms": quantiles[98] * 1000,
    }


def base_env(tmp: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "skillyard.settings",
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",  # scripts/web.sh finds the venv's servers
        "SKILLYARD_DATA_DIR": str(tmp / "data"),
        "SKILLYARD_STATIC_ROOT": str(tmp / "static"),
        "SKILLYARD_STORAGE": "fs",
        "SKILLYARD_THROTTLE_ANON": "100000000/min",
        "SKILLYARD_THROTTLE_USER": "100000000/min",
        # The checks would run in the web processes (embedded) or need workers: the bench
        # measures serving, so the seeded versions keep their checks pending.
        "SKILLYARD_CHECKS_ENABLED": "0",
    }
    for key in ("DATABASE_URL", "SKILLYARD_BROKER_URL", "SKILLYARD_CACHE_URL", "PROMETHEUS_MULTIPROC_DIR"):
        env.pop(key, None)
    return env


class Production:
    """PostgreSQL (a fresh database), a Redis of its own and moto's S3 server, as bench/soak_stack.py
    starts them; ``stop`` ends what ``start`` began and drops the database."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.database = f"skillyard_bench_{uuid.uuid4().hex[:8]}"
        self.procs: list[subprocess.Popen] = []

    def start(self, env: dict[str, str]) -> dict[str, str]:
        import boto3

        from bench.soak_stack import POSTGRES, psql, wait_for

        psql(POSTGRES.rsplit("/", 1)[1], f"CREATE DATABASE {self.database}")
        self.created = True
        s3_port, redis_port = free_port(), free_port()
        self._spawn("s3", [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(s3_port)])
        redis = ["redis-server", "--bind", "127.0.0.1", "--port", str(redis_port), "--save", "", "--appendonly", "no"]
        self._spawn("redis", redis)
        s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{s3_port}", region_name="us-east-1",
                          aws_access_key_id="bench", aws_secret_access_key="bench")  # fmt: skip
        wait_for(lambda: s3.list_buckets() is not None)
        s3.create_bucket(Bucket="bench")
        ping = ["redis-cli", "-p", str(redis_port), "ping"]
        wait_for(lambda: subprocess.run(ping, capture_output=True).stdout == b"PONG\n")
        return {
            **env,
            "DATABASE_URL": POSTGRES.rsplit("/", 1)[0] + f"/{self.database}",
            "SKILLYARD_SECRET_KEY": "bench-" + uuid.uuid4().hex * 2,
            "SKILLYARD_ALLOWED_HOSTS": "127.0.0.1",
            "SKILLYARD_HTTPS": "0",
            "SKILLYARD_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0",
            "SKILLYARD_CACHE_URL": f"redis://127.0.0.1:{redis_port}/1",
            "SKILLYARD_STORAGE": "s3",
            "SKILLYARD_S3_ENDPOINT_URL": f"http://127.0.0.1:{s3_port}",
            "SKILLYARD_S3_BUCKET": "bench",
            "SKILLYARD_S3_ACCESS_KEY_ID": "bench",
            "SKILLYARD_S3_SECRET_ACCESS_KEY": "bench",
        }

    def _spawn(self, label: str, command: list[str]) -> None:
        log = (self.tmp / f"{label}.log").open("w")
        self.procs.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT))

    def stop(self) -> None:
        from bench.soak_stack import POSTGRES, psql

        for proc in self.procs:
            proc.terminate()
            proc.wait(15)
        if getattr(self, "created", False):
            psql(POSTGRES.rsplit("/", 1)[1], f"DROP DATABASE IF EXISTS {self.database} WITH (FORCE)")


def static_copy(env: dict[str, str], key: str, tmp: Path) -> Path:
    """The seeded archive's bytes as a static file (read through the registry's own storage)."""
    script = (
        "import django, sys; django.setup()\n"
        "from registry.storage import archive_open\n"
        f"sys.stdout.buffer.write(archive_open({key!r}).read())\n"
    )
    data = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, check=True, capture_output=True).stdout
    static = tmp / "static" / "bench" / "skill.zip"
    static.parent.mkdir(parents=True, exist_ok=True)
    static.write_bytes(data)
    return static


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--production", action="store_true", help="PostgreSQL + moto S3 + Redis")
    parser.add_argument("--server", choices=SERVERS, action="append", help="repeat to compare (default web.sh)")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--skills", type=int, default=200)
    parser.add_argument("--max-requests", type=int, default=50_000)
    parser.add_argument("--before", type=Path, help="also run the servers from this copy of the code, first")
    parser.add_argument("--uncached", action="store_true", help="also a pass with the answer cache off")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="skillyard-bench-"))
    env = base_env(tmp)
    production = Production(tmp) if args.production else None
    try:
        if production:
            env = production.start(env)
        key = seed(env, args.skills)
        static = static_copy(env, key, tmp)
        uncached = uncached_env(env, tmp)
        servers = args.server or ["web.sh"]
        passes = [(f"before: {s}", s, env, args.before) for s in servers] if args.before else []
        passes += [(s, s, env, ROOT) for s in servers]
        if args.uncached:
            passes += [(f"{s}, caches off", s, uncached, ROOT) for s in servers]
        for label, server, pass_env, root in passes:
            results = run_server(pass_env, server, args, tmp, root)
            report(results, args, label, static.stat().st_size)
    finally:
        if production:
            production.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def uncached_env(env: dict[str, str], tmp: Path) -> dict[str, str]:
    """The settings with the API answer cache and the archive memory off, as a settings module
    of the run's own (the two are settings, not environment variables)."""
    folder = tmp / "settings"
    folder.mkdir(exist_ok=True)
    (folder / "bench_uncached.py").write_text(
        "from skillyard.settings import *  # noqa: F403\n"
        "SKILLYARD_API_CACHE_SECONDS = 0\nSKILLYARD_ARCHIVE_MEMORY_BYTES = 0\n"
    )
    path = f"{folder}{os.pathsep}{env['PYTHONPATH']}" if env.get("PYTHONPATH") else str(folder)
    return {**env, "DJANGO_SETTINGS_MODULE": "bench_uncached", "PYTHONPATH": path}


def run_server(env: dict[str, str], server: str, args, tmp: Path, root: Path = ROOT) -> dict:  # noqa: ANN001
    port = free_port()
    process = start_server(env, server, port, args.workers, tmp / f"{server}.log", root)
    base = f"http://127.0.0.1:{port}"
    targets = {
        "static file (floor)": f"{base}/static/bench/skill.zip",
        "list": f"{base}/api/v1/skills",
        "search": f"{base}/api/v1/skills?q=benchmark+skill+list",
        "detail": f"{base}/api/v1/skills/skill-0007",
        "download": f"{base}/api/v1/skills/skill-0000/versions/1.0.0/download",
    }
    results = {}
    try:
        for label, url in targets.items():
            drive(url, clients=args.clients, seconds=min(1.0, args.seconds), max_requests=args.max_requests)  # warm-up
            results[label] = drive(url, clients=args.clients, seconds=args.seconds, max_requests=args.max_requests)
    finally:
        stop_server(process)
    return results


def report(results: dict, args, server: str, archive_size: int) -> None:  # noqa: ANN001
    floor = results["static file (floor)"]
    topology = "PostgreSQL + moto S3 + Redis" if args.production else "SQLite + local files"
    print(
        f"\n{server} --workers {args.workers}, {args.clients} concurrent clients, {args.seconds:g} s per endpoint, "
        f"{topology}, {args.skills} skills, archive {archive_size} bytes"
    )
    print(
        f"{'endpoint':<22}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'errors':>8}{'floor/this req/s':>19}{'this/floor p99':>16}"
    )
    for label, r in results.items():
        print(
            f"{label:<22}{r['rps']:>10.0f}{r['p50_ms']:>10.1f}{r['p99_ms']:>10.1f}{r['errors']:>8}"
            f"{floor['rps'] / r['rps']:>19.2f}{r['p99_ms'] / floor['p99_ms']:>16.2f}"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
