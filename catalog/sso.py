"""Signing in to the catalog through an OpenID Connect provider (docs/sso.md).

On when ``SKILLYARD_OIDC_ISSUER`` is set (skillyard/settings.py). The protocol is
mozilla-django-oidc's: the authorization code flow with state, nonce and PKCE (S256), the ID
token's signature checked with the issuer's published keys (RS256 by default, never the client
secret). This module adds what that library leaves out: the endpoints from the issuer's discovery
document (checked to name the same issuer), the ID token's ``iss`` and ``aud``, and the userinfo
answer's ``sub`` matched to the ID token's. The verified claims go to registry/sso.py, which names
the user and syncs their memberships. The provider's tokens are used once and never stored.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.generic import View
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from registry.errors import RegistryError
from registry.sso import sso_sign_in

log = logging.getLogger(__name__)

# The discovery document is read again after this long: providers move endpoints rarely, and an
# hour bounds how long a move goes unseen without a restart. Signing keys are not cached here (the
# library reads the key set at each sign-in), so a key rotation takes effect at once.
DISCOVERY_TTL_SECONDS = 3600
_REQUIRED_ENDPOINTS = ("authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri")


class ProviderUnavailable(RegistryError):
    """The provider did not answer, or its discovery document is not one we can use."""

    status = 502


def sso_enabled() -> bool:
    return bool(getattr(settings, "SKILLYARD_OIDC_ISSUER", ""))


def provider_name() -> str:
    """What the sign-in button says: ``SKILLYARD_OIDC_PROVIDER_NAME``, else the issuer's host."""
    return settings.SKILLYARD_OIDC_PROVIDER_NAME or urlsplit(settings.SKILLYARD_OIDC_ISSUER).netloc


_discovered: dict[str, tuple[float, dict[str, Any]]] = {}
_discovery_lock = threading.Lock()


def provider_endpoint(key: str) -> str:
    """One endpoint of the issuer's discovery document (``<issuer>/.well-known/openid-configuration``)."""
    issuer = settings.SKILLYARD_OIDC_ISSUER
    with _discovery_lock:
        fetched_at, document = _discovered.get(issuer, (0.0, {}))
        if time.monotonic() - fetched_at > DISCOVERY_TTL_SECONDS:
            document = _discover(issuer)
            _discovered[issuer] = (time.monotonic(), document)
    return document[key]


def _discover(issuer: str) -> dict[str, Any]:
    try:
        response = requests.get(f"{issuer}/.well-known/openid-configuration", timeout=settings.OIDC_TIMEOUT)
        response.raise_for_status()
        document = response.json()
    except (requests.RequestException, ValueError) as exc:
        raise ProviderUnavailable("sso.provider_unavailable", f"The sign-in provider did not answer: {exc}") from exc
    # OpenID Connect Discovery 1.0 §4.3: the document must name the issuer it was fetched from,
    # or another issuer's tokens could pass as this one's.
    if not isinstance(document, dict) or document.get("issuer") != issuer:
        raise ProviderUnavailable("sso.issuer_mismatch", "The sign-in provider's discovery names another issuer.")
    if missing := [key for key in _REQUIRED_ENDPOINTS if not isinstance(document.get(key), str)]:
        raise ProviderUnavailable("sso.discovery_incomplete", f"The discovery document lacks {', '.join(missing)}.")
    return document


