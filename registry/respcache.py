"""Anonymous API reads kept whole in the shared cache, keyed by a generation of the registry's data.

List, search and detail cost 5-10 ms of ORM and serializer work each, and most of their readers
are anonymous installers and browsers asking the same few questions. Their answers are kept in
``caches["default"]`` (Redis in production: shared by every web process) for
``SKILLYARD_API_CACHE_SECONDS``, under a key holding:

- the **generation**: what the registry's data looks like now. Read from the database (the last
  audit event, since every write service records one; the last check update, since checks write
  none; the last skill summary change), plus a counter in the shared cache that every save of a
  row an answer is made of bumps (:data:`ANSWERED_FROM`, through Django's model signals, in
  whichever process saves it). Anything a write changes gives a new generation, so an answer from
  before it is never looked up again. The read costs a query, so a process keeps it for
  ``GENERATION_SECONDS`` and forgets it at once when it writes such a row itself; another
  process's write (a Celery worker's verdict, another web process's yank) is seen within that
  second;
- the request's path and query string.

A process also remembers the last few hundred answers it served by key (a key names its
generation, so they cannot go stale): a hot answer costs no cache round trip.

Only requests with no credentials at all are served from here or stored: an answer for a
signed-in user or a token may hold private skills and is never kept. What the cache does not
follow are the download counters (an ``F() + 1`` without an audit event): a count shown in a list
may be up to ``SKILLYARD_API_CACHE_SECONDS`` old, as on most registries.

Every kept answer carries an ``ETag`` (its body's digest): ``If-None-Match`` gives 304, and
``Cache-Control: public`` with ``Vary: Authorization, Cookie`` lets a proxy keep it too.
"""

from __future__ import annotations

import functools
import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models.signals import post_delete, post_save
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.utils.cache import patch_vary_headers

from registry.models import Advisory, AuditEvent, DistTag, Owner, Skill, SkillVersion, VersionCheck

# How long a process trusts the generation it read: a write by another process is served after
# at most this long. One query a second per process instead of one per request.
GENERATION_SECONDS = 1.0
KEY_PREFIX = "api-response"
BUMPS_KEY = f"{KEY_PREFIX}:bumps"
# The rows anonymous answers are made of: saving one starts a new generation. (Tokens, audit
# events and memberships never show in an anonymous answer; a token's last-use time is saved
# every minute it is used and must not empty the cache.)
ANSWERED_FROM = frozenset({Skill, SkillVersion, VersionCheck, DistTag, Owner, Advisory})
T = TypeVar("T")
_memo: dict[str, tuple[float, str]] = {}
_writes = 0  # rows of ANSWERED_FROM this process saved: an answer made across one is not kept
_lock = threading.Lock()


@dataclass(frozen=True)
class Kept:
    body: bytes
    content_type: str
    etag: str


def enabled() -> bool:
    return _seconds() > 0


def _seconds() -> int:
    # Answers are kept this long at most: the download counts they show are that old at worst.
    return int(getattr(settings, "SKILLYARD_API_CACHE_SECONDS", 30))


def generation() -> str:
    """The registry's data generation (see the module docstring), read at most once a second."""
    now = time.monotonic()
    with _lock:
        found = _memo.get("default")
    if found and now - found[0] < GENERATION_SECONDS:
        return found[1]
    value = f"{_read_generation()}-{cache.get(BUMPS_KEY, 0)}"
    with _lock:
        _memo["default"] = (now, value)
    return value


def _read_generation() -> str:
    """One query: the last audit event (id and time), the last check update, the last skill
    summary change. The ids and times of rows rolled back or deleted are never reused together."""
    audit, check, skill = (model._meta.db_table for model in (AuditEvent, VersionCheck, Skill))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT max(id) FROM {audit}), (SELECT max(created_at) FROM {audit}), "  # noqa: S608 (our table names)
            f"(SELECT max(updated_at) FROM {check}), (SELECT max(updated_at) FROM {skill})"
        )
        parts = cursor.fetchone()
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:24]


def forget_generation(sender, **_: object) -> None:  # noqa: ANN001 (a signal's arguments)
    """A registry row was saved or deleted in this process: a new generation for every process
    (the shared bump counter; a write that leaves no audit event, such as a check's verdict
    saved on its version, is caught here), read again here now and once the write commits."""
    global _writes
    if sender not in ANSWERED_FROM:
        return
    _writes += 1
    _bump()
    _clear_memo()
    transaction.on_commit(_bump)
    transaction.on_commit(_clear_memo)


def _bump() -> None:
    try:
        cache.incr(BUMPS_KEY)
    except ValueError:  # the first write since the cache started
        if not cache.add(BUMPS_KEY, 1, timeout=None):
            cache.incr(BUMPS_KEY)


def _clear_memo() -> None:
    with _lock:
        _memo.clear()


