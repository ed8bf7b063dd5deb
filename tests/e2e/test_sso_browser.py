"""Single sign-on in a real browser against a real OpenID provider (issue 39 item 2).

The provider is django-oidc-provider in its own process on loopback (tests/e2e/oidc_provider):
discovery, its login page, the code flow with PKCE and RS256 ID tokens from its own key. The
registry is started with ``SKILLYARD_OIDC_*`` pointing at it. Chromium signs in through the
provider, lands signed in with the organisation role its groups name, creates an API token on
/account/tokens that `skillctl whoami` then uses; the groups are re-read at the next sign-in,
sign-up is closed, a password signs in no one but a superuser, and a reserved name is refused.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import _free_port, start_registry
from tests.e2e.oidc_provider.server import start_provider
from tests.e2e.test_catalog_browser import browser, chromium, page  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SKILLCTL = Path(sys.executable).with_name("skillctl")
CLIENT = {"client_id": "skillyard-test", "client_secret": "s3cret-of-the-test-client"}
DANA = {"username": "dana", "password": "pw-dana-123", "email": "dana@example.test"}
PROVIDER_NAME = "Example ID"


@pytest.fixture
def sso_site(tmp_path):
    """The provider (users dana and admin) and a registry that signs in through it."""
    port = _free_port()
    callback = f"http://127.0.0.1:{port}/accounts/oidc/callback/"
    users = [
        {**DANA, "groups": ["skillyard:acme:publisher", "engineering"]},
        {"username": "admin", "password": "pw-admin-123", "groups": []},
    ]
    provider = start_provider(tmp_path / "provider", clients=[{**CLIENT, "redirect_uris": [callback]}], users=users)
    set_password = (
        "from django.contrib.auth import get_user_model as g; u=g().objects.get(username='alice');"
        "u.set_password('pw-alice-123'); u.save()"
    )
    env = {
        "SKILLYARD_CHECKS_ENABLED": "0",
        "SKILLYARD_SIGNUP": "open",  # ignored: single sign-on closes sign-up
        "SKILLYARD_OIDC_ISSUER": provider.issuer,
        "SKILLYARD_OIDC_CLIENT_ID": CLIENT["client_id"],
        "SKILLYARD_OIDC_CLIENT_SECRET": CLIENT["client_secret"],
        "SKILLYARD_OIDC_PROVIDER_NAME": PROVIDER_NAME,
    }
    try:
        registry = start_registry(tmp_path / "registry", env_extra=env, port=port, then=[["shell", "-c", set_password]])
    except BaseException:
        provider.stop()
        raise
    yield registry, provider
    registry.stop()
    provider.stop()


def sign_in_with_provider(tab, url: str, username: str, password: str) -> None:
    tab.goto(f"{url}/accounts/login/")
    tab.click(f"#sso-sign-in >> text=Sign in with {PROVIDER_NAME}")
    tab.wait_for_selector("#provider-sign-in")  # the provider's own page, on its origin
    tab.fill("#id_username", username)
    tab.fill("#id_password", password)
    tab.click("#provider-sign-in")


def me(tab, url: str) -> dict:
    """/api/v1/me with the browser's session cookie."""
    response = tab.request.get(f"{url}/api/v1/me")
    assert response.status == 200, response.text()
    return response.json()


def roles(body: dict) -> dict[str, str]:
    return {entry["owner"]: entry["role"] for entry in body["owners"]}


def test_sign_in_through_the_provider_maps_groups_and_a_web_token_works_with_skillctl(sso_site, page, tmp_path):  # noqa: F811
    registry, provider = sso_site
    refused_by_csp: list[str] = []
    page.on("console", lambda msg: "Content Security Policy" in msg.text and refused_by_csp.append(msg.text))

    sign_in_with_provider(page, registry.url, DANA["username"], DANA["password"])
    page.wait_for_url(f"{registry.url}/")
    assert page.inner_text("header a[href='/owners/dana']") == "dana"
    assert roles(me(page, registry.url)) == {"dana": "owner", "acme": "publisher"}

    page.goto(f"{registry.url}/account/tokens")
    page.fill("#id_name", "laptop")
    page.select_option("#id_scope", "publish")
    page.click("button >> text=Create token")
    secret = page.input_value("#new-token")
    assert secret.startswith("sky_")
    whoami = subprocess.run(
        [str(SKILLCTL), "whoami", "--json"],
        env={
            **os.environ,
            "SKILLYARD_HOME": str(tmp_path / "home"),
            "SKILLYARD_REGISTRY": registry.url,
            "SKILLYARD_TOKEN": secret,
            "NO_COLOR": "1",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert whoami.returncode == 0, whoami.stderr
    user = json.loads(whoami.stdout)["user"]
    assert user["username"] == "dana" and {"owner": "acme", "kind": "org", "role": "publisher"} in user["owners"]
    assert refused_by_csp == []


def test_groups_are_read_again_at_each_sign_in(sso_site, page):  # noqa: F811
    registry, provider = sso_site
    sign_in_with_provider(page, registry.url, DANA["username"], DANA["password"])
    page.wait_for_url(f"{registry.url}/")
    provider.seed(users=[{**DANA, "groups": ["skillyard:acme:admin", "skillyard:tools:reader"]}])
    page.click("header button >> text=Sign out")
    page.goto(f"{registry.url}/accounts/login/")
    page.click("#sso-sign-in")  # still signed in at the provider: straight back
    page.wait_for_url(f"{registry.url}/")
    assert roles(me(page, registry.url)) == {"dana": "owner", "acme": "admin", "tools": "reader"}

    provider.seed(users=[{**DANA, "groups": []}])
    page.click("header button >> text=Sign out")
    page.goto(f"{registry.url}/accounts/login/")
    page.click("#sso-sign-in")
    page.wait_for_url(f"{registry.url}/")
    assert roles(me(page, registry.url)) == {"dana": "owner"}


def test_sign_up_is_closed_and_a_password_signs_in_no_one_but_a_superuser(sso_site, page):  # noqa: F811
    registry, _ = sso_site
    response = page.goto(f"{registry.url}/accounts/signup/")
    assert response.status == 404
    assert f"accounts come from {PROVIDER_NAME}" in page.inner_text("#signup-closed")

    page.goto(f"{registry.url}/accounts/login/")
    assert page.locator("a[href^='/accounts/signup/']").count() == 0
    page.click("summary >> text=Operator sign-in with a password")
    page.fill("#id_username", "alice")  # a local account with a right password, not a superuser
    page.fill("#id_password", "pw-alice-123")
    page.click("form[action='/accounts/login/'] button[type=submit]")
    assert page.url.startswith(f"{registry.url}/accounts/login/")
    assert "not an operator's" in page.inner_text("[role=alert]")
    assert page.request.get(f"{registry.url}/api/v1/me").status in (401, 403)


def test_a_reserved_username_from_the_provider_is_refused_with_its_code(sso_site, page):  # noqa: F811
    registry, _ = sso_site
    sign_in_with_provider(page, registry.url, "admin", "pw-admin-123")
    page.wait_for_selector("#sso-problem")
    assert page.url.startswith(f"{registry.url}/accounts/oidc/callback/")
    assert page.inner_text("#sso-problem") == "sso.name_reserved"
    assert page.request.get(f"{registry.url}/api/v1/me").status in (401, 403)
