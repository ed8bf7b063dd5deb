"""Sign-in (Django admin, the catalog's /accounts/login/) through the usual model backend, with
failed attempts limited per client address and per username (registry/auth_limits.py)."""

from __future__ import annotations

from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied

from registry import auth_limits
from registry.clients import client_address


class ThrottledModelBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):  # noqa: ANN001
        who = [f"user:{(username or '').strip().lower()}"]
        if request is not None:
            who.append(f"ip:{client_address(request.META)}")
        if auth_limits.blocked(*who):
            raise PermissionDenied("too many failed sign-ins; wait and try again")  # stops Django's loop
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            auth_limits.record_failure(*who)
        return user
