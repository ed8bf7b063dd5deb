"""The web catalog next to the API serving the same data, in the same run (target: page p50 and
p95 within 2x the API's; page weight under 100 KB without fonts).

Publishes up to ``--skills`` real SKILL.md files of ../shared/corpus (unique valid names) into a
temporary SQLite registry, serves it as `make run` does (uvicorn, one process, publish checks
off: they are not what is measured; with the semantic extra each version's manifest check is run
once while seeding, so search reads stored centroids), then times sequential requests on loopback.

    python bench/catalog.py [--skills 1000] [--requests 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote_plus

import httpx

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("SKILLYARD_CORPUS", ROOT.parent / "shared" / "corpus")) / "skills"

SEED = """
import io, sys, zipfile, django
from pathlib import Path
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from registry import services
from registry.access import Actor
from registry.errors import RegistryError
from skillctl.format import parse_skill_md
from skillctl.routing import semantic
from worker.tasks import run_check_now
vectors = semantic.available()
user = services.user_create(username="bench")
done, seen = 0, set()
for path in sorted(Path(sys.argv[1]).rglob("SKILL.md")):
    report = parse_skill_md(path.read_bytes(), folder_name=path.parent.name)
    if not report.valid or report.name in seen:
        continue
    seen.add(report.name)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"{report.name}/SKILL.md", path.read_bytes())
    buf.seek(0)
    try:
        result = services.skill_version_publish(actor=Actor(user), name=report.name, archive=buf, version=report.version or "1.0.0")
    except RegistryError:
        continue
    if vectors:  # the manifest check's centroid, as a worker stores it (semantic search reads it)
        run_check_now(result.version.id, "manifest")
    done += 1
    if done >= int(sys.argv[2]):
        break
# The compare page's case: a 50-file skill in two versions, half its files edited, one added.
def diff_skill(version, edited):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bench-diff/SKILL.md", f"---\\nname: bench-diff\\ndescription: Fifty files.\\nversion: {version}\\n---\\n# Fifty\\n")
        for i in range(49 + edited):
            body = "".join(f"def f{i}_{j}(x):\\n    return x * {j + (edited if i % 2 else 0)}\\n\\n" for j in range(40))
            z.writestr(f"bench-diff/scripts/group{i % 5}/mod{i}.py", body)
    buf.seek(0)
    services.skill_version_publish(actor=Actor(user), name="bench-diff", archive=buf)
diff_skill("1.0.0", 0)
diff_skill("1.1.0", 1)
print(done, vectors)
"""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Distinct searches, each new to the server (no query vector kept from an earlier request).
FRESH_QUERIES = [
    "resize images for the web",
    "write release notes",
    "debug a failing test",
    "draft an email to my team",
    "convert markdown to pdf",
    "deploy to kubernetes",
    "review my pull request",
    "summarise a meeting",
    "create a slide deck",
    "query a postgres database",
    "scrape a website",
    "translate a document",
    "make a spreadsheet chart",
    "set up a github action",
    "write unit tests",
    "plan a trip",
    "analyse a csv file",
    "design a logo",
    "fix a security issue",
    "search my notes",
    "generate an image",
    "transcribe audio",
    "write a blog post",
    "refactor python code",
    "book a meeting room",
    "check the weather",
    "send a slack message",
    "track expenses",
    "build a react component",
    "optimise sql queries",
    "write a cover letter",
    "monitor server logs",
    "create a docker image",
    "edit a video",
    "read a pdf invoice",
    "manage my calendar",
    "write a technical spec",
    "brainstorm product ideas",
    "learn a new language",
    "back up my files",
]


def timed(client: httpx.Client, url: str | list[str], runs: int) -> tuple[float, float, int]:
    urls = url if isinstance(url, list) else [url]
    if len(urls) == 1:
        client.get(urls[0])  # warm
    times, size = [], 0
    for i in range(runs):
        start = time.perf_counter()
        response = client.get(urls[i % len(urls)])
        times.append((time.perf_counter() - start) * 1000)
        size = len(response.content)
        assert response.status_code == 200, (url, response.status_code)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1], size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "SKILLYARD_DATA_DIR": tmp,
            "SKILLYARD_CHECKS_ENABLED": "0",
            "SKILLYARD_THROTTLE_ANON": "1000000/min",
            "DJANGO_SETTINGS_MODULE": "skillyard.settings",
        }
        env.pop("DATABASE_URL", None)
        published, vectors = (
            subprocess.run(
                [sys.executable, "-c", SEED, str(CORPUS), str(args.skills)],
                env=env,
                cwd=ROOT,
                check=True,
                capture_output=True,
                text=True,
            )
            .stdout.strip()
            .splitlines()[-1]
            .split()
        )
        port = free_port()
        server = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "uvicorn"),
                "skillyard.asgi:application",
                "--port",
                str(port),
                "--log-level",
                "warning",
            ],
            env=env,
            cwd=ROOT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(timeout=30) as client:
                for _ in range(100):
                    try:
                        if client.get(f"{url}/api/v1/skills").status_code == 200:
                            break
                    except httpx.HTTPError:
                        time.sleep(0.2)
                name = client.get(f"{url}/api/v1/skills").json()["results"][0]["name"]
                css = sum(
                    len(client.get(f"{url}{p}").content) for p in ("/static/catalog/site.css", "/catalog/code.css")
                )
                start = time.perf_counter()
                client.get(f"{url}/skills?q=rotate+pdf+pages")
                first = (time.perf_counter() - start) * 1000
                print(
                    f"{published} corpus skills published; {args.requests} sequential requests each; css {css / 1024:.1f} KB"
                )
                search = "semantic + lexical (centroids stored)" if vectors == "True" else "lexical"
                print(f"search: {search}; the first search after start (index, vectors, encoder): {first:.0f} ms")
                print(f"{'what':28} {'page p50/p95 ms':>18} {'api p50/p95 ms':>16} {'p50 ratio':>10} {'page KB':>8}")
                pairs = [
                    ("list", "/skills", "/api/v1/skills"),
                    ("search 'rotate pdf pages'", "/skills?q=rotate+pdf+pages", "/api/v1/skills?q=pdf"),
                    (
                        "search, a new query each",
                        [f"/skills?q={quote_plus(q)}" for q in FRESH_QUERIES],
                        [f"/api/v1/skills?q={quote_plus(q.split()[-1])}" for q in FRESH_QUERIES],
                    ),
                    (f"skill page ({name})", f"/skills/{name}", f"/api/v1/skills/{name}"),
                ]
                diff = "/skills/bench-diff/diff/1.0.0/1.1.0"
                start = time.perf_counter()
                client.get(url + diff)
                cold = (time.perf_counter() - start) * 1000
                print(f"compare page of a 50-file skill, first request (diff computed, then cached): {cold:.0f} ms")
                pairs.append(("compare, 50 files (target 100)", diff, f"/api/v1{diff}"))
                for label, page, api in pairs:
                    pages = [url + p for p in page] if isinstance(page, list) else url + page
                    apis = [url + a for a in api] if isinstance(api, list) else url + api
                    p50, p95, size = timed(client, pages, args.requests)
                    a50, a95, _ = timed(client, apis, args.requests)
                    print(
                        f"{label[:28]:28} {p50:8.1f}/{p95:<8.1f} {a50:7.1f}/{a95:<7.1f} {p50 / a50:9.2f}x "
                        f"{(size + css) / 1024:7.1f}"
                    )
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
