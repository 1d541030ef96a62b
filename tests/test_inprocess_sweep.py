"""Without a broker (REDIS_URL unset, tasks in-process) the web process runs the periodic sweep on a timer
(`perfplatform.inprocess`)."""

from __future__ import annotations

import time

from tests.factories import native_body
from tests.live import LiveEnv, get_json, upload_json


def test_it_sweeps_on_a_timer_in_a_web_process_without_a_broker(tmp_path):
    # A pull-request check whose base never comes: only the sweep settles it (the builds API reads the build's
    # analysis, which its check decides, and does not settle it itself).
    env = LiveEnv(tmp_path)
    env.env.update({"PERF_SWEEP_INTERVAL_SECONDS": "1", "PERF_SWEEP_MIN_AGE_SECONDS": "0",
                    "PERF_CHECK_BASE_WAIT_SECONDS": "2"})
    try:
        url = env.start_web()
        token = env.token("com.example.shop")
        body = native_body("pr-1", branch="pr/1")
        body["build"]["base_commit"] = "never"
        assert upload_json(url, token, body)[0] == 201
        doc_url = f"{url}/api/v1/builds/com.example.shop/android/pr-1"
        assert get_json(doc_url, token)["analysis"] == "pending"
        deadline = time.monotonic() + 30
        while get_json(doc_url, token)["analysis"] != "done":
            assert time.monotonic() < deadline, "no sweep settled the check"
            time.sleep(0.5)
    finally:
        env.close()
