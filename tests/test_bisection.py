"""Bisection in-process: real uploads, analysis, signed requests to a fake CI on 127.0.0.1, answers
uploaded through the upload API, and what the alerts API then says."""

from __future__ import annotations

import math

import numpy as np
import pytest

from alerts.detection.bisect import request_bound
from alerts.models import Alert, AlertGroup, Bisection, RunRequest
from metrics.models import App, Build, Series
from tests.bisect_sim import run_level
from tests.factories import native_body
from tests.fake_ci import FakeCI

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "ci-s3cret"
TIME_AT, SIZE_AT = (30, 3), (34, 2)  # (build, commit within the build) of the planted changes


def commits_of(i: int) -> list[str]:
    return [f"c{i}.{j}" for j in range(1, 5)] + [f"c{i}"]


def position(commit: str) -> tuple[int, int]:
    head, _, sub = commit[1:].partition(".")
    return int(head), int(sub) if sub else 5


def true_level(metric: str, commit: str, shifts: dict[str, tuple[tuple[int, int], float]]) -> float:
    pos = position(commit)
    if metric == "size.apk.download":
        at, rel = shifts.get(metric, ((10**6, 0), 0.0))
        return 3e7 * (1 + rel if pos >= at else 1) + 10 * (pos[0] * 5 + pos[1])
    at, rel = shifts.get(metric, ((10**6, 0), 0.0))
    return 400.0 * (1 + rel if pos >= at else 1)


def metric_body(metric: str, level: float, runs: int, rng) -> dict:
    kind = "size" if metric.startswith("size.") else "time"
    m = run_level(kind, level, runs, rng)
    return {"name": metric, "kind": kind, "unit": "bytes" if kind == "size" else "ms", **m}


@pytest.fixture
def ci(app_token, settings):
    """The app's CI endpoint (AppIntegration, as load_config's `apps:` stores it): a fake CI that verifies
    signatures."""
    from alerts.models import AppIntegration

    settings.PERF_WEBHOOK_ALLOW_PRIVATE = True
    fake = FakeCI(SECRET)
    integration = AppIntegration.objects.create(app=app_token[0], ci_url=fake.url, ci_secret=SECRET,
                                                ci_max_requests_per_day=40)
    yield fake, integration
    fake.close()


def run_history(upload, shifts, n=42, seed=5, metrics=("startup.cold.ttid", "size.apk.download")):
    rng = np.random.default_rng(seed)
    for i in range(n):
        body = native_body(i, metrics=[metric_body(m, true_level(m, f"c{i}", shifts), 1, rng) for m in metrics])
        body["build"]["commits"] = commits_of(i)
        assert upload(body).status_code == 201


