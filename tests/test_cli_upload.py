"""`perfplatform upload` against a live gunicorn process, and its retry and exit-code contract."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.factories import native_body
from tests.live import ROOT, LiveEnv, free_port

APP = "com.example.shop"
#: The live server's PERF_MAX_UPLOAD_BYTES: every other upload here is far smaller.
LIMIT = 2_000_000


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    env = LiveEnv(tmp_path_factory.mktemp("live"))
    env.env["PERF_MAX_UPLOAD_BYTES"] = str(LIMIT)
    try:
        url = env.start_web()
        yield env, url, env.token(APP)
    finally:
        env.close()


def cli(*args: str, env_extra: dict[str, str] | None = None, stdlib_only: bool = True) -> subprocess.CompletedProcess:
    """Run the CLI as a user would; -S keeps site-packages off the path, proving `upload` needs only the stdlib."""
    import os

    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), **(env_extra or {})}
    flags = ["-S"] if stdlib_only else []
    return subprocess.run([sys.executable, *flags, "-m", "perfplatform.cli", "upload", *args],
                          env=env, capture_output=True, text=True, timeout=120)


def get_json(url: str, token: str) -> dict:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def write(tmp_path: Path, name: str, body) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(body) if not isinstance(body, str) else body)
    return str(path)


def test_it_uploads_a_native_file_and_reads_back_every_value(live, tmp_path):
    env, url, token = live
    body = native_body(1001)
    r = cli(write(tmp_path, "b.json", body), "--server", url, "--token", token)
    assert r.returncode == 0, r.stderr
    assert "stored: build 1001, 3 measurements" in r.stdout
    doc = get_json(f"{url}/api/v1/builds/{APP}/android/1001", token)
    got = {m["metric"]: m for m in doc["measurements"]}
    for sent in body["metrics"]:
        m = got[sent["name"]]
        assert (m["kind"], m["unit"], m["device"]) == (sent["kind"], sent["unit"], "pixel-6")
        for key in ("samples", "count", "total"):
            assert m.get(key) == sent.get(key)
        if "value" in sent:
            assert m["value"] == sent["value"]
    assert doc["analysis"] in ("pending", "done")

    again = cli(write(tmp_path, "b.json", body), "--server", url, "--token", token)
    assert again.returncode == 0
    assert "unchanged" in again.stdout


def test_it_takes_server_and_token_from_the_environment(live, tmp_path):
    env, url, token = live
    r = cli(write(tmp_path, "b.json", native_body(1002)), env_extra={"PERF_SERVER": url, "PERF_TOKEN": token})
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("rel", [
    "macrobenchmark/com.example.macrobenchmark-benchmarkData.json",
    "google-benchmark/test1_run1.json",
    "bmf/report_bmf_mixed.json",
])
def test_it_uploads_ci_formats_with_build_fields_from_flags(live, rel):
    env, url, token = live
    build = str(abs(hash(rel)) % 100000)
    r = cli(str(FIXTURES / "formats" / rel), "--server", url, "--token", token, "--app", APP,
            "--platform", "android", "--branch", "main", "--build", build, "--commit", "abc123",
            "--timestamp", "2026-11-20T08:00:00Z", "--device", "pixel-7")
    assert r.returncode == 0, r.stderr
    doc = get_json(f"{url}/api/v1/builds/{APP}/android/{build}", token)
    assert doc["commit"] == "abc123"
    assert doc["measurements"] and {m["device"] for m in doc["measurements"]} == {"pixel-7"}


def test_it_uploads_every_perfherder_payload_of_a_ci_log(live, tmp_path):
    env, url, token = live
    rows = [json.loads(line) for line in (FIXTURES / "formats/perfherder/perfherder_data_from_treeherder_sample_logs.jsonl").read_text().splitlines()]
    log = "\n".join(f"{r['prefix']} PERFHERDER_DATA: {json.dumps(r['data'])}" for r in rows[:3])
    r = cli(write(tmp_path, "job.log", "starting job\n" + log + "\ndone\n"), "--server", url, "--token", token,
            "--app", APP, "--platform", "android", "--branch", "main", "--build", "ph-1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("payload") == 3


def test_it_exits_2_and_prints_the_servers_errors_on_bad_input(live, tmp_path):
    env, url, token = live
    body = native_body(1003)
    body["metrics"][0]["samples"] = [1.0, "fast"]
    r = cli(write(tmp_path, "bad.json", body), "--server", url, "--token", token)
    assert r.returncode == 2
    assert "metrics[0].samples[1]" in r.stderr


def test_it_exits_2_with_the_servers_413_on_a_body_over_its_limit(live, tmp_path):
    # gunicorn closes on a client still sending a body nobody reads: the CLI saw a broken pipe, retried, and
    # exited 1 ("cannot reach") without the server's answer.
    env, url, token = live
    path = write(tmp_path, "big.json", json.dumps(native_body(1005)) + " " * (6 * LIMIT))
    r = cli(path, "--server", url, "--token", token, "--retries", "0")
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "413" in r.stderr and "PERF_MAX_UPLOAD_BYTES" in r.stderr
    assert urllib.request.urlopen(f"{url}/healthz", timeout=10).status == 200


def test_it_reads_a_chunked_upload_to_its_end(live):
    # A client streaming its body sends no Content-Length: Django alone reads such a body as empty.
    env, url, token = live
    host, port = url.removeprefix("http://").split(":")
    data = json.dumps(native_body(1006)).encode()
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("POST", "/api/v1/uploads", body=iter([data[:100], data[100:]]), encode_chunked=True,
                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 201, resp.read()
    assert json.loads(resp.read())["measurements"] == 3
    # over the limit, and far over what socket buffers hold: the client still gets its 413, not a broken pipe
    conn.request("POST", "/api/v1/uploads", body=iter([b" " * 1_000_000] * (6 * LIMIT // 1_000_000) + [data]),
                 encode_chunked=True,
                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 413 and "PERF_MAX_UPLOAD_BYTES" in resp.read().decode()
    conn.close()


def test_it_exits_2_on_a_bad_token(live, tmp_path):
    env, url, token = live
    r = cli(write(tmp_path, "b.json", native_body(1004)), "--server", url, "--token", "pp_wrong")
    assert r.returncode == 2
    assert "401" in r.stderr


def test_it_exits_1_when_the_server_cannot_be_reached(tmp_path):
    r = cli(write(tmp_path, "b.json", native_body(1005)), "--server", f"http://127.0.0.1:{free_port()}",
            "--token", "pp_x", "--retries", "2", "--backoff", "0.05")
    assert r.returncode == 1
    assert r.stderr.count("retrying") == 2


class FlakyHandler(BaseHTTPRequestHandler):
    """Answers 503 (with Retry-After) to the first requests, then 201 as the real API does."""

    failures = 2
    seen: list[str] = []

    def do_POST(self):  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).seen.append(self.path)
        if len(type(self).seen) <= type(self).failures:
            self.send_response(503)
            self.send_header("Retry-After", "0")
            self.end_headers()
            return
        body = json.dumps({"build": {"id": "7", "url": "http://x/api/v1/builds/a/b/7"}, "measurements": 3,
                           "analysis": "queued"}).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_it_retries_5xx_answers_until_the_server_takes_the_upload(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), FlakyHandler)
    FlakyHandler.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        r = cli(write(tmp_path, "b.json", native_body(7)), "--server", f"http://127.0.0.1:{server.server_port}",
                "--token", "pp_x", "--retries", "3", "--backoff", "0.05", "--platform", "android")
    finally:
        server.shutdown()
    assert r.returncode == 0, r.stderr
    assert len(FlakyHandler.seen) == 3
    assert all(p.startswith("/api/v1/uploads?platform=android") for p in FlakyHandler.seen)


def test_it_needs_nothing_outside_the_standard_library_for_upload():
    probe = (
        "import sys, perfplatform.cli, perfplatform.upload_client;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] not in sys.stdlib_module_names"
        " and m.split('.')[0] != 'perfplatform' and not m.startswith('_'));"
        "print(','.join(bad))"
    )
    import os

    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""


class RecordingHandler(BaseHTTPRequestHandler):
    """Answers every POST with `status` and a Location header; records the Authorization it was sent."""

    status = 0
    location = ""
    seen: list[str | None] = []

    def do_POST(self):  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).seen.append(self.headers.get("Authorization"))
        self.send_response(self.status)
        if self.location:
            self.send_header("Location", self.location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST  # noqa: N815 - a followed 301/302 turns into a GET

    def log_message(self, *args):
        pass


def serve(handler: type) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_it_never_sends_the_token_to_the_origin_a_redirect_names(tmp_path, status):
    elsewhere = type("Elsewhere", (RecordingHandler,), {"status": 201, "seen": []})
    target = serve(elsewhere)
    redirector = type("Redirector", (RecordingHandler,), {
        "status": status, "seen": [], "location": f"http://127.0.0.1:{target.server_port}/api/v1/uploads"})
    origin = serve(redirector)
    try:
        r = cli(write(tmp_path, "b.json", native_body(9)), "--server", f"http://127.0.0.1:{origin.server_port}",
                "--token", "pp_secret", "--retries", "2", "--backoff", "0.05")
    finally:
        origin.shutdown()
        target.shutdown()
    assert r.returncode == 1, r.stderr
    assert redirector.seen == ["Bearer pp_secret"]
    assert elsewhere.seen == []
    assert f"redirected ({status})" in r.stderr and "another origin" in r.stderr
    assert "pp_secret" not in r.stderr + r.stdout
