"""Issue 38's owners, API docs and polish in Debian's Chromium at 1280 and 390 px: the signed-in
header on one line, the browse search box and the tokens table (Revoke) on a phone, the favicon,
one search box at home, the messages that say what happened, owner and publishers pages, the API
docs as a catalog page; axe finds no serious or critical violation on the new pages."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.test_catalog_browser import axe_js, axe_serious, browser, chromium, sign_in, site  # noqa: F401
from tests.e2e.test_install_registry import make

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

WIDTHS = (1280, 390)


def at_width(browser, width: int, **options):  # noqa: ANN001, ANN201, F811
    return browser.new_context(viewport={"width": width, "height": 900}, **options).new_page()


def too_wide(tab) -> bool:  # noqa: ANN001
    content, viewport = tab.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    return content > viewport


def box(tab, selector: str) -> dict:  # noqa: ANN001
    return tab.locator(selector).first.bounding_box()


def test_the_signed_in_header_is_one_line_at_1280(site, browser):  # noqa: F811
    tab = at_width(browser, 1280)
    sign_in(tab, site.url)
    tab.goto(site.url + "/skills")
    brand = box(tab, "header.site .brand")
    for item in ("header.site nav a >> nth=0", "text=Sign out", "header.site nav a >> text=API", "#site-q"):
        top = box(tab, item)
        assert abs((top["y"] + top["height"] / 2) - (brand["y"] + brand["height"] / 2)) < 12, item


@pytest.mark.parametrize("width", WIDTHS)
def test_the_browse_search_box_and_the_tokens_table_fit(site, browser, width):  # noqa: F811
    tab = at_width(browser, width)
    sign_in(tab, site.url)
    tab.goto(site.url + "/skills")
    assert box(tab, "#q")["width"] >= 200 and not too_wide(tab)
    tab.goto(site.url + "/account/tokens")  # the registry issued alice a token: one row
    revoke = box(tab, "table.tokens button >> text=Revoke")
    assert revoke["x"] >= 0 and revoke["x"] + revoke["width"] <= width and not too_wide(tab)
    assert tab.locator("table.tokens td[data-label=Created]").first.is_visible()
    assert tab.inner_text("table.tokens td[data-label='Last used'] >> nth=0").strip()


def test_the_favicon_is_served_as_svg(site, browser):  # noqa: F811
    tab = at_width(browser, 1280)
    tab.goto(site.url + "/")
    href = tab.get_attribute("link[rel=icon]", "href")
    icon = httpx.get(site.url + href, timeout=5)
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg")


@pytest.mark.parametrize("width", WIDTHS)
def test_home_has_one_search_box_and_no_empty_most_downloaded(site, browser, tmp_path, width):  # noqa: F811
    site.publish(make(tmp_path, "pdf-rotate", "1.0.0", {}))
    tab = at_width(browser, width)
    tab.goto(site.url + "/")
    assert tab.locator("input[type=search]").count() == 1
    assert "Recently updated" in tab.inner_text("main") and "Most downloaded" not in tab.inner_text("main")
    httpx.get(f"{site.url}/api/v1/skills/pdf-rotate/download", timeout=10).raise_for_status()
    tab.reload()
    assert "Most downloaded" in tab.inner_text("main") and "1 download ·" in tab.inner_text("main")
    assert not too_wide(tab)


def test_messages_say_why_sign_in_and_welcome_after_sign_up(site, browser):  # noqa: F811
    tab = at_width(browser, 390)
    tab.goto(site.url + "/publish")
    tab.wait_for_url("**/accounts/login/?next=/publish")
    assert "Sign in to publish a skill" in tab.inner_text("[role=status]")
    tab.click("text=Sign up")
    tab.fill("#id_username", "dora")
    tab.fill("#id_password1", "plum-kettle-93")
    tab.fill("#id_password2", "plum-kettle-93")
    tab.click("button >> text=Sign up")
    tab.wait_for_url("**/publish")
    assert "Welcome, dora" in tab.inner_text("[role=status]")


@pytest.mark.parametrize("width", WIDTHS)
def test_owner_and_publishers_pages(site, browser, tmp_path, width):  # noqa: F811
    site.publish(make(tmp_path, "pdf-rotate", "1.0.0", {}))
    tab = at_width(browser, width)
    sign_in(tab, site.url)
    tab.goto(site.url + "/owners/alice")
    tab.fill("#owner-description", "Tools for PDFs.")
    tab.click("button >> text=Save")
    tab.wait_for_url("**/owners/alice")
    assert tab.inner_text(".owner-description") == "Tools for PDFs."
    assert "1 skill" in tab.inner_text(".owner-stats") and not too_wide(tab)
    tab.click("header.site >> text=Publishers")
    tab.wait_for_url("**/publishers")
    card = tab.inner_text(".publishers")
    assert "alice" in card and "Tools for PDFs." in card and "1 skill" in card and not too_wide(tab)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_api_docs_are_a_catalog_page_with_examples(site, browser, width):  # noqa: F811
    tab = at_width(browser, width)
    tab.goto(site.url + "/api/v1/docs/")
    assert tab.locator("section.api-op").count() >= 30
    publish = tab.locator("section.api-op", has_text="Publish a version")
    assert "curl -X POST" in publish.inner_text() and '"version": "1.0.0"' in publish.inner_text()
    assert tab.evaluate("getComputedStyle(document.querySelector('header.site')).display") == "flex"
    assert not too_wide(tab)
    tab.click("header.site .brand")
    tab.wait_for_url(site.url + "/")


@pytest.mark.parametrize("width", WIDTHS)
def test_new_pages_have_no_serious_accessibility_violations(site, browser, axe_js, tmp_path, width):  # noqa: F811
    site.publish(make(tmp_path, "pdf-rotate", "1.0.0", {}))
    tab = at_width(browser, width, bypass_csp=True)  # lets the test inject axe; the site's CSP stays
    public = ("/", "/publishers", "/owners/alice", "/api/v1/docs/")
    problems = {path: axe_serious(tab, site.url + path, axe_js) for path in public}
    sign_in(tab, site.url)
    for path in ("/owners/alice", "/account/tokens", "/skills"):  # the description form, the tokens table
        problems[f"{path} (signed in)"] = axe_serious(tab, site.url + path, axe_js)
    assert {path: found for path, found in problems.items() if found} == {}
