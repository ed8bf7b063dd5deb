"""The catalog's side of single sign-on (catalog/sso.py, catalog/accounts.py), without a browser.

The whole exchange with a real provider runs in tests/e2e/test_sso_browser.py; here, the checks
this project adds to mozilla-django-oidc (discovery naming its issuer, the ID token's issuer and
audience) and the pages when single sign-on is on. A discovery document is served from loopback.
"""

from __future__ import annotations

import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from django.test import Client

from catalog import sso
from tests.deploy.test_settings import PRODUCTION, manage


@pytest.fixture
def discovery_server():
    """A loopback server answering the discovery path with ``document(issuer)``."""
    answers: dict[str, object] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = json.dumps(answers.get(self.path, {})).encode()
            self.send_response(200 if self.path in answers else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    yield url, answers
    server.shutdown()
    server.server_close()


def document(issuer: str) -> dict[str, str]:
    return {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/authorize",
        "token_endpoint": f"{issuer}/token",
        "userinfo_endpoint": f"{issuer}/userinfo",
        "jwks_uri": f"{issuer}/jwks",
    }


@pytest.fixture
def sso_on(settings, discovery_server):
    url, answers = discovery_server
    issuer = f"{url}/openid"
    answers["/openid/.well-known/openid-configuration"] = document(issuer)
    settings.SKILLYARD_OIDC_ISSUER = issuer
    settings.SKILLYARD_OIDC_PROVIDER_NAME = "Example ID"
    settings.SKILLYARD_SIGNUP = "open"  # ignored while single sign-on is on
    settings.OIDC_RP_CLIENT_ID, settings.OIDC_RP_CLIENT_SECRET = "the-client", "the-secret"
    settings.OIDC_RP_SCOPES, settings.OIDC_USE_PKCE, settings.OIDC_TIMEOUT = "openid email profile groups", True, 5
    sso._discovered.clear()
    yield answers
    sso._discovered.clear()


def test_the_start_sends_the_browser_to_the_discovered_endpoint_with_state_nonce_and_pkce(sso_on, db):
    response = Client().get("/accounts/oidc/start/", {"next": "/publish"})
    assert response.status_code == 302
    target = urlsplit(response["Location"])
    query = {key: values[0] for key, values in parse_qs(target.query).items()}
    assert response["Location"].startswith(sso.provider_endpoint("authorization_endpoint") + "?")
    assert query["client_id"] == "the-client" and query["response_type"] == "code"
    assert query["redirect_uri"] == "http://testserver/accounts/oidc/callback/"
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
    assert query["state"] and query["nonce"] and "groups" in query["scope"].split()


def test_a_discovery_naming_another_issuer_is_refused(sso_on, settings, db):
    sso_on["/openid/.well-known/openid-configuration"] = document("https://elsewhere.example/openid")
    response = Client().get("/accounts/oidc/start/")
    assert response.status_code == 502 and b"sso.issuer_mismatch" in response.content


def test_an_unreachable_provider_gives_a_page_not_a_crash(sso_on, settings, db):
    settings.SKILLYARD_OIDC_ISSUER = "http://127.0.0.1:9/openid"  # the discard port: nothing listens
    response = Client().get("/accounts/oidc/start/")
    assert response.status_code == 502 and b"sso.provider_unavailable" in response.content


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/accounts/oidc/start/", "/accounts/oidc/callback/?code=x&state=y"])
def test_the_sso_urls_are_404_while_it_is_off(path):
    assert Client().get(path).status_code == 404


def test_a_callback_without_a_started_sign_in_is_refused(sso_on, db):
    response = Client().get("/accounts/oidc/callback/", {"code": "x", "state": "y"})
    assert response.status_code == 403 and b"sso.failed" in response.content


@pytest.mark.parametrize(
    ("claims", "accepted"),
    [
        ({"aud": "the-client"}, True),
        ({"aud": ["the-client", "other"], "azp": "the-client"}, True),
        ({"aud": ["the-client", "other"]}, False),  # several audiences and not authorised for us
        ({"aud": "other"}, False),
        ({"aud": "the-client", "iss": "https://elsewhere.example/openid"}, False),
        ({"aud": "the-client", "exp": None}, False),
    ],
)
def test_an_id_token_must_come_from_our_issuer_for_our_client(sso_on, settings, claims, accepted):
    token = {"iss": settings.SKILLYARD_OIDC_ISSUER, "exp": 1, **claims}
    token = {key: value for key, value in token.items() if value is not None}
    if accepted:
        sso._issued_for_us(token)
    else:
        with pytest.raises(SuspiciousOperation):
            sso._issued_for_us(token)


def test_the_sign_in_page_offers_the_provider_and_sign_up_is_closed(sso_on, db):
    page = Client().get("/accounts/login/", {"next": "/publish"}).content.decode()
    assert 'href="/accounts/oidc/start/?next=/publish"' in page and "Sign in with Example ID" in page
    assert "/accounts/signup/" not in page
    signup = Client().get("/accounts/signup/")
    assert signup.status_code == 404 and "accounts come from Example ID" in signup.content.decode()
    form = {"username": "carol", "password1": "plum-kettle-93", "password2": "plum-kettle-93"}
    assert Client().post("/accounts/signup/", form).status_code == 404
    assert not get_user_model().objects.filter(username="carol").exists()


def test_a_password_signs_in_a_superuser_only(sso_on, db):
    users = get_user_model().objects
    users.create_user("carol", password="plum-kettle-93")
    users.create_superuser("root-op", password="plum-kettle-94")
    refused = Client().post("/accounts/login/", {"username": "carol", "password": "plum-kettle-93"})
    assert refused.status_code == 200 and "not an operator" in refused.content.decode()
    operator = Client().post("/accounts/login/", {"username": "root-op", "password": "plum-kettle-94"})
    assert operator.status_code == 302


SSO_ENV = {
    "SKILLYARD_OIDC_ISSUER": "https://id.example.com/realms/acme",
    "SKILLYARD_OIDC_CLIENT_ID": "skillyard",
    "SKILLYARD_OIDC_CLIENT_SECRET": "the-secret",
}


def test_check_deploy_is_clean_with_single_sign_on_on(tmp_path):
    env = {**PRODUCTION, **SSO_ENV, "SKILLYARD_SECRET_KEY": secrets.token_urlsafe(50)}
    result = manage("check", "--deploy", env=env, tmp_path=tmp_path)
    said = (result.stdout + result.stderr).lower()
    assert result.returncode == 0 and "oidc" not in said and "sso" not in said, said


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"SKILLYARD_OIDC_CLIENT_SECRET": ""}, "SKILLYARD_OIDC_CLIENT_SECRET"),
        ({"SKILLYARD_OIDC_ISSUER": "http://id.example.com/realms/acme"}, "SKILLYARD_OIDC_ISSUER"),
        ({"SKILLYARD_OIDC_SCOPES": "email profile"}, "SKILLYARD_OIDC_SCOPES"),
        ({"SKILLYARD_OIDC_SIGN_ALGO": "HS256"}, "SKILLYARD_OIDC_SIGN_ALGO"),
    ],
)
def test_a_wrong_sso_configuration_stops_the_registry_at_start(tmp_path, change, named):
    result = manage("check", env={**SSO_ENV, **change}, tmp_path=tmp_path)
    assert result.returncode != 0 and named in result.stderr.strip().splitlines()[-1]
