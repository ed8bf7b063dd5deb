"""Sign-in (Django admin, the catalog's /accounts/login/) through the usual model backend, with
failed attempts limited (registry/auth_limits.py) per account *and client address*, and per
client address over all accounts.

Not per account alone: then anyone anywhere could lock a named account by failing on purpose.
Counted per (account, address), a lockout stops only the address that failed; the address-wide
limit keeps one address from spraying guesses over many accounts."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied

from registry import auth_limits
from registry.clients import client_address


class ThrottledModelBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):  # noqa: ANN001
        address = client_address(request.META) if request is not None else "local"
        account = f"user:{(username or '').strip().lower()}@{address}"  # no address holds an '@'
        everyone = f"signin-ip:{address}"
        address_rate = settings.SKILLYARD_THROTTLE_SIGNIN_ADDRESS_FAILURES
        if auth_limits.blocked(account) or auth_limits.blocked(everyone, rate=address_rate):
            raise PermissionDenied("too many failed sign-ins; wait and try again")  # stops Django's loop
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            auth_limits.record_failure(account)
            auth_limits.record_failure(everyone, rate=address_rate)
        return user
