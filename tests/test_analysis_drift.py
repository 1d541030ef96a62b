"""A slowly drifting metric through the real upload path: one live drift alert, the steps it continues merged."""

from __future__ import annotations

import json

import pytest

from alerts.analysis import to_point
from alerts.api import alert_payload
from alerts.detection import detect_online
from alerts.models import Alert
from metrics.history import recent_points
from metrics.models import Series
from tests.factories import history_bodies
from tests.notify.fixtures import add_channel, http_server  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db(transaction=True)

N, START, LENGTH, TOTAL = 130, 40, 60, 0.4


def _drifting_bodies() -> list[dict]:
    """The factory's history with startup.cold.ttid slowing by 40% over builds 40-99 (a leak, a creeping
    dependency), every run of a build scaled alike."""
    bodies = history_bodies(N, seed=4)
    for i, body in enumerate(bodies):
        f = 1 + TOTAL * min(max(i - START, 0), LENGTH) / LENGTH
        for m in body["metrics"]:
            if m["name"] == "startup.cold.ttid":
                m["samples"] = [round(v * f, 2) for v in m["samples"]]
    return bodies


def test_it_reports_a_slow_drift_as_one_live_drift_alert(upload):
    bodies = _drifting_bodies()
    for body in bodies[:60]:
        assert upload(body).status_code == 201
    first = Alert.objects.filter(series__metric__name="startup.cold.ttid", detection="confirmed").order_by("build__timestamp")[0]
    Alert.objects.filter(pk=first.pk).update(status="acknowledged", note="startup is creeping, see bug 42")
    for body in bodies[60:]:
        assert upload(body).status_code == 201
    s = Series.objects.select_related("metric").get(metric__name="startup.cold.ttid")
    alerts = list(Alert.objects.filter(series=s).select_related("build", "first_build", "merged_into"))
    live = [a for a in alerts if a.detection != Alert.Detection.WITHDRAWN]
    assert len(live) == 1, [(a.build.ext_id, a.shape, a.detection) for a in alerts]
    drift = live[0]
    assert drift.shape == "drift" and drift.direction == "regression" and drift.detection == "confirmed"
    assert START - 5 <= int(drift.first_build.ext_id) <= START + 15
    assert int(drift.first_build.ext_id) < int(drift.build.ext_id) <= START + LENGTH + 10
    assert drift.window_builds == int(drift.build.ext_id) - int(drift.first_build.ext_id) + 1
    assert drift.slope_per_build == pytest.approx(drift.abs_change / drift.window_builds)
    assert 0.2 < drift.rel_change < 0.6
    # every step before it, and every earlier extent of the drift, was merged into it
    steps = [a for a in alerts if a.pk != drift.pk]
    assert len(steps) >= 2 and all(a.detection == "withdrawn" and a.merged_into_id == drift.pk for a in steps)
    assert alert_payload(None, steps[0])["merged_into"] == drift.pk
    # what the team wrote on the first step travels with the finding
    assert (drift.status, drift.note) == ("acknowledged", "startup is creeping, see bug 42")
    assert alert_payload(None, drift)["merged_into"] is None
    # the stateless worker took the decisions of the detector streaming the whole series
    pts = recent_points([s.pk], limit=10_000)[s.pk]
    streamed = detect_online([to_point(p, "time") for p in pts], kind="time")
    assert sorted(pts[cp.index].build_ext_id for cp in streamed) == sorted(a.build.ext_id for a in alerts)
    # ... and says the same of each: the steps a drift continued are withdrawn into it, the drift is live
    assert (sorted((pts[cp.index].build_ext_id, cp.withdrawn) for cp in streamed)
            == sorted((a.build.ext_id, a.detection == "withdrawn") for a in alerts))
    assert {pts[cp.merged_into].build_ext_id for cp in streamed if cp.merged_into is not None} == {drift.build.ext_id}
    # the other metrics did not drift and raised nothing
    assert not Alert.objects.exclude(series=s).exclude(detection="withdrawn").exists()



def test_it_sends_a_drift_again_only_when_it_has_grown(upload, settings, http_server):  # noqa: F811 - fixture
    """Each extent of the drift is a new group; a team hears of it again only once it grew 1.5x."""
    from alerts.models import AlertGroup, Team

    settings.PERF_WEBHOOK_ALLOW_PRIVATE = True
    team, _ = Team.objects.get_or_create(name=settings.PERF_DEFAULT_TEAM)
    add_channel(team, "webhook", url=http_server.url)
    for body in _drifting_bodies():
        assert upload(body).status_code == 201
    sent = [json.loads(r.body) for r in http_server.requests]
    drift_changes = [a["rel_change"] for p in sent for a in p["alerts"] if a["shape"] == "drift"]
    assert len(drift_changes) >= 2, sent
    # every drift sent had grown 1.5x over the one sent before it
    assert all(b >= 1.5 * a for a, b in zip(drift_changes, drift_changes[1:], strict=False)), drift_changes
    quiet = AlertGroup.objects.exclude(not_sent="")
    assert quiet.exists() and all(g.notified is not None and not g.deliveries.exists() for g in quiet)
    assert all(g.not_sent.startswith("repeats ") for g in quiet)
    # the last extent, the one live drift, was sent or held back as such a repeat: either way what the team last
    # heard is within the growth factor of where the drift stands (whether the last extent itself crossed it
    # depends on where the detector cut the extents)
    live = Alert.objects.get(series__metric__name="startup.cold.ttid", detection="confirmed")
    assert (live.group.not_sent == "") == live.group.deliveries.exists()
    assert abs(live.rel_change) < settings.PERF_NOTIFY_DRIFT_GROWTH * max(abs(c) for c in drift_changes)
