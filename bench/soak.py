"""A soak on the production topology, on this machine, loopback only, with faults.

PostgreSQL (scripts/services.sh's, a fresh database), a Redis of its own (broker + shared cache,
no persistence, as in docker-compose), moto's S3 server, two web processes (uvicorn, one process
each, on two ports; clients alternate between them and, on a refused connection, retry once on
the other, as a proxy's next-upstream does), two Celery workers with the checks on (the tests
check runs in the Docker sandbox for the skills that carry tests). Twenty clients publish,
download (each body checked against its sha256), search and read details, paced over
``--seconds``. At fixed times: kill -9 one web process (restarted 3 s later, as a supervisor
would), kill -9 one Celery worker with its pool (restarted 5 s later), restart Redis.

Then: the checks' queue drains; checks a killed worker left running are re-queued the way the
beat's sweep does (``rerun_checks --stale``, with a short threshold since the run is short);
every published version is read back (API sha256 and ``manage.py verify_storage``); and each
API endpoint is driven alone by the 20 clients next to a static file of the same size (the
floor), on the same processes. Bounded: every wait has a deadline, the whole run ~12 minutes.

    .venv/bin/python bench/soak.py [--seconds 480] [--publishes 2000] [--downloads 20000]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import boto3
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.api import drive, free_port  # noqa: E402 (the same floor measurement as bench/api.py)

POSTGRES = os.environ.get("SKILLYARD_TEST_POSTGRES_URL", "postgres://skillyard:skillyard@127.0.0.1:5432/skillyard")
BIN = Path(sys.executable).parent
CLIENTS = 20
GRACE = 5.0  # seconds after a component is back that still count as its fault window
TESTS_EVERY = 50  # one publish in this many carries tests/: a Docker sandbox run per such version
SKILLS_PER_CLIENT = 10  # each client's publishes are versions of its own few skills


# --- the processes -------------------------------------------------------------------------


@dataclass
class Stack:
    tmp: Path
    env: dict[str, str]
    redis_port: int
    web_ports: list[int]
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    def start(self, label: str, command: list[str], *, group: bool = False) -> None:
        log = (self.tmp / f"{label}.log").open("a")
        self.procs[label] = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=group
        )

    def kill(self, label: str, *, group: bool = False) -> None:
        proc = self.procs[label]
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.send_signal(signal.SIGKILL)
        proc.wait(10)

    def web(self, index: int) -> None:
        uvicorn = [str(BIN / "uvicorn"), "skillyard.asgi:application", "--host", "127.0.0.1"]
        self.start(f"web{index}", [*uvicorn, "--port", str(self.web_ports[index]), "--no-access-log"])

    def worker(self, index: int) -> None:
        celery = [str(BIN / "celery"), "-A", "worker", "worker", "--loglevel", "WARNING", "--concurrency", "2"]
        self.start(f"worker{index}", [*celery, "-n", f"soak{index}@%h"], group=True)

    def redis(self) -> None:
        port = str(self.redis_port)
        self.start("redis", ["redis-server", "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no"])
        wait_for(lambda: subprocess.run(["redis-cli", "-p", port, "ping"], capture_output=True).stdout == b"PONG\n")

    def stop(self) -> None:
        for label, proc in self.procs.items():
            if proc.poll() is None:
                if label.startswith("worker"):
                    os.killpg(proc.pid, signal.SIGTERM)
                else:
                    proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()


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


def build_stack(tmp: Path) -> tuple[Stack, str]:
    database = f"skillyard_soak_{uuid.uuid4().hex[:8]}"
    psql(POSTGRES.rsplit("/", 1)[1], f"CREATE DATABASE {database}")
    s3_port, redis_port = free_port(), free_port()
    env = {
        **os.environ,
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
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    stack = Stack(tmp=tmp, env=env, redis_port=redis_port, web_ports=[free_port(), free_port()])
    stack.start("s3", [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(s3_port)])
    s3 = boto3.client("s3", endpoint_url=env["SKILLYARD_S3_ENDPOINT_URL"], region_name="us-east-1",
                      aws_access_key_id="soak", aws_secret_access_key="soak")  # fmt: skip
    wait_for(lambda: s3.list_buckets() is not None)
    s3.create_bucket(Bucket="soak")
    stack.redis()
    manage(env, "migrate", "--noinput", "-v0")
    issued = manage(env, "issue_token", "soak", "--scope", "publish", "--create-user").split()
    token = next(word for word in issued if word.startswith("sky_"))
    return stack, database + " " + token


# --- the load ------------------------------------------------------------------------------


@dataclass
class Call:
    endpoint: str
    start: float
    end: float
    status: int  # 0: no answer (refused, reset, timeout)
    retried: bool = False


@dataclass
class Load:
    ports: list[int]
    token: str
    plan: list[str]
    seconds: float
    started: float = 0.0
    calls: list[Call] = field(default_factory=list)
    published: dict[tuple[str, str], str] = field(default_factory=dict)  # (name, version) -> sha256
    failed_publishes: list[tuple[str, str, bytes]] = field(default_factory=list)
    bad_downloads: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    next_op: int = 0

    def run(self) -> None:
        self.started = time.monotonic()
        threads = [threading.Thread(target=self._client, args=(i,), daemon=True) for i in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(self.seconds + 120)

    def _take(self) -> tuple[int, str] | None:
        with self.lock:
            if self.next_op >= len(self.plan) or time.monotonic() > self.started + self.seconds:
                return None
            index, self.next_op = self.next_op, self.next_op + 1
        due = self.started + self.seconds * index / len(self.plan)  # paced over the whole run
        time.sleep(max(0.0, due - time.monotonic()))
        return index, self.plan[index]

    def _client(self, me: int) -> None:
        rng = random.Random(me)
        versions: dict[str, int] = {}
        with httpx.Client(timeout=60) as http:
            while (taken := self._take()) is not None:
                index, op = taken
                port = self.ports[index % 2]
                if op == "publish":
                    self._publish(http, rng, me, versions, port)
                elif op == "download":
                    self._download(http, rng, port)
                elif op == "search":
                    self._call(http, "search", port, "GET", f"/api/v1/skills?q=soak-c{rng.randrange(CLIENTS)}")
                else:
                    self._call(http, "detail", port, "GET", f"/api/v1/skills/{self._some_name(rng)}")

    def _call(
        self, http: httpx.Client, endpoint: str, port: int, method: str, path: str, **kw
    ) -> httpx.Response | None:
        retried = False
        for attempt in (port, self.ports[1 - self.ports.index(port)]):
            start = time.monotonic()
            try:
                response = http.request(method, f"http://127.0.0.1:{attempt}{path}", **kw)
            except httpx.ConnectError:
                if not retried:  # nothing reached that process: the other one takes it
                    retried = True
                    continue
                response = None
            except httpx.HTTPError:
                response = None
            with self.lock:
                self.calls.append(
                    Call(endpoint, start, time.monotonic(), response.status_code if response else 0, retried)
                )
            return response
        return None

    def _publish(self, http: httpx.Client, rng: random.Random, me: int, versions: dict[str, int], port: int) -> None:
        name = f"soak-c{me}-s{rng.randrange(SKILLS_PER_CLIENT)}"
        versions[name] = versions.get(name, 0) + 1
        version = f"1.0.{versions[name]}"
        data = skill_archive(name, version, with_tests=rng.randrange(TESTS_EVERY) == 0)
        self._send_publish(http, name, version, data, port)

    def _send_publish(self, http: httpx.Client, name: str, version: str, data: bytes, port: int) -> bool:
        files = {"archive": (f"{name}.zip", data, "application/zip")}
        headers = {"Authorization": f"Bearer {self.token}"}
        response = self._call(
            http, "publish", port, "POST", f"/api/v1/skills/{name}/versions", files=files, headers=headers
        )
        with self.lock:
            if response is not None and response.status_code in (200, 201):
                self.published[(name, version)] = hashlib.sha256(data).hexdigest()
                return True
            self.failed_publishes.append((name, version, data))
        return False

    def retry_failed_publishes(self) -> int:
        """What a client does after an error: the same bytes again (identical → 200)."""
        failed, self.failed_publishes = self.failed_publishes, []
        with httpx.Client(timeout=60) as http:
            return sum(self._send_publish(http, name, version, data, self.ports[0]) for name, version, data in failed)

    def _some_name(self, rng: random.Random) -> str:
        with self.lock:
            keys = list(self.published) if self.published else [("soak-c0-s0", "")]
        return rng.choice(keys)[0]

    def _download(self, http: httpx.Client, rng: random.Random, port: int) -> None:
        with self.lock:
            if not self.published:
                return
            (name, version), sha = rng.choice(list(self.published.items()))
        response = self._call(http, "download", port, "GET", f"/api/v1/skills/{name}/versions/{version}/download")
        if response is not None and response.status_code == 200 and hashlib.sha256(response.content).hexdigest() != sha:
            with self.lock:
                self.bad_downloads += 1


def skill_archive(name: str, version: str, *, with_tests: bool) -> bytes:
    """A small real skill (~10 KiB): SKILL.md, a script, some data; a passing unittest when asked."""
    rng = random.Random(f"{name}@{version}")
    files = {
        "SKILL.md": f"---\nname: {name}\ndescription: Soak skill {name}. Use it to convert soak files "
        f"into reports.\nversion: {version}\n---\n\n# {name}\n\n" + "Run the script.\n" * 20,
        "scripts/run.py": "import sys\nprint(sys.argv)\n",
        "assets/data.txt": rng.randbytes(4096).hex(),
    }
    if with_tests:
        files["tests/test_run.py"] = (
            "import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertTrue(True)\n"
        )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, text in sorted(files.items()):
            archive.writestr(zipfile.ZipInfo(f"{name}/{path}", (2020, 1, 1, 0, 0, 0)), text)
    return buffer.getvalue()


def make_plan(publishes: int, downloads: int, searches: int, details: int, seed: int = 7) -> list[str]:
    plan = ["publish"] * publishes + ["download"] * downloads + ["search"] * searches + ["detail"] * details
    random.Random(seed).shuffle(plan)
    # The first publishes go first: downloads need something published.
    head = ["publish"] * min(publishes, CLIENTS * 2)
    for _ in head:
        plan.remove("publish")
    return head + plan


# --- faults --------------------------------------------------------------------------------


@dataclass
class Fault:
    what: str
    at: float  # seconds into the load
    start: float = 0.0  # monotonic
    end: float = 0.0  # back up, plus GRACE


def inject(stack: Stack, load: Load, faults: list[Fault]) -> None:
    for fault in faults:
        time.sleep(max(0.0, load.started + fault.at - time.monotonic()))
        fault.start = time.monotonic()
        if fault.what == "kill -9 web process 1":
            stack.kill("web1")
            time.sleep(3)
            stack.web(1)
            wait_for(lambda: web_up(stack.web_ports[1]))
        elif fault.what == "kill -9 Celery worker 1 (and its pool)":
            stack.kill("worker1", group=True)
            time.sleep(5)
            stack.worker(1)
        else:
            stack.procs["redis"].terminate()
            stack.procs["redis"].wait(10)
            time.sleep(2)
            stack.redis()
        fault.end = time.monotonic() + GRACE
        print(
            f"  fault: {fault.what} at {fault.start - load.started:.0f} s, back {fault.end - fault.start - GRACE:.1f} s later"
        )


# --- after the load ------------------------------------------------------------------------


def check_counts(env: dict[str, str]) -> dict[str, int]:
    script = (
        "import django, json; django.setup()\n"
        "from django.db.models import Count\n"
        "from registry.models import VersionCheck\n"
        "rows = VersionCheck.objects.values_list('status').annotate(n=Count('id'))\n"
        "print(json.dumps(dict(rows)))\n"
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
    wanted = ("skillyard_publishes_total", "skillyard_downloads_total")
    return {line.split()[0]: float(line.split()[1]) for line in text.splitlines() if line.startswith(wanted)}


# --- the run -------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=480.0, help="length of the load (faults at 30/50/70%%)")
    parser.add_argument("--publishes", type=int, default=2000)
    parser.add_argument("--downloads", type=int, default=20000)
    parser.add_argument("--searches", type=int, default=2000)
    parser.add_argument("--details", type=int, default=2000)
    parser.add_argument("--drain-seconds", type=float, default=180.0)
    parser.add_argument("--floor-seconds", type=float, default=5.0)
    parser.add_argument("--keep", action="store_true", help="keep the folder with every process's log")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="skillyard-soak-"))
    stack: Stack | None = None
    database = ""
    try:
        stack, ids = build_stack(tmp)
        database, token = ids.split()
        static = tmp / "static" / "soak" / "skill.zip"
        static.parent.mkdir(parents=True, exist_ok=True)
        static.write_bytes(skill_archive("soak-c0-s0", "1.0.1", with_tests=False))
        for i in (0, 1):
            stack.web(i)
            stack.worker(i)
        for port in stack.web_ports:
            wait_for(lambda p=port: web_up(p))
        plan = make_plan(args.publishes, args.downloads, args.searches, args.details)
        load = Load(ports=stack.web_ports, token=token, plan=plan, seconds=args.seconds)
        faults = [
            Fault("kill -9 web process 1", args.seconds * 0.3),
            Fault("kill -9 Celery worker 1 (and its pool)", args.seconds * 0.5),
            Fault("restart Redis", args.seconds * 0.7),
        ]
        print(f"soak: {len(plan)} operations over {args.seconds:.0f} s, {CLIENTS} clients, in {tmp}")
        injector = threading.Thread(target=inject, args=(stack, load, faults), daemon=True)
        load_thread = threading.Thread(target=load.run)
        load_thread.start()
        time.sleep(1)
        injector.start()
        load_thread.join()
        injector.join(60)
        load_seconds = time.monotonic() - load.started
        retried = load.retry_failed_publishes()
        at_end = check_counts(stack.env)
        drained = drain(stack.env, args.drain_seconds)
        swept = manage(stack.env, "rerun_checks", "--stale", "--stale-after", "30").strip()
        after_sweep = drain(stack.env, 120)
        lost, broken = versions_lost_or_broken(load, stack.web_ports[0])
        verify = manage(stack.env, "verify_storage", "--quiet").strip().splitlines()[-1]
        totals = metric_totals(stack.web_ports[0])
        floor = floor_phase(stack, load, args.floor_seconds)
        report(args, load, faults, load_seconds, retried, (at_end, drained, swept, after_sweep), (lost, broken, verify),
               totals, floor)  # fmt: skip
    finally:
        if stack is not None:
            stack.stop()
        if database:
            psql(POSTGRES.rsplit("/", 1)[1], f"DROP DATABASE IF EXISTS {database}")
        if args.keep:
            print(f"logs kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def report(args, load, faults, load_seconds, retried, checks, integrity, totals, floor) -> None:  # noqa: ANN001
    at_end, drained, swept, after_sweep = checks
    lost, broken, verify = integrity
    calls = load.calls
    done = {e: sum(1 for c in calls if c.endpoint == e and 200 <= c.status < 400) for e in ("publish", "download")}
    print(f"\nload: {load_seconds:.0f} s, {len(calls)} requests; planned {len(load.plan)}, sent {load.next_op}")
    print(
        f"publishes stored: {len(load.published)} (planned {args.publishes}; {retried} after a retry of the same bytes)"
    )
    print(
        f"downloads answered 200: {done['download']} (planned {args.downloads}); bodies not matching sha256: {load.bad_downloads}"
    )
    print(f"metrics: {totals}")
    print(f"versions lost: {lost}, broken: {broken}; verify_storage: {verify}")
    print(f"checks at the end of the load: {at_end}")
    print(f"checks after draining: {drained}; then rerun_checks --stale: {swept}; after: {after_sweep}")
    outside = [c for c in calls if not in_window(c, faults)]
    inside = [c for c in calls if in_window(c, faults)]
    for label, group in (("outside the fault windows", outside), ("inside them", inside)):
        fives = sum(1 for c in group if c.status >= 500)
        none = sum(1 for c in group if c.status == 0)
        print(
            f"{label}: {len(group)} requests, 5xx {fives}, no answer {none}, sent again to the other web process {sum(c.retried for c in group)}"
        )
    errors: dict[str, int] = {}
    for c in calls:
        if c.status >= 500 or c.status == 0:
            key = f"{c.endpoint} {c.status or 'no answer'}"
            errors[key] = errors.get(key, 0) + 1
    print(f"failures by endpoint and status: {dict(sorted(errors.items()))}")
    for fault in faults:
        window = [c for c in calls if c.start < fault.end and c.end > fault.start]
        print(
            f"  {fault.what}: {len(window)} requests in its window, 5xx {sum(c.status >= 500 for c in window)}, no answer {sum(c.status == 0 for c in window)}"
        )
    print(f"\n{'endpoint (soak, all requests)':<32}{'count':>8}{'p50 ms':>10}{'p99 ms':>10}")
    for endpoint in ("publish", "download", "search", "detail"):
        p50, p99 = percentiles([c.end - c.start for c in calls if c.endpoint == endpoint])
        print(f"{endpoint:<32}{sum(c.endpoint == endpoint for c in calls):>8}{p50:>10.1f}{p99:>10.1f}")
    base = floor["static file (floor)"]["rps"]
    print(f"\n{'alone, 20 clients over both':<32}{'req/s':>8}{'p50 ms':>10}{'p99 ms':>10}{'floor/this':>12}")
    for label, r in floor.items():
        print(f"{label:<32}{r['rps']:>8.0f}{r['p50_ms']:>10.1f}{r['p99_ms']:>10.1f}{base / r['rps']:>12.2f}")


if __name__ == "__main__":
    main()
