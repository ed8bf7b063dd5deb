"""The soak's load (bench/soak.py): twenty clients publishing, downloading (each body checked
against its sha256), searching and reading details, paced over the run, alternating between the
two web processes (a refused connection is sent once to the other, as a proxy's next-upstream
does, and recorded as one request); and the faults injected at fixed times. Every request is
recorded once, with its endpoint, times and status (0: no answer)."""

from __future__ import annotations

import hashlib
import io
import random
import threading
import time
import zipfile
from dataclasses import dataclass, field

import httpx

from bench.soak_stack import Stack, wait_for, web_up

CLIENTS = 20
GRACE = 5.0  # seconds after a component is back that still count as its fault window
TESTS_EVERY = 50  # one publish in this many carries tests/: a Docker sandbox run per such version
SKILLS_PER_CLIENT = 10  # each client's publishes are versions of its own few skills


@dataclass
class Call:
    endpoint: str
    start: float
    end: float
    status: int  # 0: no answer (refused, reset, timeout)
    retried: bool = False
    error: str = ""  # without an answer: the client's exception (ReadTimeout, RemoteProtocolError, ...)


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
            start, response, error = time.monotonic(), None, ""
            try:
                response = http.request(method, f"http://127.0.0.1:{attempt}{path}", **kw)
            except httpx.ConnectError as exc:
                if not retried:  # nothing reached that process: the other one takes it
                    retried = True
                    continue
                error = type(exc).__name__
            except httpx.HTTPError as exc:
                error = type(exc).__name__
            status = response.status_code if response is not None else 0
            with self.lock:
                self.calls.append(Call(endpoint, start, time.monotonic(), status, retried, error))
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


WEB_KILL = "kill -9 web process 1 (and its server workers)"
WORKER_KILL = "kill -9 Celery worker 1 (and its pool)"
REDIS_RESTART = "restart Redis (no persistence)"


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
        if fault.what == WEB_KILL:
            stack.kill("web1")  # the stack's supervisor starts it again, 3 s later
            time.sleep(1)
            wait_for(lambda: web_up(stack.web_ports[1]))
        elif fault.what == WORKER_KILL:
            stack.kill("worker1")
            wait_for(lambda: stack.procs["worker1"].poll() is None and "worker1" not in stack.killed)
        else:
            stack.restart_redis()
        fault.end = time.monotonic() + GRACE
        back = fault.end - fault.start - GRACE
        print(f"  fault: {fault.what} at {fault.start - load.started:.0f} s, back {back:.1f} s later", flush=True)
