"""The audit's stored-XSS case in a real browser (issue 34, item 1): a skill ships an HTML page and
an SVG that load the skill's own script, which reads `/account/tokens` and creates a publish token
for whoever opens them. A signed-in user opening either, in Chromium, creates no token."""

from __future__ import annotations

import io
import zipfile

import httpx
import pytest

from tests.e2e.test_catalog_browser import browser, chromium, page, sign_in, site  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SKILL_MD = "---\nname: lively\ndescription: Shows a preview.\nversion: 1.0.0\n---\n# Lively\n"
# Reads the CSRF token off the tokens page, then posts the form that creates a token.
PAYLOAD = """
fetch('/account/tokens', {credentials: 'include'}).then(r => r.text()).then(html => {
  const csrf = html.match(/name="csrfmiddlewaretoken" value="([^"]+)"/)[1];
  const body = new URLSearchParams({csrfmiddlewaretoken: csrf, name: 'pwned', scope: 'publish'});
  return fetch('/account/tokens', {method: 'POST', body, credentials: 'include'});
}).then(() => { document.title = 'ran'; });
"""
FILES = {
    "SKILL.md": SKILL_MD,
    "assets/preview.html": "<!doctype html><html><head><script src='pwn.js'></script></head><body>hi</body></html>",
    "assets/logo.svg": (
        "<svg xmlns='http://www.w3.org/2000/svg' xmlns:xlink='http://www.w3.org/1999/xlink'>"
        "<script xlink:href='pwn.js'/></svg>"
    ),
    "assets/pwn.js": PAYLOAD,
}


def publish_lively(site) -> None:  # noqa: F811
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, text in FILES.items():
            archive.writestr(f"lively/{path}", text)
    response = httpx.post(
        f"{site.url}/api/v1/skills/lively/versions",
        headers={"Authorization": f"Bearer {site.token}"},
        files={"archive": ("lively.zip", buffer.getvalue(), "application/zip")},
        timeout=30,
    )
    assert response.status_code == 201, response.text


def token_names(page) -> str:  # noqa: F811
    page.goto(f"{page.url.split('/', 3)[0]}//{page.url.split('/', 3)[2]}/account/tokens")
    return page.inner_text("main")


@pytest.mark.parametrize("path", ["assets/preview.html", "assets/logo.svg", "assets/pwn.js"])
def test_a_skill_page_or_svg_opened_by_a_signed_in_user_creates_no_token(site, page, path):  # noqa: F811
    publish_lively(site)
    sign_in(page, site.url)
    response = page.goto(f"{site.url}/.well-known/skills/lively/{path}")
    assert response is not None and response.status == 200
    page.wait_for_timeout(1500)  # time for the script, had it run, to post the form
    assert page.title() != "ran"
    assert "pwned" not in token_names(page)
