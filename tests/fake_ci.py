"""A CI endpoint on 127.0.0.1 for bisection tests: verifies `X-Perf-Signature`, records each
`runs.requested` body, answers 202 (401 for a bad signature), and optionally "runs" it."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeCI:
    def __init__(self, secret: str, on_request: Callable[[dict], None] | None = None):
        self.secret = secret.encode()
        self.received: list[dict] = []
        self.rejected = 0
        self.status = 202  # what the endpoint answers a well-signed request
        self.headers: dict[str, str] = {}  # extra response headers (Retry-After, say)
        self.on_request = on_request
        ci = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers["Content-Length"]))
                expected = "sha256=" + hmac.new(ci.secret, body, hashlib.sha256).hexdigest()
                if not hmac.compare_digest(self.headers.get("X-Perf-Signature", ""), expected):
                    ci.rejected += 1
                    self.send_response(401)
                    self.end_headers()
                    return
                doc = json.loads(body)
                ci.received.append(doc)
                self.send_response(ci.status)
                for name, value in ci.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if ci.status >= 300:
                    return
                if ci.on_request is not None:
                    threading.Thread(target=ci.on_request, args=(doc,), daemon=True).start()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/perf-runs"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
