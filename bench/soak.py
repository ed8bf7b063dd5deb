"""A soak on the production topology, on this machine, loopback only, with faults.

PostgreSQL (scripts/services.sh's, a fresh database), a Redis of its own (broker + shared cache,
no persistence, as in docker-compose), moto's S3 server, two web processes (each scripts/web.sh,
the production command, with ``--web-workers``), two Celery workers with the checks on (the tests
check runs in the Docker sandbox for the skills that carry tests) and one beat, with the recovery
timings shortened for a run of minutes (bench/soak_stack.py RECOVERY). Twenty clients publish,
download, search and read details, paced over ``--seconds`` (bench/soak_load.py). At 30/50/70 %
of it: kill -9 web process 1 with its server workers (restarted 3 s later, as a supervisor
would), kill -9 Celery worker 1 with its pool (restarted 5 s later), restart Redis.

Then: the checks' queue drains by itself (the beat's sweep takes back what a fault lost: no
manual step); every published version is read back (API sha256 and ``manage.py
verify_storage``); /metrics is compared with the clients' counts; and each API endpoint is driven
alone by the 20 clients next to a static file of the same size (the floor), on the same
processes. Bounded: every wait has a deadline.

    .venv/bin/python bench/soak.py [--seconds 600] [--publishes 2000] [--downloads 20000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.api import drive  # noqa: E402 (the same floor measurement as bench/api.py)
from bench.soak_load import (  # noqa: E402
    CLIENTS,
    REDIS_RESTART,
    WEB_KILL,
    WORKER_KILL,
    Call,
    Fault,
    Load,
    inject,
    make_plan,
    skill_archive,
)
from bench.soak_stack import Stack, build_stack, drop_database, manage, wait_for, web_up  # noqa: E402

# --- after the load ------------------------------------------------------------------------


def check_counts(env: dict[str, str]) -> dict[str, int]:
    """Checks by status, and the versions stored (``versions``), read from the database."""
    script = (
        "import django, json; django.setup()\n"
        "from django.db.models import Count\n"
        "from registry.models import SkillVersion, VersionCheck\n"
        "rows = dict(VersionCheck.objects.values_list('status').annotate(n=Count('id')))\n"
        "print(json.dumps({**rows, 'versions': SkillVersion.objects.count()}))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def drain(env: dict[str, str], timeout: float) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while True:
        counts = check_counts(env)
        waiting = counts.get("pending", 0) + counts.get("running", 0)
        if not waiting or time.monotonic() > deadline:
            return counts
        time.sleep(5)


def versions_lost_or_broken(load: Load, port: int) -> tuple[int, int]:
    lost = broken = 0
    with httpx.Client(timeout=30) as http:
        for (name, version), sha in load.published.items():
            response = http.get(f"http://127.0.0.1:{port}/api/v1/skills/{name}/versions/{version}")
            if response.status_code != 200:
                lost += 1
            elif response.json().get("sha256") != sha:
                broken += 1
    return lost, broken


def percentiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return (values[0] * 1000, values[0] * 1000) if values else (0.0, 0.0)
    q = statistics.quantiles(values, n=100)
    return q[49] * 1000, q[98] * 1000


def in_window(call: Call, faults: list[Fault]) -> bool:
    return any(call.start < f.end and call.end > f.start for f in faults)


def floor_phase(stack: Stack, load: Load, seconds: float) -> dict[str, dict]:
    """Each endpoint alone, 10 clients per web process, next to a static file of the same size."""
    (name, version), _ = next(iter(load.published.items()))
    paths = {
        "static file (floor)": "/static/soak/skill.zip",
        "download": f"/api/v1/skills/{name}/versions/{version}/download",
        "detail": f"/api/v1/skills/{name}",
        "search": "/api/v1/skills?q=soak-c3",
        "list": "/api/v1/skills",
    }
    results = {}
    for label, path in paths.items():
        runs: list[dict] = []
        threads = [
            threading.Thread(
                target=lambda p=port, path=path, runs=runs: runs.append(
                    drive(f"http://127.0.0.1:{p}{path}", clients=CLIENTS // 2, seconds=seconds, max_requests=10**9)
                )
            )
            for port in stack.web_ports
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        results[label] = {"rps": sum(r["rps"] for r in runs), "p50_ms": max(r["p50_ms"] for r in runs)}
        results[label]["p99_ms"] = max(r["p99_ms"] for r in runs)
    return results


def metric_totals(port: int) -> dict[str, float]:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text
    wanted = ("skillyard_publishes_total", "skillyard_downloads_total", "skillyard_cache_errors_total")
    return {line.split()[0]: float(line.split()[1]) for line in text.splitlines() if line.startswith(wanted)}


def log_lines(stack: Stack, *needles: str) -> int:
    """Lines of every process's log that contain one of ``needles``."""
    found = 0
    for log in stack.tmp.glob("*.log"):
        found += sum(1 for line in log.read_text(errors="replace").splitlines() if any(n in line for n in needles))
    return found


