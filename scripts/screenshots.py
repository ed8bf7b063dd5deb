"""Screenshots of the catalog's main pages at 1280 and 390 px, for the README's tour.

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots]

Starts a registry of its own on a free loopback port (a fresh SQLite data folder, as the e2e tests
do: tests/e2e/conftest.py ``start_registry``), seeds the demo skills (``seed_demo``) and waits for
their checks, publishes a second version of one (for the compare page) and downloads a few, then
drives Debian's Chromium with Playwright over each page. PNGs of the viewport only, at device
scale 1, so each stays well under MAX_PNG_BYTES.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "client")]

WIDTHS = {"desktop": (1280, 800), "phone": (390, 844)}
MAX_PNG_BYTES = 300_000  # the README loads every one of them
CHECKS_WAIT_SECONDS = 120  # the demo skills' scan, manifest and tests, run in the web process
PASSWORD = "demo-screens-1"
# (file name, path, signed in): the pages a new user meets first.
PAGES = [
    ("home", "/", False),
    ("search", "/skills?q=summarise+a+pdf", False),
    ("skill", "/skills/pdf-summary", False),
    ("compare", "/skills/pdf-summary/diff/1.0.0/1.1.0", False),
    ("file", "/skills/pdf-summary/files/SKILL.md", False),
    ("publishers", "/publishers", False),
    ("owner", "/owners/skillyard-demo", False),
    ("api-docs", "/api/v1/docs/", False),
    ("publish", "/publish", True),
    ("tokens", "/account/tokens", True),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="skillyard-screens-") as tmp:
        registry = _start(Path(tmp))
        try:
            _prepare(registry, Path(tmp))
            sizes = _shoot(registry.url, out)
        finally:
            registry.stop()
    for name, size in sorted(sizes.items()):
        print(f"{name}\t{size // 1024} KiB")
    too_big = [name for name, size in sizes.items() if size > MAX_PNG_BYTES]
    if too_big:
        print(f"over {MAX_PNG_BYTES // 1000} kB: {', '.join(too_big)}", file=sys.stderr)
    return 1 if too_big else 0


def _start(tmp: Path):  # noqa: ANN202
    from tests.e2e.conftest import start_registry

    set_password = (
        "from django.contrib.auth import get_user_model as g; u=g().objects.get(username='demo');"
        f"u.set_password('{PASSWORD}'); u.save()"
    )
    return start_registry(
        tmp / "registry",
        username="demo",
        env_extra={"SKILLYARD_SIGNUP": "open"},
        then=[["seed_demo"], ["shell", "-c", set_password]],
    )


def _prepare(registry, tmp: Path) -> None:  # noqa: ANN001
    """A second version of pdf-summary (the compare page), downloads (Most downloaded), and the
    checks of every version finished."""
    folder = tmp / "pdf-summary"
    shutil.copytree(ROOT / "registry" / "demo_skills" / "pdf-summary", folder)
    skill_md = folder / "SKILL.md"
    text = skill_md.read_text().replace("version: 1.0.0", "version: 1.1.0", 1)
    skill_md.write_text(text + "\nMention the page count in the summary.\n")
    registry.publish(folder)
    with httpx.Client(base_url=registry.url, timeout=30) as client:
        for name, times in (("pdf-summary", 3), ("csv-profiler", 2), ("commit-message", 1)):
            for _ in range(times):
                client.get(f"/api/v1/skills/{name}/download").raise_for_status()
        _wait_for_checks(client)


def _wait_for_checks(client: httpx.Client) -> None:
    deadline = time.monotonic() + CHECKS_WAIT_SECONDS
    while time.monotonic() < deadline:
        statuses = [
            check["status"]
            for skill in client.get("/api/v1/skills").json()["results"]
            for version in client.get(f"/api/v1/skills/{skill['name']}/versions").json()
            for check in client.get(f"/api/v1/skills/{skill['name']}/versions/{version['version']}")
            .json()
            .get("checks", {})
            .values()
        ]
        if statuses and all(s not in ("pending", "running") for s in statuses):
            return
        time.sleep(1)
    print("some checks were still running; their pages show them as running", file=sys.stderr)


def _shoot(url: str, out: Path) -> dict[str, int]:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise SystemExit("Debian's chromium is needed (apt install chromium)")
    sizes = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
        for label, (width, height) in WIDTHS.items():
            tab = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1).new_page()
            for name, path, signed_in in PAGES:
                if signed_in and "sessionid" not in {c["name"] for c in tab.context.cookies()}:
                    _sign_in(tab, url)
                tab.goto(url + path)
                target = out / f"{name}-{label}.png"
                tab.screenshot(path=str(target))
                sizes[target.name] = target.stat().st_size
            tab.context.close()
        browser.close()
    return sizes


def _sign_in(tab, url: str) -> None:  # noqa: ANN001
    tab.goto(f"{url}/accounts/login/")
    tab.fill("#id_username", "demo")
    tab.fill("#id_password", PASSWORD)
    tab.click("main button[type=submit]")
    tab.wait_for_url(f"{url}/")


if __name__ == "__main__":
    sys.exit(main())
