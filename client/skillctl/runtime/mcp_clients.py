"""The MCP servers of loaded skills (a skill's ``mcp`` block), for one SkillSet session.

A server starts when its skill is loaded, from the :class:`~skillctl.runtime.mcp_spec.ServerSpec`
of a command the user trusted (:mod:`skillctl.runtime.mcp_spec`: without trust there is no spec,
so nothing starts). The SDK's stdio client runs the command (in the skill folder) and
does the handshake; its tools are listed once and offered as ``mcp:<skill>.<tool>``. It stops
after ``idle_timeout`` seconds without a call, when the session closes, and after a call
timed out (a server that did not answer is not trusted with the next call); it is started
again by the next call of one of its tools, if the files it runs are still the trusted ones.
A server slower than ``startup_timeout`` to answer the handshake is killed. A crash is
reported as a tool error, never raised.

SkillSet is synchronous and the SDK is async: the servers live on one event loop in a daemon
thread, and every call into it has a deadline, so a hung server never hangs the agent.

Secrets (the values of secret vars, config ``apiKey``/``env``, and any value expanded into a
variable whose name says token/key/secret/password) are masked in every result, error and log
line; a server's stderr goes to a private temporary file, never to ours, and only its masked
tail is quoted in an error.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any

from skillctl.errors import SkillctlError
from skillctl.runtime.mcp_spec import McpServerError, ServerSpec
from skillctl.runtime.mcp_trust import named_files
from skillctl.runtime.sdk import require_mcp

log = logging.getLogger("skillctl.runtime.mcp")

CALL_TIMEOUT_S = 120.0  # the longest an agent waits for one tool; then it gets an error
STOP_TIMEOUT_S = 10.0  # the SDK's shutdown: close stdin, 2 s, SIGTERM, 2 s, SIGKILL
DEADLINE_MARGIN_S = 5.0  # the caller's backstop over the loop's own deadlines
STDERR_TAIL_CHARS = 1500  # what of a server's stderr an error quotes


@dataclass(frozen=True)
class McpTool:
    skill: str
    name: str  # the server's own name for the tool
    description: str
    input_schema: dict

    @property
    def qualified(self) -> str:
        return f"mcp:{self.skill}.{self.name}"


class _Loop:
    """One asyncio event loop on a daemon thread; the caller's side waits with a deadline."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="skillctl-mcp", daemon=True)
        self.thread.start()

    def run(self, coro, *, timeout: float):
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(STOP_TIMEOUT_S)
        if not self.thread.is_alive():
            self.loop.close()


