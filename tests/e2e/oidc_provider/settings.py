"""Settings of the test's OpenID provider (its own database, key, cookies and templates)."""

from __future__ import annotations

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA_DIR = Path(os.environ["OIDC_PROVIDER_DATA_DIR"])

SECRET_KEY = os.environ["OIDC_PROVIDER_SECRET_KEY"]
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]
# The issuer is SITE_URL + "/openid": what the registry is told, and what its tokens say.
SITE_URL = os.environ["OIDC_PROVIDER_URL"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oidc_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "tests.e2e.oidc_provider.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [HERE / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(DATA_DIR / "provider.sqlite3")}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
LOGIN_URL = "/accounts/login/"
# Both servers are on 127.0.0.1 and cookies ignore the port: the provider's have their own names,
# or the browser would hand each server the other's session.
SESSION_COOKIE_NAME = "provider_sessionid"
CSRF_COOKIE_NAME = "provider_csrftoken"

# The `groups` scope and claim (the user's Django groups), which the registry maps to memberships.
OIDC_EXTRA_SCOPE_CLAIMS = "tests.e2e.oidc_provider.claims.GroupsScopeClaims"
OIDC_USERINFO = "tests.e2e.oidc_provider.claims.userinfo"
