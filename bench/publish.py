"""Publish latency with the publish checks on and off, side by side, and how long the checks take.

Two registries served like `make run` serves one (uvicorn, one process, SQLite, embedded
defaults: with no broker the web process runs the checks itself in the background after
commit), one with `SKILLYARD_CHECKS_ENABLED=0`. The same small skills are published to each,
alternating, one at a time; each publish is timed from request to answer. Twice: spaced (each publish after
the previous one's checks finished, as publishers work) and back to back (each publish while
the previous ones' checks still run in the same process). With the checks on, the time from
each publish until its three checks (scan, manifest, tests in the Docker sandbox) are done.
Loopback only.

    .venv/bin/python bench/publish.py [--skills 20]
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import start_registry  # noqa: E402

CHECKS = ("scan", "manifest", "tests")
DONE = ("done", "error", "skipped")
TEST_PY = (
    "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertEqual(2 + 2, 4)\n"
)


def archive(name: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(
            f"{name}/SKILL.md",
            f"---\nname: {name}\ndescription: Formats a weekly report when the user asks for report {name}.\n"
            f'license: MIT\nmetadata:\n  version: "1.0.0"\n---\n# {name}\n\nRun `scripts/report.py`.\n',
        )
        z.writestr(f"{name}/scripts/report.py", "print('report')\n")
        z.writestr(f"{name}/tests/test_report.py", TEST_PY)
    return buf.getvalue()


def publish(client: httpx.Client, url: str, token: str, name: str) -> tuple[float, float]:
    """(seconds to answer, the monotonic time it was sent)."""
    sent = time.monotonic()
    response = client.post(
        f"{url}/api/v1/skills/{name}/versions",
        headers={"Authorization": f"Bearer {token}"},
        files={"archive": (f"{name}.zip", archive(name), "application/zip")},
        timeout=60,
    )
    response.raise_for_status()
    return time.monotonic() - sent, sent


def finished_checks(client: httpx.Client, url: str, name: str) -> dict | None:
    """The version's checks once all three are finished, else None."""
    checks = client.get(f"{url}/api/v1/skills/{name}/versions/1.0.0").json().get("checks") or {}
    return checks if all((checks.get(c) or {}).get("status") in DONE for c in CHECKS) else None


def wait_for_checks(client: httpx.Client, url: str, names: dict[str, float], outcomes: Counter) -> dict[str, float]:
    """Seconds from each publish until its three checks finished (at most 10 minutes)."""
    done: dict[str, float] = {}
    deadline = time.monotonic() + 600
    while len(done) < len(names) and time.monotonic() < deadline:
        for name in names.keys() - done.keys():
            if checks := finished_checks(client, url, name):
                done[name] = time.monotonic() - names[name]
                outcomes[
                    f"scan {checks['scan'].get('verdict')}, manifest {checks['manifest'].get('source')}, "
                    f"tests {checks['tests'].get('result')}"
                ] += 1
        time.sleep(0.05)
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=20)
    args = parser.parse_args()
    outcomes: Counter = Counter()
    with tempfile.TemporaryDirectory(prefix="skillyard-bench-") as tmp:
        on = start_registry(Path(tmp) / "on", server="uvicorn")
        off = start_registry(Path(tmp) / "off", server="uvicorn", env_extra={"SKILLYARD_CHECKS_ENABLED": "0"})
        try:
            with httpx.Client() as client:
                runs = {}
                for mode in ("spaced", "back-to-back"):
                    times: dict[str, list[float]] = {"on": [], "off": []}
                    sent: dict[str, float] = {}
                    done: dict[str, float] = {}
                    for i in range(args.skills):
                        name = f"{mode[0]}-report-{i:03d}"
                        for label, registry in (("off", off), ("on", on)) if i % 2 else (("on", on), ("off", off)):
                            took, at = publish(client, registry.url, registry.token, name)
                            times[label].append(took)
                            if label == "on":
                                sent[name] = at
                        if mode == "spaced":  # the next publish comes after this one's checks
                            done |= wait_for_checks(client, on.url, {name: sent[name]}, outcomes)
                    if mode == "back-to-back":
                        done = wait_for_checks(client, on.url, sent, outcomes)
                    runs[mode] = (times, done)
        finally:
            on.stop()
            off.stop()
    for mode, (times, done) in runs.items():
        report(mode, times, done, args.skills)
    print("Check outcomes:", "; ".join(f"{count} x {outcome}" for outcome, count in outcomes.most_common()))


def report(mode: str, times: dict[str, list[float]], done: dict[str, float], count: int) -> None:
    def ms(values: list[float], q: int) -> float:
        return 1000 * statistics.quantiles(values, n=100)[q - 1]

    print(f"Publish {count} small skills to each registry, {mode}, alternating (uvicorn, one process)")
    print(f"{'':30s}{'p50 ms':>9s}{'p95 ms':>9s}")
    for label, title in (("off", "checks off"), ("on", "checks on (embedded)")):
        print(f"  {title:28s}{ms(times[label], 50):9.1f}{ms(times[label], 95):9.1f}")
    print(f"  on / off p50: {statistics.median(times['on']) / statistics.median(times['off']):.2f}x")
    if done:
        waits = sorted(done.values())
        print(
            f"  three checks done (scan, manifest, tests in Docker) for {len(done)} of {count}: "
            f"p50 {statistics.median(waits):.1f} s, max {waits[-1]:.1f} s after the publish"
        )
    else:
        print("  no check finished within 10 minutes")


if __name__ == "__main__":
    main()