def is_anonymous(request) -> bool:  # noqa: ANN001 (a DRF or Django request)
    """No credentials of any kind: no Authorization header, no session cookie, no user."""
    meta = request.META
    if meta.get("HTTP_AUTHORIZATION") or settings.SESSION_COOKIE_NAME in request.COOKIES:
        return False
    user = getattr(request, "user", None)
    return user is None or not user.is_authenticated


def key_for(request) -> str | None:  # noqa: ANN001
    """The cache key of this request's answer, or None when it must not be kept."""
    if request.method not in ("GET", "HEAD") or not enabled() or not is_anonymous(request):
        return None
    # Host and scheme too: pagination links and download URLs in the body are absolute.
    where = f"{request.scheme}://{request.get_host()}{request.get_full_path()}"
    target = hashlib.sha256(where.encode()).hexdigest()[:32]
    return f"{KEY_PREFIX}:{generation()}:{target}"


class _Recent:
    """The answers this process served last, by key: a key names its generation, so what it holds
    never changes and a hot answer costs no cache round trip. Bounded by count; entries older than
    the cache time are not served."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[str, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self._lock:
            found = self._items.get(key)
            if found is None or time.monotonic() - found[0] > _seconds():
                return None
            self._items.move_to_end(key)
            return found[1]

    def put(self, key: str, value: Any) -> None:
        with self._lock:
            self._items[key] = (time.monotonic(), value)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


# Answers are a few KiB: 256 of them is a few MiB a process, enough for the hot list pages,
# searches and skills.
_recent = _Recent(256)


def lookup(key: str) -> Kept | None:
    found = _recalled(key)
    return found if isinstance(found, Kept) else None


def _recalled(key: str) -> Any:
    """What the key holds: from this process's recent answers, else from the shared cache."""
    if (found := _recent.get(key)) is not None:
        return found
    found = cache.get(key)
    if found is not None:
        _recent.put(key, found)
    return found


def keep(key: str, response: HttpResponseBase) -> None:
    """Store a rendered 200 answer and give it the headers a kept answer carries."""
    body = response.content  # type: ignore[attr-defined]
    kept = Kept(body=body, content_type=response["Content-Type"], etag=_etag(body))
    cache.set(key, kept, _seconds())
    _recent.put(key, kept)
    _public_headers(response, kept.etag)


def answer(request, kept: Kept) -> HttpResponse:  # noqa: ANN001
    """A kept answer, or 304 when the client holds it already."""
    if kept.etag in request.META.get("HTTP_IF_NONE_MATCH", ""):
        response = HttpResponse(status=304)
    else:
        response = HttpResponse(kept.body, content_type=kept.content_type)
    _public_headers(response, kept.etag)
    return response


def _public_headers(response: HttpResponseBase, etag: str) -> None:
    max_age = int(getattr(settings, "SKILLYARD_API_CACHE_MAX_AGE", 0))
    response["ETag"] = etag
    response["Cache-Control"] = f"public, max-age={max_age}" if max_age else "public, no-cache"
    patch_vary_headers(response, ("Authorization", "Cookie"))


def _etag(body: bytes) -> str:
    return f'"{hashlib.sha256(body).hexdigest()[:32]}"'


def private(response: HttpResponseBase) -> HttpResponseBase:
    """An answer for someone with credentials: no shared cache may keep it."""
    response["Cache-Control"] = "private, no-cache"
    patch_vary_headers(response, ("Authorization", "Cookie"))
    return response


def remembered(request, compute: Callable[[], T]) -> T:  # noqa: ANN001
    """``compute()``'s value, kept like an answer when the request carries no credentials (a
    download's resolved version and headers: registry/api/downloads.py); computed each time
    otherwise. An exception (404, 403) is never kept."""
    key = key_for(request)
    if key is None:
        return compute()
    value_key = f"{key}:value"
    found = _recalled(value_key)
    if found is not None:
        return found
    writes = _writes
    value = compute()
    if writes == _writes:
        cache.set(value_key, value, _seconds())
        _recent.put(value_key, value)
    return value


def cached_for_anonymous(view: Callable) -> Callable:
    """Wrap an APIView's ``get``: anonymous requests are answered from the cache when they can
    be, and a fresh 200 is kept once rendered. Throttles and authentication have run already."""

    @functools.wraps(view)
    def get(self, request, *args, **kwargs):  # noqa: ANN001, ANN202
        key = key_for(request)
        if key is None:
            return private(view(self, request, *args, **kwargs))
        if (kept := lookup(key)) is not None:
            return answer(request, kept)
        writes = _writes
        response = view(self, request, *args, **kwargs)
        # Not when this process wrote meanwhile (a mirror stored what was asked for): the answer
        # may be newer than the generation in its key.
        if response.status_code == 200 and writes == _writes:
            response.add_post_render_callback(lambda rendered: keep(key, rendered))
        return response

    return get


# Every registry row a process saves or deletes through the ORM (the services' writes) makes
# it read the generation again; other processes see the write through the generation itself.
for _signal in (post_save, post_delete):
    _signal.connect(forget_generation, dispatch_uid=f"respcache-{_signal}", weak=False)
