"""Without a broker (REDIS_URL unset, tasks in-process) the web process runs the periodic sweep on a timer
(`perfplatform.inprocess`)."""

from __future__ import annotations

import time

import pytest

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


@pytest.mark.django_db  # sweep_once closes stale connections: database access must be allowed
def test_it_lets_one_process_of_the_host_sweep_at_a_time(tmp_path, settings, monkeypatch):
    # Each gunicorn worker runs a timer; two sweeps at once could both find a failed delivery due.
    import fcntl
    import subprocess
    import sys

    from alerts import sweeps
    from perfplatform import inprocess

    settings.VAR_DIR = tmp_path
    calls = []
    monkeypatch.setattr(sweeps, "run", lambda **kw: calls.append(kw) or 7)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, sys, time\n"
        f"f = open({str(tmp_path / 'inprocess-sweep.lock')!r}, 'a')\n"
        "fcntl.flock(f, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(30)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert inprocess.sweep_once() == 0 and calls == []
    finally:
        holder.kill()
        holder.wait()
    assert inprocess.sweep_once() == 7 and calls == [{"in_process": True}]
    with open(tmp_path / "inprocess-sweep.lock", "a") as f:  # released after its sweep
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
