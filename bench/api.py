"""Registry API throughput against gunicorn, side by side with a static file (the floor).

Starts gunicorn (real processes) on a loopback port against a temporary SQLite database seeded
with skills, then drives list, detail and download with 16 concurrent clients, and the same
archive served as a static file by the same gunicorn (WhiteNoise). Prints req/s and latency
percentiles per endpoint and the ratio to the static floor. Bounded: each endpoint runs for
``--seconds`` (default 5) or ``--max-requests``, whichever ends first; loopback only.

    .venv/bin/python bench/api.py [--seconds 5] [--clients 16] [--workers 4] [--skills 200]
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
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


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


def start_gunicorn(env: dict[str, str], port: int, workers: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "skillyard.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--log-level",
            "warning",
        ],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v1/skills", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("gunicorn did not answer within 30 s")


def drive(url: str, *, clients: int, seconds: float, max_requests: int) -> dict:
    latencies: list[float] = []
    errors = [0]
    failures: dict[str, int] = {}
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    budget = [max_requests]

    def client() -> None:
        mine: list[float] = []
        with httpx.Client(timeout=30) as http:
            while time.monotonic() < stop_at:
                with lock:
                    if budget[0] <= 0:
                        break
                    budget[0] -= 1
                start = time.perf_counter()
                try:
                    response = http.get(url)
                    ok = response.status_code == 200
                except httpx.HTTPError as exc:
                    ok, failures[type(exc).__name__] = False, failures.get(type(exc).__name__, 0) + 1
                mine.append(time.perf_counter() - start)
                if not ok:
                    errors[0] += 1
        with lock:
            latencies.extend(mine)

    started = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--skills", type=int, default=200)
    parser.add_argument("--max-requests", type=int, default=50_000)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="skillyard-bench-"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "skillyard.settings",
        "SKILLYARD_DATA_DIR": str(tmp),
        "SKILLYARD_STATIC_ROOT": str(tmp / "static"),
        "SKILLYARD_STORAGE": "fs",
        "SKILLYARD_THROTTLE_ANON": "100000000/min",
        "SKILLYARD_THROTTLE_USER": "100000000/min",
    }
    env.pop("DATABASE_URL", None)
    server = None
    try:
        key = seed(env, args.skills)
        static = tmp / "static" / "bench" / "skill.zip"
        static.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(tmp / "archives" / key, static)
        port = free_port()
        server = start_gunicorn(env, port, args.workers)
        base = f"http://127.0.0.1:{port}"
        targets = {
            "static file (floor)": f"{base}/static/bench/skill.zip",
            "list": f"{base}/api/v1/skills",
            "detail": f"{base}/api/v1/skills/skill-0007",
            "download": f"{base}/api/v1/skills/skill-0000/versions/1.0.0/download",
        }
        results = {}
        for label, url in targets.items():
            drive(url, clients=args.clients, seconds=min(1.0, args.seconds), max_requests=args.max_requests)  # warm-up
            results[label] = drive(url, clients=args.clients, seconds=args.seconds, max_requests=args.max_requests)
        report(results, args, static.stat().st_size)
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


def report(results: dict, args, archive_size: int) -> None:
    floor = results["static file (floor)"]
    print(
        f"gunicorn --workers {args.workers} (sync), {args.clients} concurrent clients, {args.seconds:g} s per endpoint, "
        f"SQLite, {args.skills} skills, archive {archive_size} bytes"
    )
    print(
        f"{'endpoint':<22}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'errors':>8}{'floor/this req/s':>19}{'this/floor p99':>16}"
    )
    for label, r in results.items():
        print(
            f"{label:<22}{r['rps']:>10.0f}{r['p50_ms']:>10.1f}{r['p99_ms']:>10.1f}{r['errors']:>8}"
            f"{floor['rps'] / r['rps']:>19.2f}{r['p99_ms'] / floor['p99_ms']:>16.2f}"
        )


if __name__ == "__main__":
    main()
