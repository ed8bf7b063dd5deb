"""The catalog's version pages in Debian's Chromium at a desktop (1280 px) and a phone (390 px)
width (issue 38 items 5-10): compare two versions from the versions list, a pending check that
updates the page by itself, copy buttons, tags and categories, an old version pointing to the
newer one, the file tree, numbered wrapped lines and the inert raw file; axe-core finds no serious
or critical violation on any of these pages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_catalog_browser import (  # noqa: F401 (fixtures)
    axe_js,
    axe_serious,
    browser,
    chromium,
    page,
    site,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = (1280, 390)
LONG_LINE = "x = '" + "a" * 400 + "'\n"  # wider than any screen: it must wrap, not scroll the page


def skill_folder(root: Path, version: str, *, frontmatter: str = "", files: dict[str, str] | None = None) -> Path:
    folder = root / f"pdf-tools-{version}" / "pdf-tools"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: pdf-tools\ndescription: Rotate and merge PDF files.\nversion: {version}\n"
        f"category: documents\ntags: [pdf, merge]\n{frontmatter}---\n# PDF tools\nRun scripts/rotate.py.\n"
    )
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


@pytest.fixture
def two_versions(site, tmp_path):  # noqa: F811
    site.publish(skill_folder(tmp_path, "1.0.0", files={"scripts/rotate.py": "print(90)\n", "notes.txt": "old\n"}))
    site.publish(
        skill_folder(
            tmp_path,
            "1.1.0",
            frontmatter="requires:\n  bins: [qpdf]\n",
            files={"scripts/rotate.py": "print(180)\n" + LONG_LINE, "scripts/lib/pages.py": "PAGES = 3\n"},
        )
    )
    return site


def at_width(browser, width: int, **options):  # noqa: ANN001, ANN201, F811
    return browser.new_context(viewport={"width": width, "height": 900}, **options).new_page()


def too_wide(tab) -> bool:  # noqa: ANN001
    content, viewport = tab.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    return content > viewport


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_from_the_versions_list(two_versions, browser, width):  # noqa: F811
    tab = at_width(browser, width)
    tab.goto(f"{two_versions.url}/skills/pdf-tools")
    tab.click("text=compare with 1.0.0")
    tab.wait_for_url("**/skills/pdf-tools/diff/1.0.0/1.1.0")
    main = tab.inner_text("main")
    assert "pdf-tools: 1.0.0 → 1.1.0" in main
    assert "requires.bins" in tab.inner_text(".frontmatter-changes tr.notable")
    assert "+print(180)" in tab.locator(".file-diff[aria-label='scripts/rotate.py'] .gi").all_inner_texts()
    assert "notes.txt" in main and "scripts/lib/pages.py" in main
    assert not too_wide(tab), "the compare page scrolls sideways"


@pytest.mark.parametrize("width", WIDTHS)
def test_an_old_version_points_to_the_newer_one_and_shows_tags_and_versions(two_versions, browser, width):  # noqa: F811
    tab = at_width(browser, width)
    tab.goto(f"{two_versions.url}/skills/pdf-tools/versions/1.0.0")
    tab.click(".newer-version >> text=pdf-tools 1.1.0")
    tab.wait_for_url("**/skills/pdf-tools/versions/1.1.0")
    assert tab.inner_text(".versions li.current .dist-tag") == "latest"
    tab.click(".taxonomy >> text=#merge")
    tab.wait_for_url("**/skills?tag=merge")
    assert "pdf-tools" in tab.inner_text(".cards")
    tab.goto(f"{two_versions.url}/categories")
    tab.click("text=documents")
    tab.wait_for_url("**/skills?category=documents")
    assert tab.input_value("#category") == "documents" and "pdf-tools" in tab.inner_text(".cards")
    assert not too_wide(tab)


@pytest.mark.parametrize("width", WIDTHS)
def test_file_tree_numbered_wrapped_lines_and_the_raw_file(two_versions, browser, width):  # noqa: F811
    tab = at_width(browser, width)
    tab.goto(f"{two_versions.url}/skills/pdf-tools")
    tab.click(".file-tree details >> text=lib/")  # folders fold
    tab.click(".file-tree details >> text=lib/")
    tab.click(".file-tree >> text=rotate.py")
    tab.wait_for_url("**/files/scripts/rotate.py")
    numbers = tab.evaluate(
        "[...document.querySelectorAll('.file-code .line')].map(l => getComputedStyle(l, '::before').content)"
    )
    assert numbers == ["counter(line)"] * 2 or len(numbers) == 2
    assert tab.evaluate("document.querySelectorAll('.file-code .line')[1].getBoundingClientRect().height") > 40
    assert not too_wide(tab), "a long line scrolls the page sideways"
    href = tab.get_attribute("a:text-is('raw')", "href")
    assert href == "/skills/pdf-tools/versions/1.1.0/raw/scripts/rotate.py"
    raw = tab.request.get(two_versions.url + href)
    assert raw.ok and raw.headers["content-type"] == "text/plain; charset=utf-8"
    assert raw.headers["content-security-policy"] == "sandbox; default-src 'none'"
    assert raw.text().startswith("print(180)")


@pytest.mark.parametrize("width", WIDTHS)
def test_copy_buttons_put_the_install_line_on_the_clipboard(two_versions, browser, width):  # noqa: F811
    tab = at_width(browser, width)
    tab.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=two_versions.url)
    tab.goto(f"{two_versions.url}/skills/pdf-tools")
    buttons = tab.locator("button.copy")
    assert buttons.count() == 4
    npx_line = f"npx skills add {two_versions.url} --skill pdf-tools"
    tab.click(f"button.copy[aria-label='Copy: {npx_line}']")
    assert tab.evaluate("navigator.clipboard.readText()") == npx_line
    assert tab.inner_text(f"button.copy[aria-label='Copy: {npx_line}']") == "Copied"
    assert not too_wide(tab)


def test_without_javascript_there_are_no_copy_buttons_and_pending_checks_say_reload(two_versions, browser):  # noqa: F811
    tab = at_width(browser, 390, java_script_enabled=False)
    tab.goto(f"{two_versions.url}/skills/pdf-tools")
    assert tab.locator("button.copy").count() == 0
    assert tab.input_value("#install-cmd") == "skillctl install pdf-tools"
    assert "Checks running: reload the page to see their results." in tab.inner_text("[data-live-checks]")


FINISH_CHECKS = """
import django
django.setup()
from registry import services
from registry.models import VersionCheck
results = {"scan": {"verdict": "pass", "findings": []}, "tests": {"result": "none"},
           "manifest": {"source": "offline", "keywords": []}}
