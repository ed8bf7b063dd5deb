"""A scripted OpenAI-compatible chat-completions server on loopback: the LLM faked at the HTTP edge.

    with FakeChatServer([reply_calling("load_skill", name="notes"), reply_saying("Done.")]) as llm:
        model = OpenAIChat(llm.base_url, model="fake", api_key="sk-test")
        ...
    llm.requests   # every request body, in order; llm.headers their headers

Each step of the script is an assistant message, or a function of the request body giving one
(to answer what the conversation holds). A request beyond the script is answered 500.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Step = dict | Callable[[dict], dict]


def reply_saying(text: str) -> dict:
    return {"role": "assistant", "content": text}


def reply_calling(tool: str, **arguments) -> dict:
    call = {
        "id": f"call_{tool}_{len(json.dumps(arguments))}",
        "type": "function",
        "function": {"name": tool, "arguments": json.dumps(arguments)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


class FakeChatServer:
    def __init__(self, script: list[Step]) -> None:
        self.script = list(script)
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    def __enter__(self) -> FakeChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, body: dict) -> tuple[int, dict]:
        self.requests.append(body)
        if len(self.requests) > len(self.script):
            return 500, {"error": {"message": "the script has no more replies"}}
        step = self.script[len(self.requests) - 1]
        message = step(body) if callable(step) else step
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return 200, {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server name
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                fake.headers.append(dict(self.headers))
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                self._send(*fake._answer(body))

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:  # quiet
                pass

        return Handler
