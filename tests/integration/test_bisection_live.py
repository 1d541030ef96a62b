"""Bisection as deployed: gunicorn, a Celery worker and beat on PostgreSQL and a Redis of the test's own,
an app CI endpoint from load_config, and a fake CI on 127.0.0.1 that verifies signatures, runs the
requested commits from a hidden truth and uploads them over HTTP. Two changes planted inside 5-commit
builds must both end bisected to their exact commit within the request bound, and Redis is stopped in
the middle: nothing may be lost."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from alerts.detection.bisect import request_bound
from tests.factories import native_body
from tests.fake_ci import FakeCI
from tests.integration.test_pipeline import compose_command
from tests.live import VENV_BIN, LiveEnv, PrivateRedis, free_port, upload_json, wait_for, wait_http
from tests.live import get_json as get
from tests.test_bisection import SIZE_AT, TIME_AT, commits_of, metric_body, true_level

pytestmark = pytest.mark.integration

APP = "com.example.shop"
SECRET = "ci-s3cret"
SHIFTS = {"startup.cold.ttid": (TIME_AT, 0.15), "size.apk.download": (SIZE_AT, 0.02)}


def test_it_bisects_two_planted_changes_through_a_real_ci_loop(tmp_path):
    redis = PrivateRedis(tmp_path)
    redis.start()
    env = LiveEnv(tmp_path, redis_url=redis.url)
    env.env.update({"PERF_SWEEP_INTERVAL_SECONDS": "2", "PERF_SWEEP_MIN_AGE_SECONDS": "3",
                    "PERF_WEBHOOK_ALLOW_PRIVATE": "true", "PATH": f"{VENV_BIN}:{env.env.get('PATH', '')}"})
    state = {"url": "", "token": "", "uploads": 0, "errors": []}
    rng = np.random.default_rng(9)
    lock = threading.Lock()

    def run(doc: dict) -> None:  # the CI job: run the commit from the truth, upload the requested build
        with lock:
            metrics = [metric_body(m, true_level(m, doc["commit"], SHIFTS), doc["runs"], rng) for m in doc["metrics"]]
        body = native_body(0, metrics=metrics)
        body["build"] = {"id": doc["build"], "commit": doc["commit"], "requested": doc["request"]}
        body["branch"], body["device"] = doc["branch"], doc["device"]
        status = 0
        for _ in range(30):  # CI retries while the platform (or its broker) is unavailable
            status = upload_json(state["url"], state["token"], body)[0]
            if status in (200, 201):
                break
            threading.Event().wait(1)
        with lock:
            state["uploads"] += 1
            if status not in (200, 201):
                state["errors"].append((doc["request"], status))

    ci = FakeCI(SECRET, on_request=run)
    try:
        (tmp_path / "perf.yaml").write_text(
            f'apps:\n  - {{name: {APP}, ci: {{url: "{ci.url}", secret: "{SECRET}", max_requests_per_day: 40}}}}\n')
        env.manage("load_config", str(tmp_path / "perf.yaml"))
        state["token"] = env.token(APP)
        port = free_port()
        env.start(*[a.replace("0.0.0.0:8000", f"127.0.0.1:{port}") for a in compose_command("web")], log="web.log")
        env.start_supervised(*compose_command("worker"), log="worker.log")
        beat = compose_command("beat")
        beat[beat.index("--schedule") + 1] = str(tmp_path / "beat-schedule")
        env.start_supervised(*beat, log="beat.log")
        url = state["url"] = f"http://127.0.0.1:{port}"
        wait_http(url + "/healthz")

        hist = np.random.default_rng(5)
        for i in range(42):
            body = native_body(i, metrics=[metric_body(m, true_level(m, f"c{i}", SHIFTS), 1, hist)
                                           for m in ("startup.cold.ttid", "size.apk.download")])
            body["build"]["commits"] = commits_of(i)
            assert upload_json(url, state["token"], body)[0] == 201
            if i == 38:
                wait_for(lambda: len(ci.received) >= 1, 120, "the first run request")
                redis.stop()  # mid-bisection: requests and answers wait in the database
        threading.Event().wait(5)
        redis.start()

        def settled():
            rows = get(f"{url}/api/v1/alerts?app={APP}&limit=100", state["token"])["results"]
            live = {r["metric"]: r for r in rows if r["detection"] != "withdrawn"}
            if {"startup.cold.ttid", "size.apk.download"} <= set(live) and all(
                    live[m]["confirmation"] not in ("none", "requested") for m in live):
                return live
            return None

        live = wait_for(settled, 300, "both alerts to finish bisecting")
        assert live["startup.cold.ttid"]["build"] == "30" and live["size.apk.download"]["build"] == "34"
        assert live["startup.cold.ttid"]["culprit_commit"] == "c30.3"
        assert live["size.apk.download"]["culprit_commit"] == "c34.2"
        for r in live.values():
            assert r["confirmation"] == "bisected" and r["range_commits"] == 1
            asked = [d for d in ci.received if d["alert"] == r["id"]]
            assert len({d["request"] for d in asked}) <= request_bound(5)
            prev = int(r["build"]) - 1
            assert {d["commit"] for d in asked} <= set(commits_of(int(r["build"]))) | {f"c{prev}"}
        assert ci.rejected == 0 and not state["errors"]
        for build in ("30", "34"):
            assert get(f"{url}/api/v1/builds/{APP}/android/{build}", state["token"])["analysis"] == "done"
    finally:
        ci.close()
        env.close()
        redis.stop()
