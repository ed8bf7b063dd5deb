"""Guards in front of Django, for ASGI and WSGI: what must be decided before a request body is read.

Under ASGI (uvicorn, `make run`) the server reads bodies on its event loop, so a slow upload
holds one connection and no worker. Under WSGI (gunicorn's threads, scripts/web.sh) a body is
read by the thread serving the request: there a proxy that buffers bodies (compose's nginx)
keeps slow clients away, and :class:`WsgiBodyGuard` bounds what gets through all the same.
Both guards bound what a body may cost and answer early where the headers suffice:

- a declared ``Content-Length`` over the archive limit: 413 before a byte of body;
- a publish (``POST /api/v1/skills/<name>/versions``) without valid credentials: 401 before
  its body (an anonymous 45 MB upload was once read whole to answer 401);
- a body that stalls longer than ``SKILLYARD_BODY_IDLE_SECONDS`` between chunks, takes longer
  than ``SKILLYARD_BODY_SECONDS`` in all, or grows past the limit: the request is cut off (408
  or 413) and Django sees a disconnect.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from collections.abc import Callable, Iterable

from asgiref.sync import sync_to_async
from django.conf import settings

PUBLISH_PATH = re.compile(r"^/api/v1/skills/[^/]+/versions/?$")


class BodyGuard:
    def __init__(self, app) -> None:  # noqa: ANN001 (an ASGI application)
        self.app = app

    async def __call__(self, scope, receive, send) -> None:  # noqa: ANN001
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        limit = settings.SKILLYARD_MAX_UPLOAD_BYTES + settings.SKILLYARD_UPLOAD_OVERHEAD_BYTES
        declared = _int(headers.get("content-length"))
        if declared is not None and declared > limit:
            return await _problem(
                send, 413, "archive.too_large", f"The upload is {declared} bytes; the limit is {limit}."
            )
        if scope["method"] == "POST" and PUBLISH_PATH.match(scope["path"]):
            meta = {
                "REMOTE_ADDR": (scope.get("client") or ("", 0))[0],
                "HTTP_X_FORWARDED_FOR": headers.get("x-forwarded-for", ""),
            }
            refusal = await sync_to_async(_credentials_problem)(headers, meta)
            if refusal:
                status, code, detail = refusal
                return await _problem(send, status, code, detail, auth=status == 401)
        guarded = _GuardedBody(receive, limit)
        started = False

        async def tracking_send(message) -> None:  # noqa: ANN001
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, guarded.receive, tracking_send)
        if guarded.cut and not started:
            status, code, detail = guarded.cut
            await _problem(send, status, code, detail)


class _GuardedBody:
    """``receive`` with an idle timeout, a total deadline and a byte limit on the body."""

    def __init__(self, receive, limit: int) -> None:  # noqa: ANN001
        self._receive = receive
        self.limit = limit
        self.idle = settings.SKILLYARD_BODY_IDLE_SECONDS
        self.deadline = time.monotonic() + settings.SKILLYARD_BODY_SECONDS
        self.seen = 0
        self.done = False
        self.cut: tuple[int, str, str] | None = None

    async def receive(self) -> dict:
        if self.done or self.cut:
            return await self._receive() if not self.cut else {"type": "http.disconnect"}
        wait = min(self.idle, max(0.0, self.deadline - time.monotonic()))
        try:
            message = await asyncio.wait_for(self._receive(), timeout=wait)
        except TimeoutError:
            self.cut = (408, "request.body_timeout", "The request body arrived too slowly; send it again.")
            return {"type": "http.disconnect"}
        if message["type"] == "http.request":
            self.seen += len(message.get("body", b""))
            if self.seen > self.limit:
                self.cut = (413, "archive.too_large", f"The upload is over the limit of {self.limit} bytes.")
                return {"type": "http.disconnect"}
            self.done = not message.get("more_body", False)
        return message


def _credentials_problem(headers: dict[str, str], meta: dict[str, str]) -> tuple[int, str, str] | None:
    """(status, code, detail) when a publish carries no usable credentials; None to let it in."""
    authorization = headers.get("authorization", "")
    if not authorization:
        if "sessionid=" in headers.get("cookie", ""):
            return None  # a browser session: Django checks it (and CSRF) after the body
        return 401, "auth.required", "Publishing needs `Authorization: Bearer <token>`."
    scheme, _, secret = authorization.partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        return None  # not ours to judge here: the API answers it with its usual problem
    return _token_problem(secret.strip(), meta)


def _token_problem(secret: str, meta: dict[str, str]) -> tuple[int, str, str] | None:
    from registry import auth_limits
    from registry.clients import client_address
    from registry.errors import Unauthenticated
    from registry.services import token_authenticate

    try:
        token_authenticate(secret=secret)
    except Unauthenticated as exc:
        if auth_limits.bad_token_counted(f"ip:{client_address(meta)}"):
            return 429, "throttled", "Too many requests with bad tokens from this address."
        return 401, exc.code, exc.message
    return None


async def _problem(send, status: int, code: str, detail: str, *, auth: bool = False) -> None:  # noqa: ANN001
    body, headers = _problem_parts(status, code, detail, auth=auth)
    raw = [(k.lower().encode(), v.encode()) for k, v in headers]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _problem_parts(status: int, code: str, detail: str, *, auth: bool = False) -> tuple[bytes, list[tuple[str, str]]]:
    from registry.api.problems import CONTENT_TYPE, problem

    body = json.dumps(problem(status, code, detail)).encode()
    headers = [("Content-Type", CONTENT_TYPE), ("Content-Length", str(len(body))), ("Connection", "close")]
    if auth:
        headers.append(("WWW-Authenticate", 'Bearer realm="skillyard"'))
    return body, headers


class BodyCut(Exception):
    """The body broke a limit while Django read it: the guard answers instead of the view."""


class WsgiBodyGuard:
    """The same rules for a WSGI server: 413 for a declared length over the limit and 401 for a
    publish without credentials, before the body; then each read of the body waits at most
    ``SKILLYARD_BODY_IDLE_SECONDS`` (a timeout on gunicorn's socket while the read lasts), the
    whole body ``SKILLYARD_BODY_SECONDS``, and its size is counted. A body cut off answers 408
    or 413, whatever the view made of the broken read."""

    def __init__(self, app: Callable) -> None:
        self.app = app

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        limit = settings.SKILLYARD_MAX_UPLOAD_BYTES + settings.SKILLYARD_UPLOAD_OVERHEAD_BYTES
        declared = _int(environ.get("CONTENT_LENGTH") or None)
        if declared is not None and declared > limit:
            return _wsgi_problem(
                start_response, 413, "archive.too_large", f"The upload is {declared} bytes; the limit is {limit}."
            )
        if environ["REQUEST_METHOD"] == "POST" and PUBLISH_PATH.match(environ.get("PATH_INFO", "")):
            headers = {"authorization": environ.get("HTTP_AUTHORIZATION", ""), "cookie": environ.get("HTTP_COOKIE", "")}
            meta = {key: environ.get(key, "") for key in ("REMOTE_ADDR", "HTTP_X_FORWARDED_FOR")}
            if refusal := _credentials_problem(headers, meta):
                status, code, detail = refusal
                return _wsgi_problem(start_response, status, code, detail, auth=status == 401)
        guarded = _GuardedInput(environ["wsgi.input"], environ.get("gunicorn.socket"), limit)
        environ["wsgi.input"] = guarded
        answered: list = []

        def capture(status: str, headers: list, exc_info=None):  # noqa: ANN001, ANN202
            answered[:] = [status, headers, exc_info]
            return lambda data: None  # the legacy write(): unused by Django

        body = self.app(environ, capture)
        if guarded.cut:
            if hasattr(body, "close"):
                body.close()
            status, code, detail = guarded.cut
            return _wsgi_problem(start_response, status, code, detail)
        start_response(*answered)
        return body


class _GuardedInput:
    """``wsgi.input`` with an idle timeout per read, a total deadline and a byte limit."""

    def __init__(self, inner, sock: socket.socket | None, limit: int) -> None:  # noqa: ANN001
        self._inner, self._sock, self.limit = inner, sock, limit
        self.idle = settings.SKILLYARD_BODY_IDLE_SECONDS
        self.deadline = time.monotonic() + settings.SKILLYARD_BODY_SECONDS
        self.seen = 0
        self.cut: tuple[int, str, str] | None = None

    def read(self, size: int = -1) -> bytes:
        return self._guarded(self._inner.read, size)

    def readline(self, size: int = -1) -> bytes:
        return self._guarded(self._inner.readline, size)

    def _guarded(self, read: Callable[[int], bytes], size: int) -> bytes:
        from django.core.exceptions import BadRequest

        if self.cut:
            raise BadRequest(self.cut[2])
        wait = min(self.idle, self.deadline - time.monotonic())
        try:
            if wait <= 0:
                raise TimeoutError
            if self._sock is not None:
                self._sock.settimeout(wait)
            data = read(size)
        except TimeoutError:
            self.cut = (408, "request.body_timeout", "The request body arrived too slowly; send it again.")
            raise BadRequest(self.cut[2]) from None
        finally:
            if self._sock is not None:
                self._sock.settimeout(None)
        self.seen += len(data)
        if self.seen > self.limit:
            self.cut = (413, "archive.too_large", f"The upload is over the limit of {self.limit} bytes.")
            raise BadRequest(self.cut[2])
        return data


def _wsgi_problem(start_response: Callable, status: int, code: str, detail: str, *, auth: bool = False) -> list[bytes]:
    from http import HTTPStatus

    body, headers = _problem_parts(status, code, detail, auth=auth)
    start_response(f"{status} {HTTPStatus(status).phrase}", headers)
    return [body]


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