for check in VersionCheck.objects.filter(version__version="1.1.0"):
    services.check_finish(check=check, result=results[check.name])
"""


def test_a_page_with_pending_checks_updates_itself_when_they_finish(two_versions, browser):  # noqa: F811
    tab = at_width(browser, 1280)
    tab.goto(f"{two_versions.url}/skills/pdf-tools")
    live = tab.locator("[data-live-checks]")
    assert "updates itself" in live.inner_text()  # the script took over from "reload"
    env = {
        **os.environ,
        "SKILLYARD_DATA_DIR": str(two_versions.data_dir),
        "DJANGO_SETTINGS_MODULE": "skillyard.settings",
    }
    env.pop("DATABASE_URL", None)
    subprocess.run([sys.executable, "-c", FINISH_CHECKS], cwd=ROOT, env=env, check=True, timeout=120)
    tab.wait_for_selector("aside .badge.pass", timeout=30_000)  # reloaded by live.js, not by the test
    assert tab.locator("[data-live-checks]").count() == 0


def test_the_new_pages_have_no_serious_accessibility_violations(two_versions, browser, axe_js):  # noqa: F811
    problems = {}
    for width in WIDTHS:
        tab = at_width(browser, width, bypass_csp=True)  # lets the test inject axe; the site's CSP stays
        for path in (
            "/skills/pdf-tools/diff/1.0.0/1.1.0",
            "/categories",
            "/skills/pdf-tools/versions/1.0.0",
            "/skills/pdf-tools",
            "/skills/pdf-tools/versions/1.1.0/files/scripts/rotate.py",
            "/skills?tag=pdf",
        ):
            problems[f"{path} at {width}"] = axe_serious(tab, two_versions.url + path, axe_js)
    assert {path: found for path, found in problems.items() if found} == {}
