"""Settings for the Skillyard registry, read from the environment (embedded defaults).

With no environment at all the registry runs on one machine: SQLite and archives under
``SKILLYARD_DATA_DIR`` (default ``./.data``), Celery tasks run in-process. Production sets
``DATABASE_URL`` (PostgreSQL), ``SKILLYARD_STORAGE=s3`` with its ``SKILLYARD_S3_*`` settings,
``SKILLYARD_BROKER_URL`` (Redis) and ``SKILLYARD_CACHE_URL`` (Redis, shared throttle counters).
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("SKILLYARD_DATA_DIR", BASE_DIR / ".data")).resolve()


def env_bool(name: str, default: bool = False) -> bool:
    return os.environ.get(name, "1" if default else "0").strip().lower() in {"1", "true", "yes"}


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


DEBUG = env_bool("SKILLYARD_DEBUG")
# The embedded default (SQLite + local files, one machine) may run with nothing configured; a
# deployment on PostgreSQL or S3 (several processes or hosts) must say its key and host names.
EMBEDDED = not os.environ.get("DATABASE_URL") and os.environ.get("SKILLYARD_STORAGE", "fs") == "fs"


def _csv(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


def _secret_key() -> str:
    """SKILLYARD_SECRET_KEY; embedded: a random key kept (mode 0600) in the data folder."""
    if key := os.environ.get("SKILLYARD_SECRET_KEY", "").strip():
        return key
    if not (EMBEDDED or DEBUG):
        raise ImproperlyConfigured(
            "SKILLYARD_SECRET_KEY is not set: a deployment needs its own secret key "
            "(e.g. `python -c 'import secrets; print(secrets.token_urlsafe(50))'`)."
        )
    path = DATA_DIR / "secret_key"
    if not path.exists():
        # Written whole under another name, then linked into place: processes starting together
        # (`make run` starts several) never read a half-written key, and the first link wins.
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        fd, draft = tempfile.mkstemp(dir=DATA_DIR, prefix=".secret_key.")  # mode 0600
        try:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_urlsafe(50))
            os.link(draft, path)
        except FileExistsError:
            pass  # another process linked its key first: use that one
        finally:
            os.unlink(draft)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
# Never `*`: absolute URLs (downloads, the cacheable .well-known indexes) come from the Host
# header Django accepted. Embedded default: loopback names only.
ALLOWED_HOSTS = _csv("SKILLYARD_ALLOWED_HOSTS") or (["127.0.0.1", "localhost", "[::1]"] if EMBEDDED or DEBUG else [])
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured("SKILLYARD_ALLOWED_HOSTS is not set: list the host names this registry answers to.")
if "*" in ALLOWED_HOSTS and not DEBUG:
    raise ImproperlyConfigured("SKILLYARD_ALLOWED_HOSTS must name the hosts; '*' accepts any Host header.")
# A leading dot accepts a domain and all its subdomains: it must name a domain of at least two
# labels (`.example.com`), never a whole top-level domain (`.com`, `.localhost`, `.`) nor, for
# the common ones, a registry's second level (`.co.uk`, `.com.au`): anyone can own a name there.
_REGISTRY_SECOND_LEVELS = {"co", "com", "net", "org", "gov", "edu", "ac", "ne", "or", "go"}


def _host_too_wide(entry: str) -> bool:
    if not entry.startswith("."):
        return False
    labels = entry[1:].split(".")
    return "" in labels or len(labels) < 2 or (len(labels) == 2 and labels[0].lower() in _REGISTRY_SECOND_LEVELS)


for _host in ALLOWED_HOSTS:
    if _host_too_wide(_host):
        raise ImproperlyConfigured(
            f"SKILLYARD_ALLOWED_HOSTS: {_host!r} covers a whole top-level domain; name yours (e.g. '.example.com')."
        )
# The registry's public address (https://skills.example.com): absolute URLs use it when set.
SKILLYARD_PUBLIC_URL = os.environ.get("SKILLYARD_PUBLIC_URL", "").rstrip("/")
CSRF_TRUSTED_ORIGINS = _csv("SKILLYARD_CSRF_TRUSTED_ORIGINS")
# Proxies (CIDRs) whose X-Forwarded-For is believed (registry/clients.py); none by default.
SKILLYARD_TRUSTED_PROXIES = _csv("SKILLYARD_TRUSTED_PROXIES")
for _proxy in SKILLYARD_TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_proxy, strict=False)
    except ValueError:
        raise ImproperlyConfigured(f"SKILLYARD_TRUSTED_PROXIES: {_proxy!r} is not an address or CIDR") from None

# --- HTTPS (README "Running a registry") ---------------------------------------------------


def _https() -> bool:
    """SKILLYARD_HTTPS; unset, on for every deployment but the embedded default (one machine,
    loopback) and DEBUG: Secure cookies and HSTS unless the operator opts out with an explicit
    SKILLYARD_HTTPS=0 (a deployment that forgot the variable once ran with neither)."""
    value = os.environ.get("SKILLYARD_HTTPS", "").strip().lower()
    if not value:
        return not (EMBEDDED or DEBUG)
    if value not in {"1", "true", "yes", "0", "false", "no"}:
        raise ImproperlyConfigured(f"SKILLYARD_HTTPS must be 1 or 0, not {value!r}")
    return value in {"1", "true", "yes"}


HTTPS = _https()
_proxy_ssl = os.environ.get("SKILLYARD_PROXY_SSL_HEADER", "").strip()
if HTTPS:
    # Redirect plain http to https, except behind trusted proxies that do not say which requests
    # came over TLS (SKILLYARD_PROXY_SSL_HEADER): every request looks plain here, so a redirect
    # would loop; such a proxy redirects itself. SKILLYARD_SSL_REDIRECT overrides either way.
    _redirect_loops = bool(SKILLYARD_TRUSTED_PROXIES) and not _proxy_ssl
    SECURE_SSL_REDIRECT = env_bool("SKILLYARD_SSL_REDIRECT", default=not _redirect_loops)
    SECURE_HSTS_SECONDS = env_int("SKILLYARD_HSTS_SECONDS", 365 * 24 * 3600)  # a year, as preload lists ask
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SKILLYARD_HSTS_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env_bool("SKILLYARD_HSTS_PRELOAD", default=False)  # a choice for the operator
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = True
# Behind a TLS-terminating proxy: "X-Forwarded-Proto" (only that header, only from the proxy).
if _proxy_ssl:
    SECURE_PROXY_SSL_HEADER = (f"HTTP_{_proxy_ssl.upper().replace('-', '_')}", "https")
# HSTS preload commits every subdomain to HTTPS for good: the operator's decision
# (SKILLYARD_HSTS_PRELOAD=1), so the check that asks for it is not a deployment error here.
SILENCED_SYSTEM_CHECKS = ["security.W021"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "registry",
    "catalog",
]

MIDDLEWARE = [
    "skillyard.metrics.RequestMetrics",  # first: it times everything below it
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "catalog.middleware.ContentSecurityPolicy",
    "catalog.middleware.RegistryErrorPages",
]
WHITENOISE_USE_FINDERS = True  # the catalog's few static files, served without collectstatic too
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

ROOT_URLCONF = "skillyard.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
WSGI_APPLICATION = "skillyard.wsgi.application"

# --- database ------------------------------------------------------------------------------
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{DATA_DIR / 'skillyard.sqlite3'}",
        conn_max_age=env_int("SKILLYARD_DB_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
# PostgreSQL: each process borrows connections from a pool of its own (psycopg_pool), at most
# this many at once; a request waits for a free one instead of opening another. Without it every
# thread of an ASGI server held a connection of its own and two web processes took all of
# PostgreSQL's slots under load (bench/README, soak). 10: a web process is bound by its one CPU
# long before ten queries at once; size it with docs/operations.md ("Database connections"):
# web processes × this + Celery worker processes + 2 (beat, a manage.py) <= max_connections - reserve.
# 0 turns pooling off (then SKILLYARD_DB_CONN_MAX_AGE keeps one connection per thread).
SKILLYARD_DB_POOL_MAX_SIZE = env_int("SKILLYARD_DB_POOL_MAX_SIZE", 10)
# A request waits this long for a pooled connection before it fails (a 500, logged): far longer
# than a request holds one (milliseconds), shorter than a client's patience.
SKILLYARD_DB_POOL_TIMEOUT_SECONDS = float(os.environ.get("SKILLYARD_DB_POOL_TIMEOUT_SECONDS", "10"))
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and SKILLYARD_DB_POOL_MAX_SIZE > 0:
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # Django requires it: the pool keeps connections, not threads
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,  # one kept open while idle; the rest opened on demand, closed after 10 idle minutes
        "max_size": SKILLYARD_DB_POOL_MAX_SIZE,
        "timeout": SKILLYARD_DB_POOL_TIMEOUT_SECONDS,
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several gunicorn workers share one file: WAL lets readers run beside the one writer,
    # IMMEDIATE takes the write lock up front (no upgrade deadlock), and writers wait 20 s.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        timeout=20,
        transaction_mode="IMMEDIATE",
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- storage -------------------------------------------------------------------------------
# "archives" is the one named storage every archive goes through (registry/storage.py).
SKILLYARD_STORAGE = os.environ.get("SKILLYARD_STORAGE", "fs")
if SKILLYARD_STORAGE == "s3":
    ARCHIVE_STORAGE = {
        "BACKEND": "registry.storage.S3ArchiveStorage",
        "OPTIONS": {
            "bucket_name": os.environ.get("SKILLYARD_S3_BUCKET", "skillyard"),
            "endpoint_url": os.environ.get("SKILLYARD_S3_ENDPOINT_URL") or None,
            "region_name": os.environ.get("SKILLYARD_S3_REGION", "us-east-1"),
            "access_key": os.environ.get("SKILLYARD_S3_ACCESS_KEY_ID") or None,
            "secret_key": os.environ.get("SKILLYARD_S3_SECRET_ACCESS_KEY") or None,
            "location": os.environ.get("SKILLYARD_S3_PREFIX", ""),
            "addressing_style": os.environ.get("SKILLYARD_S3_ADDRESSING_STYLE", "path"),
            "default_acl": None,
            "querystring_auth": True,
            "file_overwrite": False,
        },
    }
elif SKILLYARD_STORAGE == "fs":
    ARCHIVE_STORAGE = {
        "BACKEND": "registry.storage.FileSystemArchiveStorage",
        "OPTIONS": {"location": str(DATA_DIR / "archives")},
    }
else:
    raise ValueError(f"SKILLYARD_STORAGE must be 'fs' or 's3', not {SKILLYARD_STORAGE!r}")

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("SKILLYARD_STATIC_ROOT", DATA_DIR / "static"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "archives": ARCHIVE_STORAGE,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
MEDIA_ROOT = DATA_DIR / "media"
# The embedded defaults write here (SQLite, archives, collected static files).
for _folder in (DATA_DIR, STATIC_ROOT):
    _folder.mkdir(parents=True, exist_ok=True)

# --- limits --------------------------------------------------------------------------------
MiB = 1024 * 1024
# The largest archive accepted (413 beyond): DESIGN section 4, the same as the client's limit.
SKILLYARD_MAX_UPLOAD_BYTES = env_int("SKILLYARD_MAX_UPLOAD_BYTES", 50 * MiB)
# Multipart part headers and the small form fields around the archive: a request declaring more
# than the archive limit plus this is refused (413) before its body is read.
SKILLYARD_UPLOAD_OVERHEAD_BYTES = 64 * 1024
# Uploads above this spill to a temp file instead of memory: a web worker holds few at once.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * MiB
# A request body must keep coming: a client that sends nothing for this long is cut off (408)
# instead of holding a connection; one chunk per 20 s is slower than any real upload.
SKILLYARD_BODY_IDLE_SECONDS = float(os.environ.get("SKILLYARD_BODY_IDLE_SECONDS", "20"))
# ... and must end: 50 MiB in 300 s is 170 KiB/s, slower than the slowest real link we serve.
SKILLYARD_BODY_SECONDS = float(os.environ.get("SKILLYARD_BODY_SECONDS", "300"))
# Their own folder, so `manage.py sweep_uploads` can remove what a killed worker left behind;
# the handler holds each file locked while its request lives, so the sweep knows a leftover.
FILE_UPLOAD_TEMP_DIR = str(DATA_DIR / "uploads")
Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)
FILE_UPLOAD_HANDLERS = [
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "registry.leftovers.LockedTemporaryFileUploadHandler",
]
# Tests only: seconds to pause after each MiB an archive write stores, so a test can kill the
# worker mid-write (tests/e2e). Always 0 in use.
SKILLYARD_TEST_STORAGE_WRITE_DELAY = float(os.environ.get("SKILLYARD_TEST_STORAGE_WRITE_DELAY", "0"))
# Tokens are checked on every request; recording last use more often than this is write noise.
SKILLYARD_TOKEN_LAST_USED_RESOLUTION_SECONDS = 60
# A token nobody asked an expiry for still ends: a forgotten CI secret must not live forever.
SKILLYARD_TOKEN_DEFAULT_EXPIRY_DAYS = env_int("SKILLYARD_TOKEN_DEFAULT_EXPIRY_DAYS", 365)

# --- cache (throttle counters, download counting windows, search and diff caches) -----------
# Redis through django-redis, failing open: while Redis is down (a restart, a network cut) every
# cache call answers "nothing there" instead of raising, so a throttle that cannot read its
# counter lets the request through and a counter that cannot be bumped is skipped; a 5xx for a
# cache outage would be worse than a few minutes without throttles. Each error is counted
# (skillyard_cache_errors_total) and logged at most once per SKILLYARD_CACHE_ERROR_LOG_SECONDS
# (skillyard.metrics.CacheErrors); /readyz still asks Redis itself and reports it down.
_cache_url = os.environ.get("SKILLYARD_CACHE_URL", "")
# A cache call gives up this soon (connect, then each reply): a lost Redis host must cost a
# request milliseconds, not the operating system's connect timeout; a healthy Redis answers in <1 ms.
SKILLYARD_CACHE_TIMEOUT_SECONDS = float(os.environ.get("SKILLYARD_CACHE_TIMEOUT_SECONDS", "0.25"))
# One log line per this many seconds per process while the cache is failing (the counter counts all).
SKILLYARD_CACHE_ERROR_LOG_SECONDS = float(os.environ.get("SKILLYARD_CACHE_ERROR_LOG_SECONDS", "30"))
CACHES: dict[str, dict[str, Any]] = {
    "default": (
        {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": _cache_url,
            "OPTIONS": {
                "IGNORE_EXCEPTIONS": True,
                "SOCKET_CONNECT_TIMEOUT": SKILLYARD_CACHE_TIMEOUT_SECONDS,
                "SOCKET_TIMEOUT": SKILLYARD_CACHE_TIMEOUT_SECONDS,
            },
        }
        if _cache_url
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}
DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True
DJANGO_REDIS_LOGGER = "skillyard.cache"  # its filter counts and rate-limits (LOGGING below)

# Anonymous API answers (list, search, detail, version) are kept whole in the cache under the
# data's generation (registry/respcache.py): a publish, yank, verdict or tag change is seen within
# a second; only download counts shown may be this many seconds old. 0 turns the cache off.
SKILLYARD_API_CACHE_SECONDS = env_int("SKILLYARD_API_CACHE_SECONDS", 30)
# How long a proxy or browser may reuse an answer without asking (Cache-Control max-age): 0 makes
# them revalidate by ETag each time, so a malicious verdict or a yank reaches readers at once.
SKILLYARD_API_CACHE_MAX_AGE = env_int("SKILLYARD_API_CACHE_MAX_AGE", 0)
# Archive bytes each web process keeps by sha256 (immutable, checked on first read): storage
# (S3) is read once per archive per process instead of on every download.
SKILLYARD_ARCHIVE_MEMORY_BYTES = env_int("SKILLYARD_ARCHIVE_MEMORY_BYTES", 64 * 1024 * 1024)
# Larger archives stream from storage each time: one 50 MiB archive must not push out hundreds
# of the small ones most skills are.
SKILLYARD_ARCHIVE_MEMORY_ITEM_BYTES = env_int("SKILLYARD_ARCHIVE_MEMORY_ITEM_BYTES", 1024 * 1024)

# A client's repeated downloads of one version count once in this window (downloads rank the
# catalog): an hour keeps CI reinstalls from counting as users, like most registries' counters.
SKILLYARD_DOWNLOAD_COUNT_WINDOW_SECONDS = env_int("SKILLYARD_DOWNLOAD_COUNT_WINDOW_SECONDS", 3600)
# Bad tokens a client address, and failed sign-ins one account from one address, may have in a
# window before further attempts are refused: enough for typos, far too few to guess.
SKILLYARD_THROTTLE_AUTH_FAILURES = os.environ.get("SKILLYARD_THROTTLE_AUTH_FAILURES", "10/min")
# Failed sign-ins one address may make over all accounts (the limit above counts per account and
# address): twice that, so two people behind one address can each use up their typos, while one
# address cannot spray guesses over many accounts.
SKILLYARD_THROTTLE_SIGNIN_ADDRESS_FAILURES = os.environ.get("SKILLYARD_THROTTLE_SIGNIN_ADDRESS_FAILURES", "20/min")
AUTHENTICATION_BACKENDS = ["registry.auth_backends.ThrottledModelBackend"]
# Who may create an account in the catalog (/accounts/signup/): "closed", the default, suits a
# company registry (accounts come from an admin or `manage.py issue_token --create-user`);
# "open" lets anyone sign up. `make run` opens it when it serves loopback only.
SKILLYARD_SIGNUP = os.environ.get("SKILLYARD_SIGNUP", "closed").strip().lower()
if SKILLYARD_SIGNUP not in {"open", "closed"}:
    raise ImproperlyConfigured(f"SKILLYARD_SIGNUP must be 'open' or 'closed', not {SKILLYARD_SIGNUP!r}")
# Sign-up attempts one client address may make in a window (every attempt counts): enough for an
# office behind one address, far too few to mint accounts in bulk.
SKILLYARD_THROTTLE_SIGNUP = os.environ.get("SKILLYARD_THROTTLE_SIGNUP", "10/hour")
# The checks Django's startproject turns on: an open sign-up must not take "1234" as a password.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"django.contrib.auth.password_validation.{name}"}
    for name in (
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    )
]

# --- single sign-on (OpenID Connect; docs/sso.md) -------------------------------------------
# On when an issuer is named: the catalog offers "Sign in with <provider>" (catalog/sso.py, on
# mozilla-django-oidc), local sign-up is closed whatever SKILLYARD_SIGNUP says, and password
# sign-in is kept for superusers only (the operator's way in when the provider is down).
SKILLYARD_OIDC_ISSUER = os.environ.get("SKILLYARD_OIDC_ISSUER", "").strip().rstrip("/")
SKILLYARD_OIDC_PROVIDER_NAME = os.environ.get("SKILLYARD_OIDC_PROVIDER_NAME", "").strip()  # else the issuer's host
# Where the groups are, and the prefix of the groups that name memberships (<prefix>:<org>:<role>).
SKILLYARD_OIDC_GROUPS_CLAIM = os.environ.get("SKILLYARD_OIDC_GROUPS_CLAIM", "groups").strip()
SKILLYARD_OIDC_GROUP_PREFIX = os.environ.get("SKILLYARD_OIDC_GROUP_PREFIX", "skillyard").strip()
if SKILLYARD_OIDC_ISSUER:
    _issuer = urlsplit(SKILLYARD_OIDC_ISSUER)
    # Tokens and client secrets cross this link: https, except a provider on this machine.
    _loopback = _issuer.hostname in {"127.0.0.1", "localhost", "::1"}
    if _issuer.scheme != "https" and not (_issuer.scheme == "http" and _loopback):
        raise ImproperlyConfigured("SKILLYARD_OIDC_ISSUER must be an https:// URL (http only on loopback).")
    OIDC_RP_CLIENT_ID = os.environ.get("SKILLYARD_OIDC_CLIENT_ID", "").strip()
    OIDC_RP_CLIENT_SECRET = os.environ.get("SKILLYARD_OIDC_CLIENT_SECRET", "").strip()
    if not (OIDC_RP_CLIENT_ID and OIDC_RP_CLIENT_SECRET):
        raise ImproperlyConfigured(
            "SKILLYARD_OIDC_ISSUER needs SKILLYARD_OIDC_CLIENT_ID and SKILLYARD_OIDC_CLIENT_SECRET."
        )
    OIDC_RP_SCOPES = os.environ.get("SKILLYARD_OIDC_SCOPES", "openid email profile groups").strip()
    if "openid" not in OIDC_RP_SCOPES.split():
        raise ImproperlyConfigured("SKILLYARD_OIDC_SCOPES must include 'openid'.")
    # The ID token is checked with the issuer's published public keys, never the client secret.
    OIDC_RP_SIGN_ALGO = os.environ.get("SKILLYARD_OIDC_SIGN_ALGO", "RS256").strip()
    if OIDC_RP_SIGN_ALGO not in {"RS256", "RS384", "RS512", "ES256", "ES384", "ES512"}:
        raise ImproperlyConfigured("SKILLYARD_OIDC_SIGN_ALGO must be RS256/384/512 or ES256/384/512.")
    OIDC_USE_NONCE = True
    OIDC_USE_PKCE = True
    OIDC_PKCE_CODE_CHALLENGE_METHOD = "S256"
    OIDC_TIMEOUT = 10  # seconds per call to the provider: a person is waiting
    OIDC_STORE_ACCESS_TOKEN = OIDC_STORE_ID_TOKEN = False  # used once at sign-in, never kept
    AUTHENTICATION_BACKENDS = [*AUTHENTICATION_BACKENDS, "catalog.sso.OpenIDConnectBackend"]

# --- upstream mirrors (registry/mirrors.py; docs/mirrors.md) -------------------------------
# SKILLYARD_UPSTREAMS: a JSON list of the registries this one mirrors skills from, e.g.
# [{"url": "https://skills.example", "kind": "skillyard", "allow": ["pdf-*", "owner:acme"],
#   "deny": ["pdf-evil"], "owner": "mirror-skills-example"}]; kind is skillyard (another
# Skillyard's API) or agent-skills (a site's /.well-known/agent-skills/index.json).
UPSTREAM_KINDS = ("skillyard", "agent-skills")
UPSTREAM_KEYS = {"url", "kind", "allow", "deny", "owner"}


def _upstreams() -> list[dict]:
    import json

    raw = os.environ.get("SKILLYARD_UPSTREAMS", "").strip()
    try:
        found = json.loads(raw) if raw else []
    except ValueError as exc:
        raise ImproperlyConfigured(f"SKILLYARD_UPSTREAMS is not JSON: {exc}") from None
    if not isinstance(found, list) or not all(isinstance(item, dict) for item in found):
        raise ImproperlyConfigured("SKILLYARD_UPSTREAMS must be a JSON list of objects.")
    for item in found:
        url = urlsplit(str(item.get("url", "")))
        if url.scheme not in {"http", "https"} or not url.hostname or set(item) - UPSTREAM_KEYS:
            raise ImproperlyConfigured(f"SKILLYARD_UPSTREAMS: {item!r} needs an http(s) url and only {UPSTREAM_KEYS}.")
        if item.setdefault("kind", "skillyard") not in UPSTREAM_KINDS:
            raise ImproperlyConfigured(f"SKILLYARD_UPSTREAMS: kind must be one of {UPSTREAM_KINDS}.")
    return found


SKILLYARD_UPSTREAMS = _upstreams()
# A first request waits for the upstream: each call gets this long to connect and between bytes,
SKILLYARD_MIRROR_TIMEOUT_SECONDS = float(os.environ.get("SKILLYARD_MIRROR_TIMEOUT_SECONDS", "10"))
# and a whole fetch (index or detail, then archives) this long, so a trickling upstream cannot hold a worker.
SKILLYARD_MIRROR_DEADLINE_SECONDS = float(os.environ.get("SKILLYARD_MIRROR_DEADLINE_SECONDS", "60"))
# A name no upstream has is asked again only after this long: a 404 must not cost a fetch each time.
SKILLYARD_MIRROR_MISS_SECONDS = env_int("SKILLYARD_MIRROR_MISS_SECONDS", 300)
# An index or skill detail document: ~20,000 index entries fit; a larger one is refused unread.
SKILLYARD_MIRROR_MAX_DOCUMENT_BYTES = env_int("SKILLYARD_MIRROR_MAX_DOCUMENT_BYTES", 8 * MiB)

# --- API -----------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "registry.api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "rest_framework.parsers.JSONParser",
        "rest_framework.parsers.MultiPartParser",
        "rest_framework.parsers.FormParser",
    ],
    "EXCEPTION_HANDLER": "registry.api.problems.exception_handler",
    "DEFAULT_PAGINATION_CLASS": "registry.api.pagination.Pagination",
    "PAGE_SIZE": 20,
    "DEFAULT_THROTTLE_CLASSES": [
        "registry.api.throttling.AnonThrottle",
        "registry.api.throttling.UserThrottle",
    ],
    # Generous for people and CI, low enough that one client cannot starve the others.
    "DEFAULT_THROTTLE_RATES": {
        "anon": os.environ.get("SKILLYARD_THROTTLE_ANON", "600/min"),
        "user": os.environ.get("SKILLYARD_THROTTLE_USER", "3000/min"),
        "publish": os.environ.get("SKILLYARD_THROTTLE_PUBLISH", "120/hour"),
    },
    "NUM_PROXIES": None,  # unused: registry/clients.py reads X-Forwarded-For from trusted proxies only
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Skillyard registry API",
    "DESCRIPTION": "Publish, find and download agent skills (the open Agent Skills format).",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/v1",
}

# --- jobs ----------------------------------------------------------------------------------
CELERY_BROKER_URL = os.environ.get("SKILLYARD_BROKER_URL", "memory://")
# Without a broker the checks run in a thread pool of the web process (worker/dispatch.py).
CELERY_TASK_ALWAYS_EAGER = False
CELERY_TASK_ACKS_LATE = True  # a task is acknowledged when done: a dead worker's task comes back
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1  # long checks: a worker takes one at a time
CELERY_TASK_TIME_LIMIT = 600
# The recovery of checks whose worker died or whose queue message was lost (worker/tasks.py,
# registry/services/checks.py checks_sweep). The defaults suit production; a test stack (compose-
# test) shortens them all so a killed worker's check comes back within seconds, accepting that a
# check slower than SKILLYARD_CHECK_STALE_SECONDS could then be run twice.
# Redis hands an unacknowledged task to another worker after this long (kill -9 of a worker);
# above the longest check (checks.run's hard limit, 420 s), so a slow check is not run twice at once.
SKILLYARD_BROKER_VISIBILITY_TIMEOUT = env_int("SKILLYARD_BROKER_VISIBILITY_TIMEOUT", 900)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": SKILLYARD_BROKER_VISIBILITY_TIMEOUT}
# A check `running` this long has outlived checks.run's hard time limit (420 s) plus a minute of
# bookkeeping, so its worker is dead: the sweep (and any redelivery) may take it over.
SKILLYARD_CHECK_STALE_SECONDS = env_int("SKILLYARD_CHECK_STALE_SECONDS", 480)
# A check still `pending` this long after it was queued has lost its message (Redis restarted
# without persistence, or the broker was down when the publish committed): the sweep queues it
# again. 600 s is longer than a deep backlog waits (1,000 queued scans drain in ~5 minutes on two
# workers); a message that was only late costs nothing, as the duplicate finds its check done
# or held by a live run and does nothing.
SKILLYARD_CHECK_PENDING_SECONDS = env_int("SKILLYARD_CHECK_PENDING_SECONDS", 600)
# How often the beat runs the sweep: well under both ages, so a lost check waits at most one more
# period; each sweep is two indexed queries.
SKILLYARD_CHECK_SWEEP_SECONDS = float(os.environ.get("SKILLYARD_CHECK_SWEEP_SECONDS", "120"))
# Re-scans after the scanner's rules change (worker/tasks.py checks.rescan): a scan takes well under
# a second, so 50 versions a minute keep a worker (or the two embedded threads) mostly free for
# new publishes while a registry of 10,000 versions is re-judged within a few hours.
SKILLYARD_RESCAN_BATCH = int(os.environ.get("SKILLYARD_RESCAN_BATCH", "50"))
SKILLYARD_RESCAN_INTERVAL_SECONDS = float(os.environ.get("SKILLYARD_RESCAN_INTERVAL_SECONDS", "60"))
CELERY_BEAT_SCHEDULE = {
    "checks-sweep": {"task": "checks.sweep", "schedule": SKILLYARD_CHECK_SWEEP_SECONDS},
    "checks-rescan": {"task": "checks.rescan", "schedule": SKILLYARD_RESCAN_INTERVAL_SECONDS},
}
# Queue the publish checks at all (tests not about them turn this off; the checks stay pending).
SKILLYARD_CHECKS_ENABLED = env_bool("SKILLYARD_CHECKS_ENABLED", default=True)
# The sandbox backend of the tests check: Docker, as DESIGN §9 says ("auto" allows bubblewrap).
SKILLYARD_TESTS_BACKEND = os.environ.get("SKILLYARD_TESTS_BACKEND", "docker")

# --- metrics and health (skillyard/metrics.py, registry/health.py; docs/operations.md) -------
# /metrics answers this bearer token, or clients in these networks (default: this machine only;
# the address is the one registry/clients.py believes, so a proxy must be a trusted one).
SKILLYARD_METRICS_TOKEN = os.environ.get("SKILLYARD_METRICS_TOKEN", "").strip()
SKILLYARD_METRICS_NETWORKS = _csv("SKILLYARD_METRICS_NETWORKS") or ["127.0.0.0/8", "::1/128"]
for _network in SKILLYARD_METRICS_NETWORKS:
    try:
        ipaddress.ip_network(_network, strict=False)
    except ValueError:
        raise ImproperlyConfigured(f"SKILLYARD_METRICS_NETWORKS: {_network!r} is not an address or CIDR") from None
# A folder shared by the web and worker processes of several hosts or containers: each process
# writes prometheus-client's multiprocess files under <dir>/<hostname>/ (set before the library
# is imported), and /metrics adds up all of them. PROMETHEUS_MULTIPROC_DIR alone serves one host.
SKILLYARD_METRICS_DIR = os.environ.get("SKILLYARD_METRICS_DIR", "").strip()
if SKILLYARD_METRICS_DIR and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    import socket

    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(Path(SKILLYARD_METRICS_DIR) / socket.gethostname())
if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).mkdir(parents=True, exist_ok=True)
# Probes reach a web process directly over plain http (a container's port): never redirected.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]

STATIC_URL = "/static/"
USE_TZ = True
TIME_ZONE = "UTC"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"cache_errors": {"()": "skillyard.metrics.CacheErrors"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"skillyard.cache": {"filters": ["cache_errors"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("SKILLYARD_LOG_LEVEL", "INFO")},
}
