"""Installing 50 skills: `skillctl install` against the floor and against `npx skills add`.

    .venv/bin/python bench/install.py [--skills 50] [--runs 3]

Starts a local registry like the e2e fixture (``tests/e2e/conftest.py``: migrate, a publish
token, SQLite in a temp folder) on a free loopback port, served by gunicorn (``--server
gunicorn``, the default: 4 sync workers) or ``runserver``. Under runserver every keep-alive
request stalls ~40 ms, so floor and skillctl alike mostly measure that stall. Publishes N small
skills (SKILL.md, a script, a reference), then times, best of ``--runs``:

- floor: the same N archives downloaded and unzipped by plain Python in one process (one
  keep-alive HTTP client, ``zipfile.extractall``): no resolution, no checks, no lock.
- skillctl (cold): one ``skillctl install s00 ... sNN`` in a fresh project with an empty cache:
  resolve each range, download, verify sha256, extract with every archive check, validate,
  swap atomically, write skills.toml + skills.lock.
- skillctl (cached): ``skillctl install --frozen`` after deleting ``.agents``: archives come from
  the sha256 cache, no registry request at all.
- npx skills add: the `skills` CLI installing the same N folders from disk in one call, when
  npx is present and the package can be fetched (else the column is skipped, with the reason).

Prints which skillctl it runs (PYTHONPATH decides, for this process and the subprocesses
alike; its bytecode is compiled first, as an installed package has it), the times and the
ratios (lower is better for skillctl).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import httpx
from common import skillctl_code

ROOT = Path(__file__).resolve().parents[1]
SKILLCTL = Path(sys.executable).with_name("skillctl")
NPX_TIMEOUT = 300  # the first run may fetch the package from the npm registry

SKILL_MD = """---
name: {name}
description: Benchmark skill {name}; formats a report when the user asks for report {name}.
version: 1.0.0
license: MIT
---

# {name}

{body}
"""


def load_fixture():
    spec = importlib.util.spec_from_file_location("e2e_conftest", ROOT / "tests/e2e/conftest.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


def make_skills(root: Path, count: int) -> list[Path]:
    folders = []
    for i in range(count):
        name = f"bench-skill-{i:02d}"
        folder = root / name
        (folder / "scripts").mkdir(parents=True)
        (folder / "references").mkdir()
        body = "\n".join(f"{n}. Step {n} of the {name} workflow." for n in range(1, 40))
        (folder / "SKILL.md").write_text(SKILL_MD.format(name=name, body=body))
        (folder / "scripts/run.py").write_text(f"print('{name}')\n" * 50)
        (folder / "references/guide.md").write_text(f"# Guide for {name}\n\n" + "Text. " * 600)
        folders.append(folder)
    return folders


def floor(url: str, names: list[str], dest: Path) -> None:
    with httpx.Client(base_url=url, timeout=60) as client:
        for name in names:
            data = client.get(f"/api/v1/skills/{name}/versions/1.0.0/download").content
            zipfile.ZipFile(io.BytesIO(data)).extractall(dest / name)


def timed(func) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def skillctl_env(home: Path, url: str) -> dict[str, str]:
    env = {
        **os.environ,
        "SKILLYARD_HOME": str(home),
        "SKILLYARD_REGISTRY": url,
        "NO_COLOR": "1",
        "SKILLYARD_USER_SKILLS": str(home / "user-skills"),
    }
    env.pop("SKILLYARD_TOKEN", None)
    return env


def run_checked(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> None:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} ... failed ({proc.returncode}):\n{proc.stderr[-2000:]}")


def bench_skillctl(url: str, names: list[str], work: Path) -> tuple[float, float]:
    home, proj = work / "home", work / "proj"
    proj.mkdir(parents=True)
    env = skillctl_env(home, url)
    cold = timed(lambda: run_checked([str(SKILLCTL), "install", *names], proj, env))
    assert len(list((proj / ".agents/skills").iterdir())) == len(names)
    shutil.rmtree(proj / ".agents")
    cached = timed(lambda: run_checked([str(SKILLCTL), "install", "--frozen"], proj, env))
    return cold, cached


def npx_available(work: Path) -> str | None:
    """None when `npx skills` runs here, else why not."""
    if not shutil.which("npx"):
        return "npx is not installed"
    try:
        proc = subprocess.run(
            ["npx", "--yes", "skills", "--help"],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=NPX_TIMEOUT,
            env=npx_env(),
        )
    except subprocess.TimeoutExpired:
        return f"`npx skills` did not start within {NPX_TIMEOUT}s (offline?)"
    if proc.returncode != 0:
        return f"`npx skills` failed: {(proc.stderr or proc.stdout).strip()[-300:]}"
    return None


def npx_env() -> dict[str, str]:
    return {**os.environ, "DO_NOT_TRACK": "1", "DISABLE_TELEMETRY": "1", "CI": "1"}


def bench_npx(src: Path, work: Path) -> float:
    work.mkdir(parents=True)
    cmd = ["npx", "--yes", "skills", "add", str(src), "--skill", "*", "-a", "codex", "-y"]
    return timed(lambda: run_checked(cmd, work, npx_env(), timeout=NPX_TIMEOUT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--server", choices=["gunicorn", "runserver"], default="gunicorn")
    args = parser.parse_args()
    print(f"skillctl from {skillctl_code()}")
    fixture = load_fixture()
    with tempfile.TemporaryDirectory(prefix="skillyard-bench-") as tmp_name:
        tmp = Path(tmp_name)
        registry = fixture.start_registry(tmp / "registry", server=args.server)
        try:
            folders = make_skills(tmp / "src", args.skills)
            for folder in folders:
                registry.publish(folder)
            names = [f.name for f in folders]
            why_not_npx = npx_available(tmp)
            results: dict[str, list[float]] = {"floor": [], "cold": [], "cached": [], "npx": []}
            for run in range(args.runs):
                dest = tmp / f"floor{run}"
                results["floor"].append(timed(lambda d=dest: floor(registry.url, names, d)))
                cold, cached = bench_skillctl(registry.url, names, tmp / f"skillctl{run}")
                results["cold"].append(cold)
                results["cached"].append(cached)
                if why_not_npx is None:
                    results["npx"].append(bench_npx(tmp / "src", tmp / f"npx{run}"))
        finally:
            registry.stop()
    report(results, args.skills, why_not_npx, args.server)


def report(results: dict[str, list[float]], count: int, why_not_npx: str | None, server: str) -> None:
    best = {k: min(v) for k, v in results.items() if v}
    med = {k: statistics.median(v) for k, v in results.items() if v}
    print(
        f"install {count} skills from a local registry under {server} (best / median of {len(results['floor'])} runs)"
    )
    labels = {
        "floor": "floor: plain Python download + unzip",
        "cold": "skillctl install (cold cache)",
        "cached": "skillctl install --frozen (cached)",
        "npx": "npx skills add (from disk)",
    }
    for key, label in labels.items():
        if key in best:
            print(f"  {label:40} {best[key]:7.2f} s  {med[key]:7.2f} s")
    print(f"  skillctl cold / floor   : {best['cold'] / best['floor']:.2f}x")
    print(f"  skillctl cached / floor : {best['cached'] / best['floor']:.2f}x")
    if "npx" in best:
        print(f"  skillctl cold / npx     : {best['cold'] / best['npx']:.2f}x")
        print(f"  skillctl cached / npx   : {best['cached'] / best['npx']:.2f}x")
    else:
        print(f"  npx skills add: skipped ({why_not_npx})")


if __name__ == "__main__":
    main()
