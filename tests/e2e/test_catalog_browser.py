"""The catalog in a real browser: Playwright driving Debian's Chromium (never a downloaded one)
against a live registry: browse, search, skill page, file view, sign in, publish through the
form (a good and a refused archive), tokens, privacy, and a hostile SKILL.md opening no dialog."""

from __future__ import annotations

import io
import os
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.e2e.conftest import start_registry
from tests.e2e.test_install_registry import make

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HOSTILE = """---
name: evil-skill
description: Looks harmless.
version: 1.0.0
homepage: javascript:alert('homepage')
---
# Evil
<script>alert('script')</script>
<img src=x onerror="alert('img')">
[click me](javascript:alert('link'))
<iframe src="javascript:alert('frame')"></iframe>
<svg onload="alert('svg')"></svg>
"""


def zip_of(name: str, text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{name}/SKILL.md", text)
    return buffer.getvalue()


@pytest.fixture
def site(tmp_path):
    set_password = (
        "from django.contrib.auth import get_user_model as g; u=g().objects.get(username='alice');"
        "u.set_password('pw-alice-123'); u.save()"
    )
    reg = start_registry(
        tmp_path / "registry",
        env_extra={"SKILLYARD_CHECKS_ENABLED": "0", "SKILLYARD_SIGNUP": "open"},
        then=[["shell", "-c", set_password]],
    )
    yield reg
    reg.stop()


@pytest.fixture(scope="module")
def chromium(chromium_path):
    """Debian's Chromium, headless, started once for the module (contexts keep tests apart)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(
            executable_path=chromium_path,
            args=[
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield launched
        launched.close()


@pytest.fixture
def browser(chromium):
    """The browser; each test opens the contexts (options) it needs, closed after the test: a
    context shares no cookies, storage or cache with another."""
    yield chromium
    for context in chromium.contexts:
        context.close()


@pytest.fixture
def page(browser):
    tab = browser.new_context().new_page()
    tab.dialogs = []
    tab.on("dialog", lambda dialog: (tab.dialogs.append(dialog.message), dialog.dismiss()))
    return tab


def sign_in(page, url: str) -> None:
    page.goto(f"{url}/accounts/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "pw-alice-123")
    page.click("button[type=submit] >> text=Sign in")
    page.wait_for_url(f"{url}/")


def test_browse_search_skill_page_and_file_view(site, page, tmp_path):
    site.publish(make(tmp_path, "pdf-rotate", "1.0.0", {"scripts/rotate.py": "print('rotating')\n"}))
    page.goto(site.url + "/")
    assert "pdf-rotate" in page.content()
    page.fill("#home-q", "greets people politely")  # the home page's one search box
    page.press("#home-q", "Enter")
    page.wait_for_url("**/skills?q=*")
    page.click("text=pdf-rotate")
    assert page.input_value("#install-cmd") == "skillctl install pdf-rotate"
    page.click(".file-tree a >> text=rotate.py")  # the file tree: scripts/ holds rotate.py
    assert "rotating" in page.inner_text("pre.code")


def test_hostile_skill_md_opens_no_dialog(site, page):
    import httpx

    response = httpx.post(
        f"{site.url}/api/v1/skills/evil-skill/versions",
        headers={"Authorization": f"Bearer {site.token}"},
        files={"archive": ("e.zip", zip_of("evil-skill", HOSTILE), "application/zip")},
        timeout=30,
    )
    assert response.status_code == 201
    page.goto(f"{site.url}/skills/evil-skill")
    page.wait_for_load_state("load")
    for link in page.query_selector_all(".skill-body a"):
        link.click(no_wait_after=True)
    assert "Homepage: javascript:alert('homepage')" in page.inner_text("aside")  # text, not a link
    assert page.evaluate("[...document.links].map(a => a.protocol).filter(p => !/^https?:$/.test(p))") == []
    page.click("text=javascript:alert('homepage')", no_wait_after=True)
    page.wait_for_timeout(500)
    assert page.dialogs == []


def test_sign_in_publish_through_the_form_and_tokens(site, page, tmp_path):
    sign_in(page, site.url)
    refused = tmp_path / "refused.zip"
    refused.write_bytes(zip_of("refused", "---\nname: Not A Name\n---\n"))
    page.goto(f"{site.url}/publish")
    page.set_input_files("#id_archive", str(refused))
    page.click("button >> text=Publish")
    assert "Not published" in page.inner_text("[role=alert]")
    good = tmp_path / "good.zip"
    good.write_bytes(
        zip_of("good-one", "---\nname: good-one\ndescription: A good skill.\nversion: 1.0.0\n---\n# Good\n")
    )
    page.set_input_files("#id_archive", str(good))
    page.click("button >> text=Publish")
    page.wait_for_url("**/skills/good-one/versions/1.0.0")
    page.goto(f"{site.url}/account/tokens")
    page.fill("#id_name", "browser-made")
    page.click("button >> text=Create token")
    assert page.input_value("#new-token").startswith("sky_")
    page.click("tr:has-text('browser-made') >> button:has-text('Revoke')")
    assert "browser-made" not in page.inner_text("table")


def test_sign_up_from_the_sign_in_page_lands_where_the_user_was_going(site, page):
    page.goto(f"{site.url}/publish")  # signed out: to the sign-in page, then on to sign-up
    page.wait_for_url("**/accounts/login/?next=/publish")
    page.click("text=Sign up")
    page.fill("#id_username", "carol")
    page.fill("#id_password1", "plum-kettle-93")
    page.fill("#id_password2", "plum-kettle-93")
    page.click("button >> text=Sign up")
    page.wait_for_url(f"{site.url}/publish")
    assert "carol" in page.inner_text("nav") and page.is_visible("#id_archive")


def test_private_skill_visible_to_member_and_404_to_others(site, page, tmp_path):
    import httpx

    response = httpx.post(
        f"{site.url}/api/v1/skills/hidden-one/versions",
        headers={"Authorization": f"Bearer {site.token}"},
        files={
            "archive": (
                "h.zip",
                zip_of("hidden-one", "---\nname: hidden-one\ndescription: Secret.\nversion: 1.0.0\n---\n"),
                "application/zip",
            )
        },
        data={"visibility": "private"},
        timeout=30,
    )
    assert response.status_code == 201
    assert page.goto(f"{site.url}/skills/hidden-one").status == 404
    sign_in(page, site.url)
    assert page.goto(f"{site.url}/skills/hidden-one").status == 200


AXE_CACHE = Path(os.environ.get("SKILLYARD_NPM_CACHE", Path.home() / ".cache" / "skillyard" / "skills-cli"))


@pytest.fixture(scope="session")
def axe_js() -> Path:
    """axe-core (the accessibility engine most tools use), from npm into the cache folder."""
    path = AXE_CACHE / "node_modules/axe-core/axe.min.js"
    if not path.exists():
        import shutil

        from tests.conftest import require_service

        npm = shutil.which("npm")
        require_service("npm", bool(npm), "needed to install axe-core")
        AXE_CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(AXE_CACHE), "axe-core@4"],
            capture_output=True,
            timeout=300,
        )
        require_service("axe-core from npm", path.exists())
    return path


def test_main_pages_have_no_serious_accessibility_violations(site, browser, axe_js, tmp_path):
    site.publish(make(tmp_path, "pdf-rotate", "1.0.0", {"scripts/rotate.py": "print('rotating')\n"}))
    page = browser.new_context(bypass_csp=True).new_page()  # lets the test inject axe; the site's CSP stays
    public = (
        "/",
        "/skills",
        "/skills?q=rotate",
        "/skills/pdf-rotate",
        "/accounts/login/",
        "/accounts/signup/",
        "/skills/pdf-rotate/versions/1.0.0/files/scripts/rotate.py",
    )
    problems = {path: axe_serious(page, site.url + path, axe_js) for path in public}
    sign_in(page, site.url)
    for path in ("/publish", "/account/tokens", "/owners/alice", "/skills/pdf-rotate"):  # signed in: more forms
        problems[f"{path} (signed in)"] = axe_serious(page, site.url + path, axe_js)
    assert {path: found for path, found in problems.items() if found} == {}


def axe_serious(page, url: str, axe_js: Path) -> list[str]:
    """The ids of axe-core's serious and critical violations on ``url``."""
    page.goto(url)
    page.add_script_tag(path=str(axe_js))
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [v["id"] for v in result["violations"] if v["impact"] in ("serious", "critical")]


def test_pages_work_without_javascript(site, browser, tmp_path):
    site.publish(make(tmp_path, "pdf-rotate", "1.0.0", {"scripts/rotate.py": "print('rotating')\n"}))
    page = browser.new_context(java_script_enabled=False).new_page()
    page.goto(site.url + "/")
    page.fill("#home-q", "greets people politely")
    page.click("button >> text=Find skills")  # a plain GET form: the browser submits it
    page.wait_for_url("**/skills?q=greets+people+politely")
    assert "pdf-rotate" in page.inner_text("main")
    page.fill("#site-q", "rotate")
    page.press("#site-q", "Enter")
    page.wait_for_url("**/skills?q=rotate")
    page.click("text=pdf-rotate")
    page.wait_for_url("**/skills/pdf-rotate")
    assert page.input_value("#install-cmd") == "skillctl install pdf-rotate"
    assert page.inner_text(".skill-body").strip()
    page.goto(site.url + "/skills?sort=name")
    page.select_option("#sort", "downloads")
    page.click("button >> text=Apply")
    page.wait_for_url("**/skills?*sort=downloads*")
    assert "pdf-rotate" in page.inner_text("main")


def test_pages_fit_a_phone_without_sideways_scrolling(site, browser, tmp_path):
    site.publish(make(tmp_path, "pdf-rotate", "1.0.0", {"scripts/rotate.py": "print('rotating')\n"}))
    # Not is_mobile: a mobile browser zooms out to fit an overflowing page, which hides the overflow.
    page = browser.new_context(viewport={"width": 360, "height": 740}).new_page()
    too_wide = {}
    anonymous = ["/", "/skills", "/skills?q=rotate", "/owners/alice", "/skills/pdf-rotate"]
    # Signed in: the owner's skill page has its manage forms; the tokens table has a row (the
    # registry issued alice a token).
    signed_in = ["/skills/pdf-rotate/files/scripts/rotate.py", "/skills/pdf-rotate", "/account/tokens", "/publish"]
    for path in [*anonymous, None, *signed_in]:
        if path is None:
            sign_in(page, site.url)
            continue
        page.goto(site.url + path)
        content, viewport = page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        if content > viewport:
            too_wide[path] = content
    assert too_wide == {}


def test_dark_mode_follows_the_system_setting(site, browser):
    def background(scheme: str) -> list[int]:
        page = browser.new_context(color_scheme=scheme).new_page()
        page.goto(site.url + "/skills")
        rgb = page.evaluate("getComputedStyle(document.body).backgroundColor")
        return [int(part) for part in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]]

    assert sum(background("dark")) < 3 * 64 and sum(background("light")) > 3 * 192