# --- the run -------------------------------------------------------------------------------


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="length of the load (faults at 30/50/70%%)")
    parser.add_argument("--publishes", type=int, default=2000)
    parser.add_argument("--downloads", type=int, default=20000)
    parser.add_argument("--searches", type=int, default=2000)
    parser.add_argument("--details", type=int, default=2000)
    parser.add_argument("--web-workers", type=int, default=2, help="SKILLYARD_WEB_WORKERS of each web process")
    parser.add_argument("--drain-seconds", type=float, default=300.0, help="longest wait for the checks after the load")
    parser.add_argument("--floor-seconds", type=float, default=5.0)
    parser.add_argument("--keep", action="store_true", help="keep the folder with every process's log")
    return parser.parse_args()


def start_processes(stack: Stack) -> None:
    for i in (0, 1):
        stack.web(i)
        stack.worker(i)
    stack.beat()
    for port in stack.web_ports:
        wait_for(lambda p=port: web_up(p))
    threading.Thread(target=stack.supervise, daemon=True).start()


def run_load(stack: Stack, token: str, args: argparse.Namespace) -> tuple[Load, list[Fault]]:
    plan = make_plan(args.publishes, args.downloads, args.searches, args.details)
    load = Load(ports=stack.web_ports, token=token, plan=plan, seconds=args.seconds)
    faults = [Fault(WEB_KILL, args.seconds * 0.3), Fault(WORKER_KILL, args.seconds * 0.5)]
    faults.append(Fault(REDIS_RESTART, args.seconds * 0.7))
    print(f"soak: {len(plan)} operations over {args.seconds:.0f} s, {CLIENTS} clients, in {stack.tmp}", flush=True)
    injector = threading.Thread(target=inject, args=(stack, load, faults), daemon=True)
    load_thread = threading.Thread(target=load.run)
    load_thread.start()
    time.sleep(1)
    injector.start()
    load_thread.join()
    injector.join(60)
    return load, faults