class OpenIDConnectBackend(OIDCAuthenticationBackend):
    """mozilla-django-oidc's backend with discovered endpoints and the checks it leaves out."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Not the library's __init__: Django builds a backend for every request of a signed-in
        # session (get_user), and the endpoints are only wanted by a sign-in (properties below).
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.OIDC_RP_CLIENT_SECRET
        self.OIDC_RP_SIGN_ALGO = settings.OIDC_RP_SIGN_ALGO
        self.OIDC_RP_IDP_SIGN_KEY = None  # always the issuer's published key set
        self.UserModel = get_user_model()

    @property
    def OIDC_OP_TOKEN_ENDPOINT(self) -> str:  # noqa: N802 (the library's attribute name)
        return provider_endpoint("token_endpoint")

    @property
    def OIDC_OP_USER_ENDPOINT(self) -> str:  # noqa: N802
        return provider_endpoint("userinfo_endpoint")

    @property
    def OIDC_OP_JWKS_ENDPOINT(self) -> str:  # noqa: N802
        return provider_endpoint("jwks_uri")

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> Any:
        if "nonce" not in kwargs or not sso_enabled():
            return None  # only the callback (below) signs in through the provider
        return super().authenticate(request, **kwargs)

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        claims = super().verify_token(token, **kwargs)  # signature with the issuer's key, alg, exp, nonce
        _issued_for_us(claims)
        return claims

    def get_userinfo(self, access_token: str, id_token: str, payload: dict[str, Any]) -> dict[str, Any]:
        info = super().get_userinfo(access_token, id_token, payload)
        # OpenID Connect Core §5.3.2: userinfo about someone else must not sign this person in.
        if info.get("sub") != payload.get("sub"):
            raise SuspiciousOperation("the userinfo answer names another subject than the ID token")
        return {**payload, **info}  # groups may come in either

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        return sso_sign_in(
            issuer=settings.SKILLYARD_OIDC_ISSUER,
            claims=self.get_userinfo(access_token, id_token, payload),
            groups_claim=settings.SKILLYARD_OIDC_GROUPS_CLAIM,
            group_prefix=settings.SKILLYARD_OIDC_GROUP_PREFIX,
        )


def _issued_for_us(claims: dict[str, Any]) -> None:
    """The ID token comes from our issuer, for our client (Core §3.1.3.7, items 2-5), and ends."""
    audience = claims.get("aud")
    audiences = [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
    client_id = settings.OIDC_RP_CLIENT_ID
    if claims.get("iss") != settings.SKILLYARD_OIDC_ISSUER:
        raise SuspiciousOperation("the ID token comes from another issuer")
    if client_id not in audiences or (len(audiences) > 1 and claims.get("azp") != client_id):
        raise SuspiciousOperation("the ID token is meant for another client")
    if "exp" not in claims:
        raise SuspiciousOperation("the ID token does not expire")


class SignInStart(OIDCAuthenticationRequestView):
    """``/accounts/oidc/start/``: off to the provider, with state, nonce and a PKCE challenge."""

    def __init__(self, **kwargs: Any) -> None:
        View.__init__(self, **kwargs)  # the library's would read the endpoint before a request asks

    def get(self, request: HttpRequest) -> HttpResponse:
        if not sso_enabled():
            raise Http404("single sign-on is off")
        try:
            self.OIDC_OP_AUTH_ENDPOINT = provider_endpoint("authorization_endpoint")
        except ProviderUnavailable as exc:
            return sign_in_refused(request, exc)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        return super().get(request)


class SignInCallback(OIDCAuthenticationCallbackView):
    """``/accounts/oidc/callback/``: the provider's answer, checked, then the user signed in."""

    def get(self, request: HttpRequest) -> HttpResponse:
        if not sso_enabled():
            raise Http404("single sign-on is off")
        try:
            return super().get(request)
        except RegistryError as exc:  # the mapping refused (a reserved name) or the provider is gone
            return sign_in_refused(request, exc)
        except SuspiciousOperation as exc:  # state, nonce, signature, issuer or audience wrong
            log.warning("single sign-on refused: %s", exc)
            return sign_in_refused(request, RegistryError("sso.answer_invalid", "The sign-in could not be verified."))
        except requests.RequestException as exc:
            return sign_in_refused(request, ProviderUnavailable("sso.provider_unavailable", str(exc)))

    def login_failure(self) -> HttpResponse:
        problem = RegistryError("sso.failed", "The sign-in provider did not sign you in.")
        return sign_in_refused(self.request, problem)


def sign_in_refused(request: HttpRequest, problem: RegistryError) -> HttpResponse:
    """The sign-in page again, saying why (the code is what tests and support look for)."""
    context = {"sso_provider": provider_name(), "sso_problem": problem, "next": settings.LOGIN_REDIRECT_URL}
    status = ProviderUnavailable.status if isinstance(problem, ProviderUnavailable) else 403
    return render(request, "catalog/login.html", context, status=status)
