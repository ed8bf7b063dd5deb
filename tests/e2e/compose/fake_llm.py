"""The LLM of the compose test, faked at the HTTP edge: an OpenAI-compatible endpoint that holds
the first chat request open (so a worker is caught mid-check, in the manifest check, when the test
kills it) and answers every later one 503 (so the manifest is built offline and the check ends).

Runs in the compose network (tests/e2e/compose/fake-llm.yaml) with the standard library only. Each
request is logged as ``chat request N from ADDRESS``: the test finds the worker to kill by it.
"""

from __future__ import annotations

import itertools
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOLD_SECONDS = 600  # longer than the test waits for its kill: the first request never gets an answer
COUNTER = itertools.count(1)


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        number = next(COUNTER)
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        print(f"chat request {number} from {self.client_address[0]}", flush=True)
        if number == 1:
            time.sleep(HOLD_SECONDS)
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"error": {"message": "the fake LLM does not answer"}}')

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("0.0.0.0", 8000), Handler).serve_forever()
