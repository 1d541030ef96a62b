"""Faults with real services of the test's own: a worker killed mid-analysis, PostgreSQL restarted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.factories import history_bodies, native_body
from tests.live import (
    ROOT,
    VENV_BIN,
    LiveEnv,
    PrivatePostgres,
    PrivateRedis,
    upload_json,
    wait_for,
    wait_http,
)
from tests.live import get_json as get

pytestmark = pytest.mark.integration

APP = "com.example.shop"
SHIFTS = {"startup.cold.ttid": (30, 0.20), "size.apk.download": (36, 0.03)}








def start_worker(env: LiveEnv, log: str, **extra: str) -> subprocess.Popen:
    proc_env = {**env.env, **extra}
    out = open(env.tmp / log, "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen([str(VENV_BIN / "celery"), "-A", "perfplatform", "worker", "--loglevel", "INFO",
                             "--concurrency", "1", "-n", f"{log}@%h"],
                            env=proc_env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    env.procs.append(proc)
    return proc


def test_it_completes_an_analysis_whose_worker_was_killed(tmp_path):
    redis = PrivateRedis(tmp_path)
    redis.start()
    env = LiveEnv(tmp_path, redis_url=redis.url)
    env.env.update({"PERF_SWEEP_INTERVAL_SECONDS": "2", "PERF_SWEEP_MIN_AGE_SECONDS": "8",
                    "PERF_VISIBILITY_TIMEOUT": "15"})
    try:
        token = env.token(APP)
        url = env.start_web()
        env.start(str(VENV_BIN / "celery"), "-A", "perfplatform", "beat", "--schedule", str(tmp_path / "beat"),
                  log="beat.log")
        first = start_worker(env, "w1.log")
        bodies = history_bodies(45, shifts=SHIFTS)
        for body in bodies[:40]:
            assert upload_json(url, token, body)[0] == 201
        wait_for(lambda: get(f"{url}/api/v1/builds/{APP}/android/39", token)["analysis"] == "done", 120, "history")
        first.terminate()  # a warm shutdown; on a loaded machine it may take a while, then it is forced
        try:
            first.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=10)

        slow = start_worker(env, "w2.log", PERF_FAULT_ANALYSIS_SLEEP_SECONDS="30")
        assert upload_json(url, token, bodies[40])[0] == 201
        wait_for(lambda: b"analyse_build" in (tmp_path / "w2.log").read_bytes()
                 and b"received" in (tmp_path / "w2.log").read_bytes(), 60, "the slow worker to take the task")
        time.sleep(1)
        os.killpg(slow.pid, signal.SIGKILL)  # the main process and its pool child, mid-analysis
        slow.wait(timeout=10)
        assert get(f"{url}/api/v1/builds/{APP}/android/40", token)["analysis"] == "pending"

        start_worker(env, "w3.log")
        for body in bodies[41:]:
            assert upload_json(url, token, body)[0] == 201
        wait_for(lambda: all(get(f"{url}/api/v1/builds/{APP}/android/{i}", token)["analysis"] == "done"
                             for i in range(40, 45)), 120, "the killed analysis to be redone")
        alerts = get(f"{url}/api/v1/alerts?app={APP}&limit=500", token)["results"]
        assert len({(a["metric"], a["build"]) for a in alerts}) == len(alerts)
        live = {(a["metric"], a["build"]) for a in alerts if a["detection"] != "withdrawn"}
        assert live == {("startup.cold.ttid", "30"), ("size.apk.download", "36")}
    finally:
        env.close()
        redis.stop()


def test_it_answers_503_while_postgres_is_down_and_the_cli_gets_its_upload_in(tmp_path):
    pg = PrivatePostgres(tmp_path)
    pg.start()
    saved = os.environ.get("DATABASE_URL")
    os.environ["DATABASE_URL"] = pg.url  # LiveEnv creates its database beside this one
    try:
        env = LiveEnv(tmp_path)
    finally:
        os.environ["DATABASE_URL"] = saved or ""
    try:
        token = env.token(APP)
        url = env.start_web()
        assert upload_json(url, token, native_body(1))[0] == 201

        pg.stop()
        status, headers = upload_json(url, token, native_body(2))
        assert status == 503
        assert int(headers["Retry-After"]) > 0

        path = tmp_path / "b3.json"
        path.write_text(json.dumps(native_body(3)))
        restart = threading.Timer(4.0, pg.start)
        restart.start()
        cli = subprocess.run([sys.executable, "-m", "perfplatform.cli", "upload", str(path), "--server", url,
                              "--token", token, "--retries", "8", "--backoff", "1"],
                             env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120)
        restart.join()
        assert cli.returncode == 0, cli.stdout + cli.stderr
        assert "503" in cli.stderr  # it did meet the outage and retried
        doc = get(f"{url}/api/v1/builds/{APP}/android/3", token)
        assert len(doc["measurements"]) == 3
        with pytest.raises(urllib.error.HTTPError) as missing:
            get(f"{url}/api/v1/builds/{APP}/android/2", token)
        assert missing.value.code == 404  # the upload refused during the outage left nothing behind
        wait_http(url + "/healthz")
    finally:
        env.close()
        pg.remove()


class FlakyHook(BaseHTTPRequestHandler):
    """A webhook receiver that answers its first POST 503 with Retry-After: 10, the later ones 204."""

    received: list[bytes] = []

    def do_POST(self):  # noqa: N802 - http.server's naming
        type(self).received.append(self.rfile.read(int(self.headers["Content-Length"])))
        if len(type(self).received) == 1:
            self.send_response(503)
            self.send_header("Retry-After", "10")
        else:
            self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_it_sends_a_notification_whose_retry_redis_lost(tmp_path):
    # The failed delivery's retry waits in the broker (an ETA task the worker holds, unacknowledged in Redis).
    # Redis restarts with nothing kept and the worker dies: the retry is gone, and beat's sweep must find it in
    # the delivery's row (`next_attempt`) and send it, once.
    redis = PrivateRedis(tmp_path)
    redis.start()
    env = LiveEnv(tmp_path, redis_url=redis.url)
    env.env.update({"PERF_SWEEP_INTERVAL_SECONDS": "2", "PERF_SWEEP_MIN_AGE_SECONDS": "3",
                    "PERF_NOTIFY_SETTLE_BUILDS": "2", "PERF_WEBHOOK_ALLOW_PRIVATE": "true"})
    FlakyHook.received = []
    hook = ThreadingHTTPServer(("127.0.0.1", 0), FlakyHook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    (tmp_path / "perf.yaml").write_text(
        "teams:\n  - name: central-perf\n    channels: [{type: webhook, url: "
        f'"http://127.0.0.1:{hook.server_port}/hook", secret: "s"}}]\n'
        'owners:\n  - {app: "*", platform: "*", metric: "*", team: central-perf}\n')

    def delivery() -> tuple[str, int]:
        out = env.manage("shell", "-c", "from alerts.models import Delivery; d = Delivery.objects.get(); "
                                        "print('delivery', d.status, d.attempts)").stdout.split()
        at = out.index("delivery")  # the shell may print its own lines first
        return out[at + 1], int(out[at + 2])

    try:
        env.manage("load_config", str(tmp_path / "perf.yaml"))
        token = env.token(APP)
        url = env.start_web()
        env.start(str(VENV_BIN / "celery"), "-A", "perfplatform", "beat", "--schedule", str(tmp_path / "beat"),
                  log="beat.log")
        worker = start_worker(env, "w1.log")
        for body in history_bodies(36, shifts={"startup.cold.ttid": (30, 0.20)}):
            assert upload_json(url, token, body)[0] == 201
        wait_for(lambda: FlakyHook.received, 120, "the first delivery attempt")
        wait_for(lambda: delivery() == ("pending", 1), 30, "the failed attempt to be recorded")
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
        redis.stop()
        redis.start()  # empty: the retry the worker held is lost with it
        start_worker(env, "w2.log")
        wait_for(lambda: delivery() == ("sent", 2), 60, "the lost retry to be sent by the sweep")
        time.sleep(5)  # a duplicate would arrive in this time
        assert len(FlakyHook.received) == 2
        first, second = (json.loads(body) for body in FlakyHook.received)
        # The same group again (its alert's estimates may have been refined between the two attempts).
        assert (first["group"]["id"], first["build"]) == (second["group"]["id"], second["build"])
        assert delivery() == ("sent", 2)
    finally:
        hook.shutdown()
        env.close()
        redis.stop()
