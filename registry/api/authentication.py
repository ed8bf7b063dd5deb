"""``Authorization: Bearer sky_...`` tokens; browser sessions come from DRF's SessionAuthentication."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, Throttled

from registry import auth_limits
from registry.access import Actor
from registry.clients import client_address
from registry.errors import Unauthenticated
from registry.models import Token
from registry.services import token_authenticate


class BearerTokenAuthentication(BaseAuthentication):
    keyword = b"bearer"

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword:
            return None
        if len(parts) != 2:
            raise AuthenticationFailed("Send `Authorization: Bearer <token>`.", code="token.invalid")
        try:
            token = token_authenticate(secret=parts[1].decode("ascii", "replace"))
        except Unauthenticated as exc:
            if wait := auth_limits.bad_token_counted(f"ip:{client_address(request.META)}"):
                raise Throttled(wait=wait, detail="Too many requests with bad tokens from this address.") from exc
            raise AuthenticationFailed(exc.message, code=exc.code) from exc
        return token.user, token

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="skillyard"'


def request_actor(request) -> Actor:
    token = request.auth if isinstance(request.auth, Token) else None
    return Actor(request.user, token)


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """The token scheme in the OpenAPI schema (and the API docs' "Authorize" button)."""

    target_class = BearerTokenAuthentication
    name = "bearerToken"

    def get_security_definition(self, auto_schema):  # noqa: ANN001 (drf-spectacular's signature)
        return {"type": "http", "scheme": "bearer", "bearerFormat": "sky_… token (skillctl login)"}
