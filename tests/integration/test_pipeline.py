"""The whole pipeline as deployed: the docker-compose commands started directly on PostgreSQL and a
Redis of the test's own, uploads over HTTP, a real Celery worker and beat, webhooks to a local server.
Redis is stopped in the middle of the uploads; nothing may be lost or done twice."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from tests.factories import history_bodies
from tests.live import ROOT, VENV_BIN, LiveEnv, PrivateRedis, free_port, upload_json, wait_for, wait_http
from tests.live import get_json as get

pytestmark = pytest.mark.integration

APP = "com.example.shop"
SHIFTS = {"startup.cold.ttid": (30, 0.20), "size.apk.download": (36, 0.03)}


class Receiver(BaseHTTPRequestHandler):
    received: list[tuple[str, dict[str, str], bytes]] = []

    def do_POST(self):  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).received.append((self.path, dict(self.headers), body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def compose_command(service: str) -> list[str]:
    doc = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return list(doc["services"][service]["command"])








@pytest.fixture
def stack(tmp_path):
    redis = PrivateRedis(tmp_path)
    redis.start()
    env = LiveEnv(tmp_path, redis_url=redis.url)
    env.env.update({
        "PERF_SWEEP_INTERVAL_SECONDS": "2", "PERF_SWEEP_MIN_AGE_SECONDS": "3",
        "PERF_NOTIFY_SETTLE_BUILDS": "4", "PERF_NOTIFY_MAX_DELAY_SECONDS": "8", "PERF_WEBHOOK_ALLOW_PRIVATE": "true",
        "PATH": f"{VENV_BIN}:{env.env.get('PATH', '')}",
    })
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    Receiver.received = []
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    try:
        yield env, redis, f"http://127.0.0.1:{receiver.server_port}"
    finally:
        receiver.shutdown()
        env.close()
        redis.stop()


def test_it_analyses_every_build_and_notifies_each_team_once_despite_a_redis_outage(stack, tmp_path):
    env, redis, hook = stack
    (tmp_path / "perf.yaml").write_text(f"""
teams:
  - name: startup-perf
    channels: [{{type: webhook, url: "{hook}/startup", secret: "s3cret"}}]
  - name: central-perf
    channels: [{{type: webhook, url: "{hook}/central", secret: "c3ntral"}}]
owners:
  - {{app: "*", platform: "*", metric: "*", team: central-perf}}
  - {{app: "com.example.*", platform: "android", metric: "startup.*", team: startup-perf}}
""")
    env.manage("load_config", str(tmp_path / "perf.yaml"))
    token = env.token(APP)

    port = free_port()
    web = [a.replace("0.0.0.0:8000", f"127.0.0.1:{port}") for a in compose_command("web")]
    env.start(*web, log="web.log")
    # Supervised like compose's restart policy: kombu 5.7 can end a worker with "Unrecoverable error"
    # when Redis vanishes while it acknowledges a task; the outbox makes the restart lose nothing.
    workers = env.start_supervised(*compose_command("worker"), log="worker.log")
    beat = compose_command("beat")
    beat[beat.index("--schedule") + 1] = str(tmp_path / "beat-schedule")
    env.start_supervised(*beat, log="beat.log")
    url = f"http://127.0.0.1:{port}"
    wait_http(url + "/healthz")

    bodies = history_bodies(50, shifts=SHIFTS)
    for body in bodies[:25]:
        assert upload_json(url, token, body)[0] == 201
    redis.stop()
    for body in bodies[25:40]:
        assert upload_json(url, token, body)[0] == 201  # stored while the broker is down
    pending = get(f"{url}/api/v1/builds/{APP}/android/30", token)
    assert pending["analysis"] == "pending"
    redis.start()
    for body in bodies[40:]:
        assert upload_json(url, token, body)[0] == 201

    def all_done():
        states = [get(f"{url}/api/v1/builds/{APP}/android/{i}", token)["analysis"] for i in range(50)]
        return all(s == "done" for s in states)

    wait_for(all_done, 180, f"every build to be analysed ({len(workers)} worker starts)")
    alerts = get(f"{url}/api/v1/alerts?app={APP}&limit=500", token)["results"]
    live = [a for a in alerts if a["detection"] != "withdrawn"]
    assert {(a["metric"], a["build"], a["previous_build"], a["commit"], a["previous_commit"], a["team"]) for a in live} == {
        ("startup.cold.ttid", "30", "29", "c30", "c29", "startup-perf"),
        ("size.apk.download", "36", "35", "c36", "c35", "central-perf"),
    }
    assert len({(a["metric"], a["build"]) for a in alerts}) == len(alerts)  # nothing twice

    wait_for(lambda: len(Receiver.received) >= 2, 60, "two webhooks")
    time.sleep(6)  # a duplicate delivery would arrive in this time
    by_path = {}
    for path, headers, body in Receiver.received:
        by_path.setdefault(path, []).append((headers, body))
    assert sorted(by_path) == ["/central", "/startup"]
    assert all(len(v) == 1 for v in by_path.values()), {k: len(v) for k, v in by_path.items()}
    for path, secret in (("/startup", b"s3cret"), ("/central", b"c3ntral")):
        headers, body = by_path[path][0]
        expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
        assert headers["X-Perf-Signature"] == expected
        doc = json.loads(body)
        assert doc["event"] == "alerts.created"
        assert (doc["app"], doc["platform"], doc["branch"]) == (APP, "android", "main")
        assert doc["build"] == ("30" if path == "/startup" else "36")
        assert [a["metric"] for a in doc["alerts"]] == (["startup.cold.ttid"] if path == "/startup" else ["size.apk.download"])


def test_it_starts_web_worker_and_beat_with_the_compose_commands(tmp_path):
    """Every process docker-compose.yml runs, started directly, comes up and stays up."""
    redis = PrivateRedis(tmp_path)
    redis.start()
    env = LiveEnv(tmp_path, redis_url=redis.url)
    env.env.update({"PATH": f"{VENV_BIN}:{env.env.get('PATH', '')}", "PERF_SWEEP_INTERVAL_SECONDS": "1"})
    try:
        port = free_port()
        env.start(*[a.replace("0.0.0.0:8000", f"127.0.0.1:{port}") for a in compose_command("web")], log="web.log")
        worker = env.start(*compose_command("worker"), log="worker.log")
        beat_cmd = compose_command("beat")
        beat_cmd[beat_cmd.index("--schedule") + 1] = str(tmp_path / "beat-schedule")
        beat = env.start(*beat_cmd, log="beat.log")
        wait_http(f"http://127.0.0.1:{port}/healthz")
        import subprocess

        def ping():
            r = subprocess.run([str(VENV_BIN / "celery"), "-A", "perfplatform", "inspect", "ping", "--timeout", "3"],
                               env=env.env, cwd=ROOT, capture_output=True, text=True, timeout=60)
            return "pong" in r.stdout

        wait_for(ping, 60, "the worker to answer a ping")
        active = subprocess.run([str(VENV_BIN / "celery"), "-A", "perfplatform", "inspect", "active_queues",
                                 "--timeout", "10"], env=env.env, cwd=ROOT, capture_output=True, text=True, timeout=60)
        for queue in ("analysis", "notifications", "maintenance"):
            assert queue in active.stdout, active.stdout
        time.sleep(3)
        assert worker.poll() is None and beat.poll() is None
        assert "Scheduler: Sending due task sweep-pending-analysis" in (tmp_path / "beat.log").read_text()
    finally:
        env.close()
        redis.stop()
