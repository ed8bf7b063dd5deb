"""``skillctl mcp`` answers as the protocol says (issue 36 item 20): capabilities, unknown tools
and prompts, and faulty messages on stdio and streamable HTTP."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys

import anyio
import httpx
import pytest

from tests.client.runtime.conftest import skillctl_argv, wait_until
from tests.conftest import free_port

mcp = pytest.importorskip("mcp")
from mcp import Client, MCPError, StdioServerParameters  # noqa: E402

INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR = -32602, -32600, -32700


def read_line(proc, timeout: float = 30) -> dict:
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no reply: the client would hang until its timeout"
    return json.loads(proc.stdout.readline())


def test_faulty_lines_on_stdio_get_an_error_reply(project):
    proc = subprocess.Popen(
        skillctl_argv("mcp"), cwd=project, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        proc.stdin.write(b"{not json\n")
        proc.stdin.flush()
        parse = read_line(proc)
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 5, "method": 7}\n')
        proc.stdin.flush()
        invalid = read_line(proc)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert (parse["id"], parse["error"]["code"]) == (None, PARSE_ERROR)
    assert (invalid["id"], invalid["error"]["code"]) == (5, INVALID_REQUEST)


def test_capabilities_unknown_tools_and_prompts_over_stdio(project):
    async def run():
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "skillctl", "mcp"], env=dict(os.environ), cwd=str(project)
        )
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
            caps = client.server_capabilities
            codes = []
            for call in (lambda: client.call_tool("no_such_tool", {}), lambda: client.get_prompt("no_such_prompt")):
                with pytest.raises(MCPError) as err:
                    await call()
                codes.append(err.value.code)
            return caps, codes

    caps, codes = anyio.run(run)
    assert caps.prompts is None  # it has none, so it does not advertise them
    assert caps.tools.list_changed and caps.resources.list_changed
    assert codes == [INVALID_PARAMS, INVALID_PARAMS]


def test_an_invalid_request_over_http_is_invalid_request(project):
    port = free_port()
    proc = subprocess.Popen(skillctl_argv("mcp", "--http", str(port)), cwd=project, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: proc.poll() is not None or _listening(port), timeout=30, what="skillctl mcp --http")
        answer = httpx.post(
            f"http://127.0.0.1:{port}/mcp",
            json={"jsonrpc": "2.0", "id": 3, "method": 9},
            headers={"Accept": "application/json, text/event-stream"},
            timeout=10,
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert answer.status_code == 400
    body = answer.json()
    assert (body["id"], body["error"]["code"]) == (3, INVALID_REQUEST)


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0
