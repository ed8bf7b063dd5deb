"""The protocol edge of ``skillctl mcp``: what the SDK's transports leave to the server, done as
the MCP specification and JSON-RPC 2.0 say, in a thin layer over the SDK (never a patch of it).

- Capabilities: ``tools.listChanged`` and ``resources.listChanged`` are true (a loaded skill's
  own tools and the watcher change both); prompts are not advertised (there are none).
- stdio: a line that is not JSON gets ``-32700`` (id null); a message that is not a valid
  request gets ``-32600`` with its id when it carries one. The SDK's reader drops both, so a
  client waited for its timeout.
- streamable HTTP: an invalid request gets ``-32600`` (the SDK answers ``-32602`` with a
  dump of its validation errors).
- :class:`Notifier`: ``notifications/tools/list_changed`` and ``resources/list_changed`` to every
  connected client, from the event loop or from the watcher's thread.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from typing import Any

INVALID_REQUEST = -32600  # JSON-RPC 2.0
PARSE_ERROR = -32700
RESOURCE_NOT_FOUND = -32002  # MCP: resources/read of a URI the server does not have


def changes_options():
    """The list_changed flags every initialize answer carries."""
    from mcp.server import NotificationOptions

    return NotificationOptions(tools_changed=True, resources_changed=True)


def fault_reply(exc: Exception) -> dict | None:
    """The JSON-RPC error for an inbound line the SDK could not read (a pydantic ValidationError
    from its message adapter), or None for any other transport exception."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return None
    found = errors()
    if any(e.get("type") == "json_invalid" for e in found):
        return _error(None, PARSE_ERROR, "Parse error: the message is not JSON")
    message = next((e["input"] for e in found if isinstance(e.get("input"), dict)), None)
    return _error(_request_id(message), INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 request")


def _request_id(message: Any) -> str | int | None:
    value = message.get("id") if isinstance(message, dict) else None
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def _error(request_id, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


async def serve_stdio(server) -> None:
    """Serve ``server`` (the SDK's low-level Server) on stdin/stdout, answering faulty lines."""
    import anyio
    import mcp_types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    async with stdio_server() as (read_stream, write_stream):
        relay_in, relay_out = anyio.create_memory_object_stream[Any](0)

        async def relay() -> None:
            async with relay_in:
                async for item in read_stream:
                    if not isinstance(item, Exception):
                        await relay_in.send(item)
                    elif (reply := fault_reply(item)) is not None:
                        message = mcp_types.jsonrpc_message_adapter.validate_python(reply)
                        await write_stream.send(SessionMessage(message))

        async with anyio.create_task_group() as group:
            group.start_soon(relay)
            await server.run(relay_out, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()


def serve_http(server, *, host: str, port: int, log_level: str) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` until the process is stopped."""
    import anyio
    import uvicorn

    app = InvalidRequestAnswer(server.streamable_http_app(host=host))
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level.lower())
    anyio.run(uvicorn.Server(config).serve)


class InvalidRequestAnswer:
    """ASGI middleware: a POSTed body that is JSON but no valid JSON-RPC message is answered
    ``-32600`` here; everything else (parse errors included, which the SDK answers right) passes."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        body, more = b"", True
        while more:
            chunk = await receive()
            body += chunk.get("body", b"")
            more = chunk.get("more_body", False)
        reply = _invalid_request(body)
        if reply is not None:
            return await _send_json(send, 400, reply)
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.app(scope, replay, send)


def _invalid_request(body: bytes) -> dict | None:
    import mcp_types
    from pydantic import ValidationError

    try:
        data = json.loads(body)
    except ValueError:
        return None  # a parse error: the SDK's -32700 is right
    try:
        mcp_types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError:
        return _error(_request_id(data), INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 request")
    return None


async def _send_json(send, status: int, payload: dict) -> None:
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Notifier:
    """The connected clients (each SDK ServerSession seen in a request) and the loop they live
    on; tells them that the tools or resources changed. Never raises: a client gone is dropped."""

    def __init__(self) -> None:
        self._sessions: weakref.WeakSet = weakref.WeakSet()
        self._loop: asyncio.AbstractEventLoop | None = None

    def seen(self, session) -> None:
        self._loop = asyncio.get_running_loop()
        self._sessions.add(session)

    async def changed(self, *, tools: bool = False, resources: bool = False) -> None:
        for session in list(self._sessions):
            try:
                if tools:
                    await session.send_tool_list_changed()
                if resources:
                    await session.send_resource_list_changed()
            except Exception:  # noqa: BLE001 - a client that went away
                self._sessions.discard(session)

    def changed_from_thread(self, *, tools: bool = False, resources: bool = False) -> None:
        """:meth:`changed`, from another thread (the watcher's); nothing before a first request."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            asyncio.run_coroutine_threadsafe(self.changed(tools=tools, resources=resources), loop)
