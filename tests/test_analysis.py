"""Per-build analysis through the real upload path: alerts at the culprit, idempotence, out-of-order."""

from __future__ import annotations

import pytest

from alerts.analysis import analyse_build
from alerts.models import Alert, AlertGroup, MetricOverride, Team
from metrics.models import Build
from tests.factories import history_bodies, sig9

pytestmark = pytest.mark.django_db(transaction=True)

SHIFTS = {"startup.cold.ttid": (30, 0.20), "size.apk.download": (36, 0.03)}


def upload_all(upload, bodies):
    for body in bodies:
        r = upload(body)
        assert r.status_code == 201, r.content


def live_alerts():
    return Alert.objects.exclude(detection=Alert.Detection.WITHDRAWN).select_related("series__metric", "build")


def test_it_raises_one_alert_per_planted_shift_at_its_culprit_build(upload):
    upload_all(upload, history_bodies(50, shifts=SHIFTS))
    assert set(Build.objects.values_list("analysis", flat=True)) == {"done"}
    found = {(a.series.metric.name, a.build.ext_id, a.direction) for a in live_alerts()}
    assert found == {("startup.cold.ttid", "30", "regression"), ("size.apk.download", "36", "regression")}
    ttid = live_alerts().get(series__metric__name="startup.cold.ttid")
    assert ttid.previous_build.ext_id == "29"
    assert 0.12 < ttid.rel_change < 0.28
    assert ttid.before_ci_low < ttid.before < ttid.before_ci_high
    assert ttid.p_value is not None and ttid.p_value < 0.01
    assert ttid.detection == Alert.Detection.CONFIRMED
    assert ttid.test
    size = live_alerts().get(series__metric__name="size.apk.download")
    assert size.detected_build.ext_id == "36"  # size alerts on the culprit build itself
    assert AlertGroup.objects.count() == 2


def test_it_never_duplicates_alerts_when_analysis_runs_again(upload):
    upload_all(upload, history_bodies(45, shifts=SHIFTS))
    before = sorted(live_alerts().values_list("series_id", "build_id", "detection"))
    for pk in Build.objects.order_by("timestamp").values_list("pk", flat=True):
        assert analyse_build(pk) == "done"
    assert sorted(live_alerts().values_list("series_id", "build_id", "detection")) == before
    assert Alert.objects.count() == len(before) + Alert.objects.filter(detection="withdrawn").count()


def test_it_reaches_the_same_alerts_when_a_build_arrives_late(upload):
    bodies = history_bodies(50, shifts=SHIFTS)
    late = [bodies[31], bodies[37]]
    upload_all(upload, [b for i, b in enumerate(bodies) if i not in (31, 37)] + late)
    found = {(a.series.metric.name, a.build.ext_id) for a in live_alerts()}
    assert found == {("startup.cold.ttid", "30"), ("size.apk.download", "36")}


def test_it_routes_alerts_to_the_owning_team_and_falls_back_to_central(upload, tmp_path):
    from django.core.management import call_command

    cfg = tmp_path / "c.yaml"
    cfg.write_text("teams:\n  - name: startup-perf\n  - name: size-team\n"
                   "owners:\n  - {app: 'com.example.*', platform: android, metric: 'startup.*', team: startup-perf}\n")
    call_command("load_config", str(cfg))
    upload_all(upload, history_bodies(50, shifts=SHIFTS))
    teams = {a.series.metric.name: a.team.name for a in live_alerts()}
    assert teams == {"startup.cold.ttid": "startup-perf", "size.apk.download": "central-perf"}
    assert Team.objects.filter(name="central-perf").exists()


def test_it_marks_an_alert_recovered_when_the_series_returns(upload):
    bodies = history_bodies(75, shifts={"size.apk.download": (30, 0.04)})
    for body in bodies[55:]:
        body["metrics"][2]["value"] = round(body["metrics"][2]["value"] / 1.04)
    upload_all(upload, bodies)
    size = list(live_alerts().filter(series__metric__name="size.apk.download").order_by("build__timestamp"))
    assert [(a.build.ext_id, a.direction) for a in size] == [("30", "regression"), ("55", "improvement")]
    assert size[0].recovered is True
    assert size[1].recovered is False


