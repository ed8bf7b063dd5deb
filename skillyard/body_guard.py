"""An ASGI guard in front of Django: what must be decided before a request body is read.

The server (uvicorn) reads bodies on its event loop, so a slow upload holds one connection and
no worker; this guard bounds what a body may cost and answers early where the headers suffice:

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
import time

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
            refusal = await _credentials_problem(headers, meta)
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


async def _credentials_problem(headers: dict[str, str], meta: dict[str, str]) -> tuple[int, str, str] | None:
    """(status, code, detail) when a publish carries no usable credentials; None to let it in."""
    authorization = headers.get("authorization", "")
    if not authorization:
        if "sessionid=" in headers.get("cookie", ""):
            return None  # a browser session: Django checks it (and CSRF) after the body
        return 401, "auth.required", "Publishing needs `Authorization: Bearer <token>`."
    scheme, _, secret = authorization.partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        return None  # not ours to judge here: the API answers it with its usual problem
    return await sync_to_async(_token_problem)(secret.strip(), meta)


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
    from registry.api.problems import CONTENT_TYPE, problem

    body = json.dumps(problem(status, code, detail)).encode()
    headers = [
        (b"content-type", CONTENT_TYPE.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    if auth:
        headers.append((b"www-authenticate", b'Bearer realm="skillyard"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
