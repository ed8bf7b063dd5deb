"""Time to run a trivial skill, per sandbox backend, against its floor, printed as ratios.

Floors: a bare `docker run --rm --network none` of the same image (the docker backend's target
is within 1.2x of it) and `python3 -c pass` on the host. The backends are timed through the
Python API (`run_skill`), i.e. without the CLI's start-up. Usage: python bench/sandbox.py [-n 10]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from skillctl.format import RuntimeSpec
from skillctl.sandbox import RunRequest, run_skill
from skillctl.sandbox.backend import SANDBOX_PATH
from skillctl.sandbox.bwrap_backend import BwrapBackend
from skillctl.sandbox.docker_backend import DockerBackend, default_image


def median_seconds(action, n: int) -> float:
    action()  # warm-up: caches, image layers, the docker client
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def trivial_skill(folder: Path) -> Path:
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: trivial\ndescription: does nothing\n---\n")
    (folder / "scripts" / "main.py").write_text("pass\n")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=10, help="runs per measurement (median)")
    n = parser.parse_args().n
    skill = trivial_skill(Path(tempfile.mkdtemp(prefix="skillyard-bench-")) / "trivial")
    runtime = RuntimeSpec(entrypoint="scripts/main.py")

    def backend_run(name):
        def run():
            result = run_skill(RunRequest(skill_dir=skill, runtime=runtime, backend=name))
            assert result.status == "ok", result

        return run

    # The python3 the sandboxes see (not a pyenv shim that happens to be first on PATH).
    python3 = shutil.which("python3", path=SANDBOX_PATH) or "python3"
    host = median_seconds(lambda: subprocess.run([python3, "-c", "pass"], check=True), n)
    print(f"host python3 -c pass      {host * 1000:8.1f} ms")
    if DockerBackend().available():
        image = default_image()
        bare_cmd = ["docker", "run", "--rm", "--network", "none", image, "python3", "-c", "pass"]
        bare = median_seconds(lambda: subprocess.run(bare_cmd, check=True, capture_output=True), n)
        docker = median_seconds(backend_run("docker"), n)
        print(f"bare docker run ({image}) {bare * 1000:8.1f} ms")
        print(
            f"docker backend            {docker * 1000:8.1f} ms  "
            f"ratio vs bare docker run {docker / bare:.2f}x (target <= 1.20x), vs host {docker / host:.1f}x"
        )
    else:
        print("docker backend            skipped (no daemon answers)")
    if BwrapBackend().available():
        bwrap = median_seconds(backend_run("bwrap"), n)
        print(f"bwrap backend             {bwrap * 1000:8.1f} ms  ratio vs host {bwrap / host:.2f}x")
    else:
        print("bwrap backend             skipped (bubblewrap unavailable)")
    shutil.rmtree(skill.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