def test_it_records_a_failed_analysis_and_keeps_the_build_visible(upload, monkeypatch):
    from alerts import analysis

    def boom(*a, **k):
        raise RuntimeError("detector exploded")

    monkeypatch.setattr(analysis, "replay_series", boom)
    upload_all(upload, history_bodies(1))
    build = Build.objects.get()
    assert build.analysis == Build.Analysis.FAILED
    assert "detector exploded" in build.analysis_error


def test_it_raises_the_same_alerts_as_the_streaming_detector(upload):
    """The worker resumes from a sliding window of stored points; its decisions must equal those of
    `detect_online` streaming the whole series (what `perfplatform detect --online` and the eval run)."""
    import numpy as np

    from alerts.analysis import to_point
    from alerts.detection import detect_online
    from metrics.history import recent_points
    from metrics.models import Series

    bodies = history_bodies(170, shifts={"startup.cold.ttid": (60, 0.08), "frames.feed.p90": (130, -0.10),
                                         "size.apk.download": (150, 0.01)}, seed=3)
    upload_all(upload, bodies)
    for s in Series.objects.select_related("metric"):
        pts = recent_points([s.pk], limit=10_000)[s.pk]
        assert len(pts) == 170
        expected = detect_online([to_point(p, s.metric.kind) for p in pts], kind=s.metric.kind,
                                 lower_is_better=s.metric.lower_is_better)
        # what each alert shows too, not only where it is: the worker stores an alert on the detector's events and
        # resumes from it, so an estimate the detector refined without an event was lost there
        want = sorted((pts[cp.index].build_ext_id, cp.direction, cp.withdrawn, sig9(cp.rel_change), sig9(cp.p_value),
                       sig9(cp.before), sig9(cp.after)) for cp in expected)
        got = sorted((a.build.ext_id, a.direction, a.detection == "withdrawn", sig9(a.rel_change), sig9(a.p_value),
                      sig9(a.before), sig9(a.after))
                     for a in Alert.objects.filter(series=s).select_related("build"))
        assert got == want, s.metric.name
    assert np.any([a.build.ext_id == "60" for a in live_alerts()])


def test_it_takes_a_pending_backlog_along_in_one_analysis(upload, handoffs):
    """After a broker outage, the first analysis of a branch analyses every pending build it can lock;
    their own tasks then return at once. The alerts are those of build-by-build analysis."""
    from alerts import handoff
    from alerts.analysis import analyse_build_if_pending

    handoffs.held.add(handoff.ANALYSIS)  # broker down: nothing runs
    upload_all(upload, history_bodies(50, shifts=SHIFTS))
    assert set(Build.objects.values_list("analysis", flat=True)) == {"pending"}
    newest = Build.objects.order_by("-timestamp").first()
    assert analyse_build(newest.pk) == "done"
    assert set(Build.objects.values_list("analysis", flat=True)) == {"done"}
    assert analyse_build_if_pending(Build.objects.get(ext_id="10").pk) == "done"
    found = {(a.series.metric.name, a.build.ext_id) for a in live_alerts()}
    assert found == {("startup.cold.ttid", "30"), ("size.apk.download", "36")}


def test_it_reports_a_size_step_at_the_default_absolute_floor(upload):
    # +0.4% of a 31.5 MB APK = 126 kB: under the 0.5% min_change, over the 100 kB default floor for bytes
    bodies = history_bodies(45, shifts={"size.apk.download": (36, 0.004)})
    upload_all(upload, bodies)
    sizes = live_alerts().filter(series__metric__name="size.apk.download")
    assert [(a.build.ext_id, a.direction) for a in sizes] == [("36", "regression")]


def test_it_takes_the_abs_floor_of_the_config_metrics_table(upload):
    MetricOverride.objects.create(position=0, metric="size.*", abs_floor=200_000)
    upload_all(upload, history_bodies(45, shifts={"size.apk.download": (36, 0.004)}))
    assert not live_alerts().filter(series__metric__name="size.apk.download").exists()
