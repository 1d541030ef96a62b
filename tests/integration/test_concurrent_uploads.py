"""Two (or eight) CI retries of the same upload racing each other store one build, once."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import psycopg
import pytest

from tests.factories import native_body
from tests.live import LiveEnv

pytestmark = pytest.mark.integration


def test_it_stores_one_build_when_identical_uploads_race(tmp_path):
    env = LiveEnv(tmp_path)
    try:
        token = env.token("com.example.shop")
        url = env.start_web()
        body = json.dumps(native_body(77)).encode()
        barrier = threading.Barrier(8)
        codes: list[int] = []

        def send():
            req = urllib.request.Request(f"{url}/api/v1/uploads", data=body, method="POST",
                                         headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
            barrier.wait()
            try:
                with urllib.request.urlopen(req, timeout=60) as resp:
                    codes.append(resp.status)
            except urllib.error.HTTPError as exc:
                codes.append(exc.code)

        threads = [threading.Thread(target=send) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(codes) == [200] * 7 + [201]
        with psycopg.connect(env.env["DATABASE_URL"]) as conn:
            builds = conn.execute("SELECT count(*) FROM metrics_build").fetchone()[0]
            rows = conn.execute("SELECT count(*), count(DISTINCT (build_id, series_id)) FROM metrics_measurement").fetchone()
            uploads = conn.execute("SELECT count(*) FROM metrics_uploadrecord").fetchone()[0]
        assert builds == 1
        assert rows == (3, 3)
        assert uploads == 1
    finally:
        env.close()
