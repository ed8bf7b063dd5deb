"""A fake OpenAI-compatible chat endpoint on loopback: the only fake the manifest check allows.

``fake_llm.replies`` is a queue of scripted answers, each ``(status, body, headers, delay)``;
``fake_llm.requests`` records every request body. When the queue is empty it answers 500.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass
class FakeLLM:
    url: str
    replies: list[tuple[int, str, dict, float]] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    auth: list[str] = field(default_factory=list)

    def answer(self, content: str, *, status: int = 200, headers: dict | None = None, delay: float = 0) -> None:
        """Queue a chat completion whose message content is ``content``."""
        body = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})
        self.replies.append((status, body, headers or {}, delay))

    def raw(self, status: int, body: str = "", *, headers: dict | None = None, delay: float = 0) -> None:
        self.replies.append((status, body, headers or {}, delay))


@pytest.fixture
def fake_llm():
    state: dict = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's naming)
            fake: FakeLLM = state["fake"]
            length = int(self.headers.get("content-length", 0))
            fake.requests.append({"path": self.path, "body": json.loads(self.rfile.read(length))})
            fake.auth.append(self.headers.get("authorization", ""))
            status, body, headers, delay = fake.replies.pop(0) if fake.replies else (500, "", {}, 0)
            time.sleep(delay)
            try:
                self.send_response(status)
                for key, value in {"content-type": "application/json", **headers}.items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(body.encode())))
                self.end_headers()
                self.wfile.write(body.encode())
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout tests)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state["fake"] = FakeLLM(url=f"http://127.0.0.1:{server.server_address[1]}/v1")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state["fake"]
    server.shutdown()
    server.server_close()