def answer_requests(upload, fake, shifts, seed=9, limit=60):
    """Play CI: run every request received from the truth and upload it as the requested build."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < len(fake.received) and done < limit:
        doc = fake.received[done]
        done += 1
        body = native_body(0, minutes=5000 + done, metrics=[
            metric_body(m, true_level(m, doc["commit"], shifts), doc["runs"], rng) for m in doc["metrics"]])
        body["build"] = {"id": doc["build"], "commit": doc["commit"], "requested": doc["request"],
                         "timestamp": body["build"]["timestamp"]}
        body["branch"], body["device"] = doc["branch"], doc["device"]
        assert upload(body).status_code == 201
    return done


def test_it_bisects_two_planted_changes_to_their_exact_commits(upload, ci, client, app_token):
    fake, _ = ci
    shifts = {"startup.cold.ttid": (TIME_AT, 0.15), "size.apk.download": (SIZE_AT, 0.02)}
    run_history(upload, shifts)
    answered = answer_requests(upload, fake, shifts)
    assert answered == len(fake.received) and fake.rejected == 0

    _, token = app_token
    rows = client.get("/api/v1/alerts?limit=100", HTTP_AUTHORIZATION=f"Bearer {token}").json()["results"]
    live = {r["metric"]: r for r in rows if r["detection"] != "withdrawn"}
    assert live["startup.cold.ttid"]["build"] == "30" and live["size.apk.download"]["build"] == "34"
    assert live["startup.cold.ttid"]["culprit_commit"] == "c30.3"
    assert live["size.apk.download"]["culprit_commit"] == "c34.2"
    for r in live.values():
        assert r["confirmation"] == "bisected" and r["range_commits"] == 1
        asked = [d for d in fake.received if d["alert"] == r["id"]]
        assert 1 <= len(asked) <= request_bound(5)
        prev = int(r["build"]) - 1
        assert {d["commit"] for d in asked} <= set(commits_of(int(r["build"]))) | {f"c{prev}"}
        for d in asked:
            assert set(d) == {"event", "request", "reason", "alert", "app", "platform", "branch", "device",
                              "commit", "build", "runs", "metrics"}
            assert d["event"] == "runs.requested" and d["metrics"] == [r["metric"]]
    # Requested builds never joined the branch history.
    branch = Series.objects.filter(scope="branch").values_list("pk", flat=True)
    assert not Build.objects.filter(role="requested", measurements__series_id__in=branch).exists()
    assert RunRequest.objects.filter(state="answered").count() == len(fake.received)
    assert all(len(r.attempt_log) == 1 and r.attempt_log[0]["ok"] for r in RunRequest.objects.all())

    # The group page: the commits in range and the timeline of every request.
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.create_user("reader", password="x"))
    group = live["startup.cold.ttid"]["group"]
    html = client.get(f"/alerts/{group}/").content.decode()
    section = html[html.index('id="bisection-'):]
    assert "Culprit commit <code data-culprit>c30.3</code>" in section
    for c in commits_of(30):
        assert f'title="{c}"' in section
    n = len([d for d in fake.received if d["alert"] == live["startup.cold.ttid"]["id"]])
    assert section.count("sent to CI: accepted") >= n and section.count("answered by build bisect-") >= n
    assert "culprit commit found" in section


def test_it_withdraws_an_alert_whose_shift_does_not_reproduce_and_never_notifies_it(upload, ci, settings):
    from alerts.models import Channel, Delivery, Team

    fake, _ = ci
    team = Team.objects.create(name="central-perf")
    Channel.objects.create(team=team, kind="webhook", key="hook", config={"url": "http://127.0.0.1:9/x"})
    # The branch builds from build 30 on ran on a slow runner pool: re-runs of any commit are not slow.
    flaky = {"startup.cold.ttid": ((30, 1), 0.15)}
    run_history(upload, flaky)
    answer_requests(upload, fake, {})
    alert = Alert.objects.get(series__metric__name="startup.cold.ttid", detection__in=["open", "confirmed"])
    assert alert.confirmation == "not_reproduced" and alert.culprit_commit == ""
    assert Bisection.objects.get(alert=alert).outcome == "not_reproduced"
    group = AlertGroup.objects.get(pk=alert.group_id)
    assert group.notified is None and not Delivery.objects.filter(group=group).exists()
    assert group.status == "withdrawn"


def test_it_holds_the_group_while_bisecting_and_lets_it_go_after_the_wait(upload, ci, settings):
    from alerts import notifications
    from alerts.bisection import engine

    fake, _ = ci
    settings.PERF_NOTIFY_SETTLE_BUILDS = 0
    run_history(upload, {"startup.cold.ttid": (TIME_AT, 0.15)})  # nobody answers
    alert = Alert.objects.get(series__metric__name="startup.cold.ttid")
    assert alert.confirmation == "requested" and len(fake.received) >= 1
    assert engine.held([alert.group_id]) == {alert.group_id}
    assert AlertGroup.objects.get(pk=alert.group_id).notified is None
    settings.PERF_NOTIFY_BISECT_WAIT_SECONDS = 0
    assert engine.held([alert.group_id]) == set()
    last = Build.objects.filter(role="branch").order_by("-timestamp").first()
    notifications.notify_due_groups(last.pk)
    assert AlertGroup.objects.get(pk=alert.group_id).notified is not None
    # ...and a request CI never answers expires; the alert keeps the range narrowed so far.
    settings.PERF_REQUEST_TIMEOUT_SECONDS = 0
    assert engine.expire() >= 1
    alert.refresh_from_db()
    b = Bisection.objects.get(alert=alert)
    assert b.outcome == "expired" and alert.confirmation == "none"
    assert alert.range_commits == b.hi - b.lo and alert.culprit_commit == ""


def test_it_stops_at_the_daily_budget(upload, ci):
    fake, integration = ci
    integration.ci_max_requests_per_day = 1
    integration.save()
    shifts = {"startup.cold.ttid": (TIME_AT, 0.15)}
    run_history(upload, shifts)
    answer_requests(upload, fake, shifts)
    b = Bisection.objects.get(alert__series__metric__name="startup.cold.ttid")
    assert b.outcome == "budget" and RunRequest.objects.count() == 1
    assert b.alert.culprit_commit == "" and b.alert.range_commits == b.hi - b.lo < 5


def test_it_keeps_the_requests_ci_received_when_a_moved_culprit_restarts_the_bisection(upload, ci, handoffs):
    # Deleting them (with the old bisection) let a restart spend the daily budget again: CI got 47 requests a
    # day against a budget of 40 in a soak run, and its answers to them were refused as "no such request".
    from alerts import handoff
    from alerts.bisection import engine

    fake, integration = ci
    handoffs.held.add(handoff.RUN_REQUEST)  # CI never answers here: the first requests stay out
    run_history(upload, {"startup.cold.ttid": (TIME_AT, 0.15)})
    alert = Alert.objects.get(series__metric__name="startup.cold.ttid")
    first = Bisection.objects.get(alert=alert)
    asked = list(RunRequest.objects.filter(bisection=first).values_list("public_id", flat=True))
    assert asked
    integration.ci_max_requests_per_day = len(asked)
    integration.save()
    # The culprit moves a build earlier (a late upload, a refinement): the bisection restarts on the new range.
    earlier = Build.objects.get(ext_id=str(TIME_AT[0] - 1))
    Alert.objects.filter(pk=alert.pk).update(build=earlier, previous_build=Build.objects.get(ext_id=str(TIME_AT[0] - 2)))
    assert engine.start(alert.pk) == 1
    b = Bisection.objects.get(alert=alert)
    assert b.pk == first.pk and b.build_id == earlier.pk
    old = RunRequest.objects.filter(public_id__in=asked)
    assert old.count() == len(asked) and set(old.values_list("state", "outcome")) == {("expired", "superseded")}
    # Those requests count: the budget is spent, so the restarted bisection asks nothing more.
    assert b.outcome == "budget" and RunRequest.objects.count() == len(asked)
    # CI's late answer to one of them is recognised, and changes nothing.
    rr = RunRequest.objects.get(public_id=asked[0])
    body = native_body(0, minutes=7000, metrics=[metric_body("startup.cold.ttid", 460.0, rr.runs,
                                                             np.random.default_rng(2))])
    body["build"] = {"id": rr.build_ext_id, "commit": rr.commit, "requested": rr.public_id}
    assert upload(body).status_code == 201
    late = Build.objects.get(ext_id=rr.build_ext_id)
    assert "superseded" in late.analysis_error and Bisection.objects.get(pk=b.pk).outcome == "budget"


def test_it_rejects_an_answer_for_another_commit(upload, ci):
    fake, _ = ci
    run_history(upload, {"startup.cold.ttid": (TIME_AT, 0.15)})
    doc = fake.received[0]
    body = native_body(0, minutes=6000, metrics=[metric_body("startup.cold.ttid", 400.0, doc["runs"],
                                                             np.random.default_rng(1))])
    body["build"] = {"id": doc["build"], "commit": "c1.1", "requested": doc["request"]}
    assert upload(body).status_code == 201
    rr = RunRequest.objects.get(public_id=doc["request"])
    assert rr.state == "failed" and rr.outcome == "wrong commit"
    assert Bisection.objects.get(pk=rr.bisection_id).outcome == "failed"


def test_it_gives_an_alert_without_ci_its_range(upload):
    run_history(upload, {"startup.cold.ttid": (TIME_AT, 0.15)})
    alert = Alert.objects.get(series__metric__name="startup.cold.ttid")
    assert alert.range_commits == 5 and alert.confirmation == "none" and not RunRequest.objects.exists()
    assert not App.objects.get().run_requests.exists()
    assert math.isfinite(alert.rel_change)


def test_it_seeds_the_demo_with_one_bisected_and_one_not_reproduced_alert(upload):
    from io import StringIO

    from alerts.bisection.demo import CULPRIT, seed_bisections

    run_history(upload, {"startup.cold.ttid": (TIME_AT, 0.15), "frames.feed.p90": ((36, 1), 0.15)},
                metrics=("startup.cold.ttid", "frames.feed.p90"))
    out = StringIO()
    seed_bisections(out)
    seed_bisections(out)  # idempotent
    done = {b.alert.confirmation: b for b in Bisection.objects.select_related("alert__build")}
    assert set(done) == {"bisected", "not_reproduced"} and Bisection.objects.count() == 2
    bisected = done["bisected"].alert
    assert bisected.culprit_commit == bisected.build.commits[CULPRIT - 1] and bisected.range_commits == 1
    assert done["not_reproduced"].alert.culprit_commit == ""
    assert out.getvalue().count("demo bisection") == 2


def backdate_last_attempt(rr: RunRequest, seconds: float) -> None:
    from datetime import datetime, timedelta

    log = list(rr.attempt_log)
    log[-1] = {**log[-1], **{k: (datetime.fromisoformat(log[-1][k]) - timedelta(seconds=seconds)).isoformat()
                             for k in ("at", "retry_at") if k in log[-1]}}
    RunRequest.objects.filter(pk=rr.pk).update(attempt_log=log)


@pytest.mark.parametrize("status,attempts", [(500, 6), (403, 1)])
def test_it_retries_a_failing_ci_then_sends_the_alert_with_its_range(upload, ci, settings, status, attempts):
    # Tasks in-process (as here): no broker holds a retry's countdown; the sweep sends it once its backoff is over.
    from alerts import sweeps
    from alerts.bisection.ci import retry_delay

    settings.PERF_SWEEP_MIN_AGE_SECONDS = 0
    fake, _ = ci
    fake.status = status
    run_history(upload, {"startup.cold.ttid": (TIME_AT, 0.15)})
    rr = RunRequest.objects.get()
    assert rr.attempts == 1
    for n in range(1, attempts):
        sweeps.run(in_process=True)
        assert RunRequest.objects.get().attempts == n, "a retry was sent before its backoff was over"
        backdate_last_attempt(rr, retry_delay(n) + 1)
        sweeps.run(in_process=True)
        rr = RunRequest.objects.get()
        assert rr.attempts == n + 1
    assert rr.state == "failed" and rr.attempts == attempts and len(rr.attempt_log) == attempts
    assert all(not a["ok"] and a["status"] == status for a in rr.attempt_log)
    b = Bisection.objects.get()
    assert b.outcome == "failed" and b.alert.confirmation == "none" and b.alert.range_commits == 5


def test_it_waits_for_the_ci_s_retry_after_and_sends_a_duplicate_task_nothing(upload, ci, handoffs):
    from datetime import datetime, timedelta

    from alerts import handoff
    from alerts.bisection import ci as ci_module

    fake, _ = ci
    fake.status, fake.headers = 503, {"Retry-After": "600"}
    handoffs.held.add(handoff.RUN_REQUEST)  # sent by hand below
    run_history(upload, {"startup.cold.ttid": (TIME_AT, 0.15)})
    rr = RunRequest.objects.get()
    assert ci_module.send(rr.pk) == ("retry", 600)
    rr.refresh_from_db()
    entry = rr.attempt_log[-1]
    assert datetime.fromisoformat(entry["retry_at"]) - datetime.fromisoformat(entry["at"]) == timedelta(seconds=600)
    # Past the backoff's first step, not past CI's 600 s: a re-published copy sends nothing, the sweep nothing.
    backdate_last_attempt(rr, ci_module.retry_delay(1) + 1)
    assert ci_module.send(rr.pk) == ("waiting", None)
    assert ci_module.unsent(0) == [] and len(fake.received) == 1
    backdate_last_attempt(rr, 600)
    fake.status = 202
    assert ci_module.unsent(0) == [rr.pk] and ci_module.send(rr.pk) == ("sent", None) and len(fake.received) == 2


def test_it_posts_a_run_request_with_no_transaction_open_and_a_claim_that_stops_a_twin(upload, ci, monkeypatch,
                                                                                        handoffs):
    from django.db import connection

    from alerts import handoff
    from alerts.bisection import ci as ci_module

    handoffs.held.add(handoff.RUN_REQUEST)  # the request is created, but sent by hand below
    run_history(upload, {"startup.cold.ttid": (TIME_AT, 0.15)})
    rr = RunRequest.objects.get()
    seen = []
    real_post = ci_module.http_post

    def probe(url, body, headers, *, timeout):
        seen.append({"atomic": connection.in_atomic_block,
                     "claimed": RunRequest.objects.get(pk=rr.pk).claimed_until is not None,
                     "twin": ci_module.send(rr.pk)})  # a redelivered task, mid-POST
        return real_post(url, body, headers, timeout=timeout)

    monkeypatch.setattr(ci_module, "http_post", probe)
    assert ci_module.send(rr.pk) == ("sent", None)
    assert len(seen) == 1 and seen[0]["atomic"] is False and seen[0]["claimed"] is True
    state, delay = seen[0]["twin"]
    assert state == "retry" and delay > 0
    assert len(ci[0].received) == 1  # the twin sent nothing
    rr.refresh_from_db()
    assert rr.sent is not None and rr.attempts == 1 and rr.claimed_until is None
    assert ci_module.send(rr.pk) == ("done", None)


def test_it_names_the_one_commit_left_when_the_budget_stops_the_bisection(upload, ci):
    # A bisection narrowed to one commit and stopped before its confirming run (the daily budget) left
    # culprit_commit empty though range_commits said 1 (a soak run's alert 33).
    from alerts.bisection import engine

    run_history(upload, {"startup.cold.ttid": (TIME_AT, 0.15)})
    b = Bisection.objects.get(alert__series__metric__name="startup.cold.ttid")
    b.lo, b.hi = 2, 3
    engine._finish(b, b.alert, "budget", "40 requests in the last 24 h (max 40)")
    alert = Alert.objects.get(pk=b.alert_id)
    assert (alert.culprit_commit, alert.range_commits, alert.confirmation) == (b.commits[3], 1, "none")
