"""Pre-merge checks through the upload API: the check endpoint, pending and waking, the page, the CLI."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from alerts import premerge
from alerts.models import Check
from metrics.models import Build
from perfplatform import cli
from tests.factories import native_body

pytestmark = pytest.mark.django_db


def runs(rng, level, n=10):
    return [round(float(x), 3) for x in level * np.exp(rng.normal(0, 0.02, n))]


def body(build, rng, *, branch="main", minutes=None, startup=400.0, size=30_000_000, device="pixel-6", **extra):
    b = native_body(build, branch=branch, minutes=minutes, device=device, metrics=[
        {"name": "startup.cold.ttid", "kind": "time", "unit": "ms", "samples": runs(rng, startup)},
        {"name": "size.apk.download", "kind": "size", "unit": "bytes", "value": size},
        {"name": "crash.rate", "kind": "rate", "unit": "ratio", "count": int(rng.poisson(100)), "total": 100000},
    ])
    b["build"].update(extra)
    return b


@pytest.fixture
def history(upload, django_capture_on_commit_callbacks):
    rng = np.random.default_rng(0)
    with django_capture_on_commit_callbacks(execute=True):
        for k in range(20):
            assert upload(body(k + 1, rng)).status_code == 201
    return rng


def check(client, app_token, build):
    _, raw = app_token
    r = client.get(f"/api/v1/checks/com.example.shop/android/{build}", HTTP_AUTHORIZATION=f"Bearer {raw}")
    return r.status_code, r.json()


def test_it_passes_a_clean_pull_request_and_fails_a_regressing_one(history, upload, client, app_token,
                                                                   django_capture_on_commit_callbacks):
    rng = history
    with django_capture_on_commit_callbacks(execute=True):
        assert upload(body("pr-1", rng, branch="pr/1", minutes=21, base_commit="c20")).status_code == 201
        assert upload(body("pr-2", rng, branch="pr/2", minutes=21, base_commit="c20", startup=480.0,
                           size=30_500_000)).status_code == 201
    st, clean = check(client, app_token, "pr-1")
    assert st == 200 and clean["status"] in ("pass", "inconclusive"), clean
    assert clean["base"] == {"branch": "main", "build": "20", "commit": "c20"}
    assert clean["summary"]["regression"] == 0 and clean["summary"]["same"] >= 2 and clean["branch"] == "pr/1"
    st, bad = check(client, app_token, "pr-2")
    assert bad["status"] == "fail"
    verdicts = {m["metric"]: m for m in bad["metrics"]}
    assert verdicts["startup.cold.ttid"]["verdict"] == "regression"
    assert verdicts["size.apk.download"]["verdict"] == "regression"
    assert verdicts["startup.cold.ttid"]["runs"] == {"head": 10, "base": 10}
    assert "startup.cold.ttid" in bad["markdown"] and bad["url"].endswith("/checks/com.example.shop/android/pr-2/")
    # pull-request builds never enter the branch's analysis
    assert not Build.objects.get(ext_id="pr-2").alerts.exists()


def test_it_has_no_baseline_on_a_device_the_base_never_ran(history, upload, client, app_token,
                                                            django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        upload(body("pr-3", history, branch="pr/3", minutes=21, base_commit="c20", device="pixel-9", startup=900.0))
    st, doc = check(client, app_token, "pr-3")
    assert doc["status"] == "no_baseline" and doc["summary"]["no_baseline"] == 3


def test_it_waits_for_the_base_build_then_completes(history, upload, client, app_token, settings,
                                                     django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        upload(body("pr-4", history, branch="pr/4", minutes=30, base_commit="c25"))
    assert check(client, app_token, "pr-4")[1]["status"] == "pending"
    with django_capture_on_commit_callbacks(execute=True):
        upload(body(25, history))  # the merge-base arrives: its check is woken
    st, doc = check(client, app_token, "pr-4")
    assert doc["status"] in ("pass", "inconclusive") and doc["base"]["build"] == "25"


def test_it_settles_a_check_whose_base_never_came_as_no_baseline(history, upload, client, app_token, settings,
                                                                  django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        upload(body("pr-5", history, branch="pr/5", minutes=30, base_commit="cafe"))
    assert Check.objects.get(build__ext_id="pr-5").status == "pending"
    settings.PERF_CHECK_BASE_WAIT_SECONDS = 0
    with django_capture_on_commit_callbacks(execute=True):
        assert premerge.sweep(min_age_seconds=0) == 1
    assert check(client, app_token, "pr-5")[1]["status"] == "no_baseline"


def test_it_settles_an_overdue_check_when_it_is_read_with_no_sweep_having_run(history, upload, client, app_token,
                                                                              settings, django_user_model,
                                                                              django_capture_on_commit_callbacks):
    # Tasks in-process (no broker) have no periodic sweep: the contract's "at most PERF_CHECK_BASE_WAIT_SECONDS,
    # then no_baseline" must hold for a reader all the same.
    with django_capture_on_commit_callbacks(execute=True):
        upload(body("pr-7", history, branch="pr/7", minutes=30, base_commit="beef"))
        upload(body("pr-8", history, branch="pr/8", minutes=30, base_commit="beef"))
    assert check(client, app_token, "pr-7")[1]["status"] == "pending"
    settings.PERF_CHECK_BASE_WAIT_SECONDS = 0
    st, doc = check(client, app_token, "pr-7")
    assert st == 200 and doc["status"] == "no_baseline" and doc["summary"]["no_baseline"] == 3, doc
    assert Check.objects.get(build__ext_id="pr-7").status == "no_baseline"
    client.force_login(django_user_model.objects.create_user("v", password="p"))
    assert client.get("/checks/com.example.shop/android/pr-8/").status_code == 200
    assert Check.objects.get(build__ext_id="pr-8").status == "no_baseline"


def test_it_reports_a_pull_request_builds_analysis_done_once_its_check_is_decided(history, upload, client, app_token,
                                                                                 django_capture_on_commit_callbacks):
    _, raw = app_token
    with django_capture_on_commit_callbacks(execute=True):
        upload(body("pr-9", history, branch="pr/9", minutes=30, base_commit="c27"))
    build = client.get("/api/v1/builds/com.example.shop/android/pr-9", HTTP_AUTHORIZATION=f"Bearer {raw}").json()
    assert build["analysis"] == "pending"  # its check waits for the base
    with django_capture_on_commit_callbacks(execute=True):
        upload(body(27, history))
    build = client.get("/api/v1/builds/com.example.shop/android/pr-9", HTTP_AUTHORIZATION=f"Bearer {raw}").json()
    assert build["analysis"] == "done" and check(client, app_token, "pr-9")[1]["status"] != "pending"


def test_it_answers_400_for_a_branch_build_and_404_for_an_unknown_one(history, client, app_token):
    st, doc = check(client, app_token, "3")
    assert st == 400 and doc["errors"][0]["path"] == "build"
    assert check(client, app_token, "nope")[0] == 404


def test_it_lists_the_check_in_the_openapi_document(client):
    doc = client.get("/api/v1/schema").json()
    assert "/api/v1/checks/{app}/{platform}/{build}" in doc["paths"]


def test_it_shows_the_check_page(history, upload, client, django_user_model, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        upload(body("pr-6", history, branch="pr/6", minutes=21, base_commit="c20", startup=500.0))
    client.force_login(django_user_model.objects.create_user("u", password="p"))
    r = client.get("/checks/com.example.shop/android/pr-6/")
    assert r.status_code == 200 and b'data-verdict="regression"' in r.content
    # The comparison with the merge-base, every metric paired across the two series (branch and pull request).
    compare = client.get("/compare/?a=20&b=pr-6&app=com.example.shop&platform=android")
    assert b"/compare/?a=20&amp;b=pr-6&amp;app=com.example.shop&amp;platform=android" in r.content
    got = {row["metric"].name: row for row in compare.context["rows"]}
    assert got["startup.cold.ttid"]["direction"] == "worse" and all(row["change"] for row in got.values())


class _Canned(BaseHTTPRequestHandler):
    answers: dict = {}

    def do_GET(self):  # noqa: N802 - http.server API
        status, doc = self.answers.get(self.path.rsplit("/", 1)[-1], (404, {"errors": [{"path": "", "message": "not found"}]}))
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a):
        pass


@pytest.fixture
def fake_server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Canned)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()


@pytest.mark.parametrize(("status", "fail_on", "code"), [
    ("pass", "regression", 0), ("inconclusive", "regression", 0), ("no_baseline", "regression", 0),
    ("fail", "regression", 3), ("fail", "never", 0), ("pending", "regression", 1),
])
def test_it_exits_the_cli_per_contract(fake_server, tmp_path, monkeypatch, capsys, status, fail_on, code):
    _Canned.answers = {"b1": (200, {"status": status, "markdown": f"### check {status}\n"})}
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    rc = cli.main(["check", "--app", "a", "--platform", "android", "--build", "b1", "--server", fake_server,
                   "--token", "t", "--fail-on", fail_on, "--retries", "0"])
    assert rc == code
    assert f"### check {status}" in capsys.readouterr().out and f"check {status}" in summary.read_text()


def test_it_exits_2_for_an_unknown_build_and_1_when_unreachable(fake_server):
    assert cli.main(["check", "--app", "a", "--platform", "p", "--build", "zz", "--server", fake_server,
                     "--token", "t", "--retries", "0"]) == 2
    assert cli.main(["check", "--app", "a", "--platform", "p", "--build", "zz", "--server", "http://127.0.0.1:9",
                     "--token", "t", "--retries", "1", "--backoff", "0.01"]) == 1