class _Server:
    """One skill's server, on the loop. Each start has an owner task holding the SDK client
    (entered and left in that one task, as anyio requires) until it is told to stop or has
    been idle too long. A server stopped after a crash or a timeout winds down in the
    background, so the agent gets its answer at once; ``stop()`` waits for every owner."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.tools: list[McpTool] | None = None  # listed at the first start, kept across restarts
        self._client: Any = None  # the current owner's client (the SDK's); None when no server answers calls
        self._stop: asyncio.Event | None = None  # the current owner's stop signal
        self._owners: set[asyncio.Task] = set()  # current and winding-down owners
        self._start_lock: asyncio.Lock | None = None
        self._stderr: Any = None  # a temporary file holding the server's stderr
        self._inflight = 0
        self._last_used = 0.0

    @property
    def running(self) -> bool:
        return self._client is not None

    async def ensure_running(self) -> None:
        self._start_lock = self._start_lock or asyncio.Lock()
        async with self._start_lock:
            if not self.running:
                await self._start()

    async def _start(self) -> None:
        if named_files(self.spec.cwd, [self.spec.command, *self.spec.args]) != self.spec.files:
            # Started again after idling: what the user trusted must still be what runs.
            raise self._error(
                "mcp.trust_changed", "was not started: a file it runs changed since the user trusted it", stderr=False
            )
        started = time.monotonic()
        ready = asyncio.get_running_loop().create_future()
        self._stop, self._stderr = asyncio.Event(), tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        owner = asyncio.create_task(self._own(ready, self._stop), name=f"mcp:{self.spec.skill}")
        self._owners.add(owner)
        owner.add_done_callback(self._owners.discard)
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.spec.startup_timeout)
        except TimeoutError:
            owner.cancel()  # the SDK's shutdown then kills the process, in the background
            raise self._error(
                "mcp.start_timeout", f"did not answer the MCP handshake within {self.spec.startup_timeout:g} s"
            ) from None
        except Exception as exc:  # noqa: BLE001 - whatever the SDK or the spawn raised
            raise self._error("mcp.start_failed", f"could not start: {_describe(exc)}") from None
        log.info(
            "MCP server of %s started in %.2f s: %d tools",
            self.spec.skill,
            time.monotonic() - started,
            len(self.tools or []),
        )

    async def _own(self, ready: asyncio.Future, stop: asyncio.Event) -> None:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=self.spec.command, args=list(self.spec.args), env=self.spec.env, cwd=self.spec.cwd
        )
        client = None
        try:
            # Legacy mode: the initialize handshake every MCP server speaks, old SDKs included.
            async with Client(stdio_client(params, errlog=self._stderr), mode="legacy") as client:
                listed = (await client.list_tools()).tools
                self.tools = [
                    McpTool(self.spec.skill, t.name, t.description or "", dict(t.input_schema or {})) for t in listed
                ]
                self._client, self._last_used = client, time.monotonic()
                ready.set_result(None)
                await self._until_stopped_or_idle(stop)
                self._retire(client)
        except Exception as exc:  # noqa: BLE001 - reported through `ready` or the next call
            if not ready.done():
                ready.set_exception(exc)
        finally:
            self._retire(client)

    async def _until_stopped_or_idle(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            left = self._last_used + self.spec.idle_timeout - time.monotonic()
            if left <= 0 and self._inflight == 0:
                log.info("MCP server of %s stopped after %g s idle", self.spec.skill, self.spec.idle_timeout)
                return
            try:
                await asyncio.wait_for(stop.wait(), max(left, 0.05))
            except TimeoutError:
                continue

    def _retire(self, client=None) -> None:
        """No more calls to this server (``client``: only if it is still the current one)."""
        if client is None or self._client is client:
            self._client = None
            if self._stop is not None:
                self._stop.set()

    async def call(self, tool: str, arguments: dict, timeout: float) -> str:
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        await self.ensure_running()
        client = self._client
        self._inflight += 1
        try:
            result = await asyncio.wait_for(client.call_tool(tool, arguments), timeout)
        except TimeoutError:
            self._retire(client)
            raise self._error(
                "mcp.timeout", f"gave no answer to {tool} within {timeout:g} s (stopped; the next call starts it again)"
            ) from None
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:  # the server answered with an error
                raise self._error("mcp.tool_error", f"refused {tool}: {exc.message}") from None
            self._retire(client)
            raise self._error("mcp.crashed", f"exited during {tool} (it is started again by the next call)") from None
        finally:
            self._inflight -= 1
            self._last_used = time.monotonic()
        if result.is_error:
            raise self._error("mcp.tool_error", f"{tool} failed: {_result_text(result)}", stderr=False)
        return self.spec.mask(_result_text(result))

    async def stop(self) -> None:
        """Stop the server and wait (bounded) until every process of this skill is gone."""
        self._retire()
        owners = [t for t in self._owners if not t.done()]
        if owners:
            _, late = await asyncio.wait(owners, timeout=STOP_TIMEOUT_S)
            for owner in late:
                owner.cancel()

    def _error(self, code: str, what: str, *, stderr: bool = True) -> McpServerError:
        tail = self._stderr_tail() if stderr else ""
        message = f"the MCP server of skill {self.spec.skill!r} {what}" + (
            f"; its stderr ends with: {tail}" if tail else ""
        )
        log.warning("%s (%s)", self.spec.mask(message), code)
        return McpServerError(self.spec.mask(message), code=code, hint=_HINTS.get(code))

    def _stderr_tail(self) -> str:
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            return self._stderr.read()[-STDERR_TAIL_CHARS:].strip()
        except (OSError, ValueError, AttributeError):
            return ""


_HINTS = {
    "mcp.start_timeout": "A server fetched by npx/uvx may need a first install; raise mcp.startup_timeout in SKILL.md.",
    "mcp.start_failed": "Check the skill's mcp.command (it runs in the skill folder) and its env.",
    "mcp.crashed": "Call the tool again to start the server anew; report the crash to the skill's author if it repeats.",
    "mcp.timeout": "The tool may need more time than the agent allows, or the server hung.",
    "mcp.trust_changed": "The user trusts the new files with `skillctl mcp trust` and the skill's name.",
}


def _describe(exc: BaseException) -> str:
    """One line for an exception from the SDK (its task groups wrap errors in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _result_text(result) -> str:
    parts = []
    for block in result.content:
        if getattr(block, "type", "") == "text":
            parts.append(block.text)
        elif getattr(getattr(block, "resource", None), "text", None) is not None:
            parts.append(block.resource.text)
        else:
            parts.append(f"[{getattr(block, 'type', 'content')} omitted]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


class McpClients:
    """The MCP servers of one session, driven from synchronous code.

    clients = McpClients()
    tools = clients.start(server_spec(skill, config=config))   # on load_skill
    text = clients.call("github", "search_issues", {"q": "bug"})
    clients.close()                                              # SkillSet.close()
    """

    def __init__(self, *, call_timeout: float = CALL_TIMEOUT_S) -> None:
        require_mcp()
        self.call_timeout = call_timeout
        self._servers: dict[str, _Server] = {}
        self._loop: _Loop | None = None
        self._lock = threading.Lock()

    def start(self, spec: ServerSpec) -> list[McpTool]:
        """Start ``spec``'s server (a running one is reused) and return its tools."""
        with self._lock:
            server = self._servers.get(spec.skill)
            if server is None or server.spec != spec:
                if server is not None:
                    self._run(server.stop(), STOP_TIMEOUT_S)
                server = self._servers[spec.skill] = _Server(spec)
        self._run(server.ensure_running(), spec.startup_timeout + DEADLINE_MARGIN_S, server)
        return list(server.tools or [])

    def tools(self) -> list[McpTool]:
        """The tools of every started server (also while one is stopped for idleness)."""
        return [tool for server in list(self._servers.values()) for tool in (server.tools or [])]

    def running(self, skill: str) -> bool:
        server = self._servers.get(skill)
        return server is not None and server.running

    def call(self, skill: str, tool: str, arguments: dict[str, Any]) -> str:
        """The text of one tool call, or McpServerError (after at most the call timeout, plus the
        startup timeout when the server must be started again first)."""
        server = self._servers.get(skill)
        if server is None or tool not in {t.name for t in server.tools or []}:
            raise SkillctlError(
                f"no MCP tool {tool!r} for skill {skill!r}", hint="Load the skill first.", code="tool.unknown"
            )
        budget = self.call_timeout + (0 if server.running else server.spec.startup_timeout) + DEADLINE_MARGIN_S
        return self._run(server.call(tool, arguments, self.call_timeout), budget, server)

    def stop(self, skill: str) -> None:
        """Stop ``skill``'s server and forget its tools (the skill was removed)."""
        with self._lock:
            server = self._servers.pop(skill, None)
        if server is not None:
            self._run(server.stop(), STOP_TIMEOUT_S + DEADLINE_MARGIN_S, server)

    def close(self) -> None:
        """Stop every server (each within the SDK's bounded shutdown) and the loop."""
        atexit.unregister(self.close)
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
            loop, self._loop = self._loop, None
        if loop is None:
            return
        if servers:
            try:
                loop.run(_stop_all(servers), timeout=STOP_TIMEOUT_S + DEADLINE_MARGIN_S)
            except TimeoutError:
                log.warning("MCP servers did not stop within %g s", STOP_TIMEOUT_S)
        loop.stop()

    def _run(self, coro, timeout: float, server: _Server | None = None):
        with self._lock:
            if self._loop is None:
                self._loop = _Loop()
                atexit.register(self.close)  # a forgotten close() must not leave servers behind
            loop = self._loop
        try:
            return loop.run(coro, timeout=timeout)
        except TimeoutError:
            who = server.spec.skill if server else "?"
            raise McpServerError(
                f"the MCP server of skill {who!r} did not answer within {timeout:g} s",
                code="mcp.timeout",
                hint=_HINTS["mcp.timeout"],
            ) from None


async def _stop_all(servers: list[_Server]) -> None:
    await asyncio.gather(*(s.stop() for s in servers), return_exceptions=True)