def main() -> None:
    args = arguments()
    began = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="skillyard-soak-"))
    stack: Stack | None = None
    database = ""
    try:
        stack, database, token = build_stack(tmp, web_workers=args.web_workers)
        static = tmp / "static" / "soak" / "skill.zip"
        static.parent.mkdir(parents=True, exist_ok=True)
        static.write_bytes(skill_archive("soak-c0-s0", "1.0.1", with_tests=False))
        start_processes(stack)
        load, faults = run_load(stack, token, args)
        load_seconds = time.monotonic() - load.started
        retried = load.retry_failed_publishes()
        at_end = check_counts(stack.env)
        drain_started = time.monotonic()
        drained = drain(stack.env, args.drain_seconds)
        drain_seconds = time.monotonic() - drain_started
        lost, broken = versions_lost_or_broken(load, stack.web_ports[0])
        verify = manage(stack.env, "verify_storage", "--quiet").strip().splitlines()[-1]
        totals = metric_totals(stack.web_ports[0])
        floor = floor_phase(stack, load, args.floor_seconds)
        pg_refusals = log_lines(stack, "too many clients", "remaining connection slots")
        report(args, load, faults, load_seconds, retried, (at_end, drained, drain_seconds), (lost, broken, verify),
               totals, floor)  # fmt: skip
        print(f"PostgreSQL refusals in the logs: {pg_refusals}")
        print(f"processes that exited by themselves (restarted by the supervisor): {stack.crashes or 'none'}")
        print(f"whole run: {time.monotonic() - began:.0f} s")
    finally:
        if stack is not None:
            stack.stop()
        if database:
            drop_database(database)
        if args.keep:
            print(f"logs kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def report(args, load, faults, load_seconds, retried, checks, integrity, totals, floor) -> None:  # noqa: ANN001
    at_end, drained, drain_seconds = checks
    lost, broken, verify = integrity
    calls = load.calls
    answered = {e: sum(1 for c in calls if c.endpoint == e and 200 <= c.status < 400) for e in ("publish", "download")}
    unanswered_downloads = sum(1 for c in calls if c.endpoint == "download" and c.status == 0)
    print(f"\nload: {load_seconds:.0f} s, {len(calls)} requests; planned {len(load.plan)}, sent {load.next_op}")
    print(
        f"publishes stored: {len(load.published)} (planned {args.publishes}; {retried} after a retry of the same bytes)"
    )
    print(
        f"downloads answered 200: {answered['download']} (planned {args.downloads}); bodies not matching sha256: {load.bad_downloads}"
    )
    print(f"metrics: {totals}")
    print(f"  versions in the database {at_end['versions']}; downloads without an answer {unanswered_downloads}")
    print(f"versions lost: {lost}, broken: {broken}; verify_storage: {verify}")
    waiting = {k: v for k, v in at_end.items() if k != "versions"}
    print(f"checks at the end of the load: {waiting}")
    after = {k: v for k, v in drained.items() if k != "versions"}
    print(f"checks after {drain_seconds:.0f} s of drain (beat's sweep only, no manual step): {after}")
    print_failures(calls, faults)
    print(f"\n{'endpoint (soak, all requests)':<32}{'count':>8}{'p50 ms':>10}{'p99 ms':>10}")
    for endpoint in ("publish", "download", "search", "detail"):
        p50, p99 = percentiles([c.end - c.start for c in calls if c.endpoint == endpoint])
        print(f"{endpoint:<32}{sum(c.endpoint == endpoint for c in calls):>8}{p50:>10.1f}{p99:>10.1f}")
    base = floor["static file (floor)"]["rps"]
    print(f"\n{'alone, 20 clients over both':<32}{'req/s':>8}{'p50 ms':>10}{'p99 ms':>10}{'floor/this':>12}")
    for label, r in floor.items():
        print(f"{label:<32}{r['rps']:>8.0f}{r['p50_ms']:>10.1f}{r['p99_ms']:>10.1f}{base / r['rps']:>12.2f}")


def print_failures(calls: list[Call], faults: list[Fault]) -> None:
    outside = [c for c in calls if not in_window(c, faults)]
    inside = [c for c in calls if in_window(c, faults)]
    for label, group in (("outside the fault windows", outside), ("inside them", inside)):
        fives = sum(1 for c in group if c.status >= 500)
        none = sum(1 for c in group if c.status == 0)
        again = sum(c.retried for c in group)
        print(
            f"{label}: {len(group)} requests, 5xx {fives}, no answer {none}, sent again to the other web process {again}"
        )
    errors: dict[str, int] = {}
    for c in calls:
        if c.status >= 500 or c.status == 0:
            key = f"{c.endpoint} {c.status or f'no answer ({c.error})'}"
            errors[key] = errors.get(key, 0) + 1
    print(f"failures by endpoint and status: {dict(sorted(errors.items()))}")
    began = min((c.start for c in calls), default=0.0)
    for c in sorted((c for c in outside if c.status >= 500 or c.status == 0), key=lambda c: c.start):
        took = c.end - c.start
        print(f"  outside: {c.endpoint} {c.status or c.error} at {c.start - began:.0f} s, after {took:.1f} s")
    for fault in faults:
        window = [c for c in calls if c.start < fault.end and c.end > fault.start]
        fives, none = sum(c.status >= 500 for c in window), sum(c.status == 0 for c in window)
        print(f"  {fault.what}: {len(window)} requests in its window, 5xx {fives}, no answer {none}")


if __name__ == "__main__":
    main()
