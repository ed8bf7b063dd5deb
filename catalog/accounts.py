"""Signing in and signing up on the catalog (Django auth, sessions).

Sign-up exists only when the registry says so (``SKILLYARD_SIGNUP=open``): closed, its URL is a
404 and the sign-in page does not mention it. Its attempts are limited per client address like
failed sign-ins (registry/auth_limits.py), and the account is made by the registry's own
``user_create`` (a user and their personal namespace, under the namespace rules).

With single sign-on (catalog/sso.py) accounts and memberships come from the provider: sign-up is
closed whatever ``SKILLYARD_SIGNUP`` says, the sign-in page leads to the provider, and a password
signs in superusers only, the operator's way in when the provider is down or misconfigured.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from catalog.sso import provider_name, sso_enabled
from registry import auth_limits, services
from registry.clients import client_address
from registry.errors import RegistryError

BACKEND = "registry.auth_backends.ThrottledModelBackend"


def signup_open() -> bool:
    return settings.SKILLYARD_SIGNUP == "open" and not sso_enabled()


class PasswordSignInForm(AuthenticationForm):
    def confirm_login_allowed(self, user) -> None:  # noqa: ANN001
        super().confirm_login_allowed(user)
        if sso_enabled() and not user.is_superuser:
            raise ValidationError(
                "Sign in with %(provider)s.", code="sso_required", params={"provider": provider_name()}
            )


class LoginView(auth_views.LoginView):
    template_name = "catalog/login.html"
    authentication_form = PasswordSignInForm

    def get_context_data(self, **kwargs):  # noqa: ANN003, ANN201
        sso = {"sso_provider": provider_name()} if sso_enabled() else {}
        return {**super().get_context_data(**kwargs), "signup_open": signup_open(), **sso}


@require_http_methods(["GET", "POST"])
def signup(request):  # noqa: ANN001, ANN201
    if sso_enabled():  # accounts come from the provider: say where, instead of a bare 404
        return render(request, "catalog/signup.html", {"sso_provider": provider_name()}, status=404)
    if not signup_open():
        raise Http404("sign-up is closed")
    next_url = _next_url(request)
    form = UserCreationForm(request.POST or None)
    if request.method == "POST":
        who, rate = f"signup-ip:{client_address(request.META)}", settings.SKILLYARD_THROTTLE_SIGNUP
        if auth_limits.blocked(who, rate=rate):
            context = {"form": form, "next": next_url, "throttled": True}
            return render(request, "catalog/signup.html", context, status=429)
        auth_limits.record_failure(who, rate=rate)  # every attempt counts: accounts are the prize
        if form.is_valid() and (user := _user_create(form)) is not None:
            login(request, user, backend=BACKEND)
            messages.success(
                request, f"Welcome, {user.username}: your account is ready, and so is your namespace {user.username}."
            )
            return redirect(next_url)
    status = 422 if form.errors else 200
    return render(request, "catalog/signup.html", {"form": form, "next": next_url}, status=status)


def _user_create(form: UserCreationForm):  # noqa: ANN202
    """The new user, or None with the registry's refusal (a namespace rule) on the form."""
    try:
        return services.user_create(username=form.cleaned_data["username"], password=form.cleaned_data["password1"])
    except RegistryError as exc:
        form.add_error("username", f"{exc.message} ({exc.code})")
        return None


def _next_url(request) -> str:  # noqa: ANN001
    """Where the user was going (``next``), when it is a page of this site."""
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    safe = url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return wanted if wanted and safe else settings.LOGIN_REDIRECT_URL
