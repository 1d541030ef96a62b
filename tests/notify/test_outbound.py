"""alerts.outbound: one resolution, every address checked, the connection pinned to a checked address."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from alerts import outbound
from alerts.notify.transports.base import PermanentError, TransientError, post

PUBLIC = "93.184.216.34"


def rebinding_resolver(answers: list[str], calls: list[str]):
    """getaddrinfo that answers the next address of `answers` at each call (a rebinding DNS server)."""

    def getaddrinfo(host, port, *args, **kwargs):
        calls.append(host)
        address = answers[min(len(calls) - 1, len(answers) - 1)]
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    return getaddrinfo


def test_it_connects_only_to_the_address_it_checked_when_dns_rebinds(monkeypatch, settings):
    settings.PERF_WEBHOOK_ALLOW_PRIVATE = False
    calls: list[str] = []
    monkeypatch.setattr(socket, "getaddrinfo", rebinding_resolver([PUBLIC, "127.0.0.1"], calls))
    connected: list[tuple] = []

    def create_connection(address, *args, **kwargs):  # never touches the network
        connected.append(address)
        raise ConnectionRefusedError("test: not connecting anywhere")

    monkeypatch.setattr(socket, "create_connection", create_connection)
    with pytest.raises(TransientError):
        post("http://hooks.example/perf", b"{}", {})
    assert calls == ["hooks.example"]  # resolved once
    assert connected == [(PUBLIC, 80)]  # and connected to what was checked, never to 127.0.0.1


def test_it_refuses_a_name_whose_first_answer_is_internal(monkeypatch, settings):
    settings.PERF_WEBHOOK_ALLOW_PRIVATE = False
    calls: list[str] = []
    monkeypatch.setattr(socket, "getaddrinfo", rebinding_resolver(["127.0.0.1", PUBLIC], calls))
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: pytest.fail("must not connect"))
    with pytest.raises(PermanentError, match="internal address"):
        post("https://hooks.example/perf", b"{}", {})
    assert calls == ["hooks.example"]


class Recorder(BaseHTTPRequestHandler):
    seen: list[tuple[str, str, bytes]] = []

    def do_PATCH(self):  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).seen.append((self.command, self.headers["Host"], body))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


def test_it_sends_the_original_host_name_to_the_pinned_address(monkeypatch, settings):
    settings.PERF_WEBHOOK_ALLOW_PRIVATE = True
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Recorder.seen = []
    calls: list[str] = []
    monkeypatch.setattr(socket, "getaddrinfo", rebinding_resolver(["127.0.0.1"], calls))
    try:
        r = outbound.send("PATCH", f"http://ci.example:{server.server_port}/runs?x=1", body=b'{"a":1}',
                          headers={"Content-Type": "application/json"}, timeout=5)
    finally:
        server.shutdown()
    assert (r.status, r.body) == (200, b"ok")
    assert Recorder.seen == [("PATCH", f"ci.example:{server.server_port}", b'{"a":1}')]


@pytest.mark.parametrize("url", ["ftp://x/", "http:///nohost", "http://x:99999/", "http://x/a b"])
def test_it_refuses_bad_urls_as_permanent(url):
    with pytest.raises(PermanentError):
        outbound.send("POST", url, body=b"", headers={}, timeout=1)
