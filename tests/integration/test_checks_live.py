"""Pre-merge checks as deployed: gunicorn, a real Celery worker on Redis, PostgreSQL; the check of a PR
uploaded before its merge-base waits, then settles when the base build arrives."""

from __future__ import annotations

import copy

import pytest

from tests.factories import history_bodies
from tests.live import VENV_BIN, LiveEnv, PrivateRedis, upload_json, wait_for
from tests.live import get_json as get

pytestmark = pytest.mark.integration


def test_it_checks_pull_requests_through_a_real_worker(tmp_path):
    redis = PrivateRedis(tmp_path)
    redis.start()
    env = LiveEnv(tmp_path, redis_url=redis.url)
    try:
        token = env.token("com.example.shop")
        url = env.start_web()
        env.start(str(VENV_BIN / "celery"), "-A", "perfplatform", "worker", "--concurrency", "1",
                  "--without-gossip", "--without-mingle", log="worker.log")
        bodies = history_bodies(24, shifts={})
        for b in bodies[:20]:
            assert upload_json(url, token, b)[0] == 201
        base = bodies[23]
        clean = copy.deepcopy(bodies[22])
        clean["branch"], clean["build"]["id"], clean["build"]["commit"] = "pr/5", "pr-5", "feedbeef"
        clean["build"]["base_commit"] = base["build"]["commit"]
        assert upload_json(url, token, clean)[0] == 201
        check_url = f"{url}/api/v1/checks/com.example.shop/android/pr-5"
        wait_for(lambda: get(check_url, token)["status"] == "pending", 30, "the check to be pending")
        for b in bodies[20:]:  # the merge-base arrives: the waiting check settles
            assert upload_json(url, token, b)[0] == 201
        doc = wait_for(lambda: (d := get(check_url, token))["status"] != "pending" and d, 60, "the check to settle")
        assert doc["status"] in ("pass", "inconclusive") and doc["base"]["build"] == base["build"]["id"]
        assert doc["summary"]["regression"] == 0 and doc["metrics"]
    finally:
        env.close()
        redis.stop()
