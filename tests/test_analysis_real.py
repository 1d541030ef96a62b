"""The worker on real series (one value a push, no runs): a backed-out change, two steps close together, builds
arriving late around alerts; the same alerts as streaming, in what they show and the build that raised them."""

from __future__ import annotations

import pytest

from alerts.models import Alert
from tests.detection.helpers import pdfpaint_quiet
from tests.factories import native_body, sig9
from tests.real_series import real_series

pytestmark = pytest.mark.django_db(transaction=True)

#: metric -> (excursion, its length, first build of the real step after the backout, the step)
CASES = {
    "pageload.excursion_up": (0.15, 4, 67, 0.15),
    "pageload.excursion_down": (-0.15, 3, 66, 0.15),
    "pageload.quiet": (0.0, 0, 10_000, 0.0),
}


def _value(metric: str, i: int, v: float) -> float:
    exc, length, step, rel = CASES[metric]
    if 60 <= i < 60 + length:
        v *= 1 + exc
    if i >= step:
        v *= 1 + rel
    return round(v, 3)


@pytest.mark.parametrize("late", [(), (62, 68)], ids=["in order", "two builds late"])
def test_it_stores_the_excursion_and_the_step_after_it_as_the_streaming_detector_reports_them(upload, late):
    # The real quiet pdfpaint excerpt (120 pushes) with a change landed at build 60 and backed out a few builds
    # later, then a real +15% step: the worker, which resumes from stored windows build after build, must store
    # what `perfplatform detect --online` reports (tests/detection/test_real_cases.py pins that report), also
    # when builds inside the excursion and the step arrive after the rest (the worker replays from there).
    from metrics.models import Series

    levels = pdfpaint_quiet()
    order = [i for i in range(len(levels)) if i not in late] + list(late)
    for i in order:
        metrics = [{"name": m, "kind": "time", "unit": "ms", "value": _value(m, i, levels[i])} for m in CASES]
        r = upload(native_body(i, metrics=metrics))
        assert r.status_code == 201, r.content
    for s in Series.objects.select_related("metric"):
        got, want = _stored_and_streamed(s, len(levels))
        assert got == want, s.metric.name
        _, _, step, rel = CASES[s.metric.name]
        live = [(b, d, state) for b, d, state, *_ in got if state != Alert.Detection.WITHDRAWN]
        assert live == ([(str(step), "regression", Alert.Detection.CONFIRMED)] if rel else []), s.metric.name
        if rel:
            exc = "regression" if CASES[s.metric.name][0] > 0 else "improvement"
            assert ("60", exc, Alert.Detection.WITHDRAWN) in [a[:3] for a in got]


def upload_values(upload, values: list[float], order: list[int], *, kind: str = "time", unit: str = "ms",
                  lower_is_better: bool = True, name: str = "pageload.real") -> None:
    """Upload build ``i`` of a one-metric series with ``values[i]``, in the given order of builds."""
    metric = {"name": name, "kind": kind, "unit": unit, "lower_is_better": lower_is_better}
    for i in order:
        r = upload(native_body(i, metrics=[{**metric, "value": values[i]}]))
        assert r.status_code == 201, r.content


def _stored_and_streamed(series, builds: int | None = None) -> tuple[list[tuple], list[tuple]]:
    """(build, direction, state, size, p-value, detection build) of the alerts the worker stored on ``series``, and
    of those ``detect_online`` reports streaming its stored builds (as its metric's kind and direction, with the
    absolute floor of its kind and unit, as the worker configures it), both sorted; ``builds``: how many builds the
    series must have stored."""
    from alerts.analysis import to_point
    from alerts.detection import DEFAULT, detect_online
    from alerts.detection.model import default_abs_floor
    from metrics.history import recent_points

    pts = recent_points([series.pk], limit=10_000)[series.pk]
    assert builds is None or len(pts) == builds
    m = series.metric
    config = DEFAULT.with_overrides(abs_floor=default_abs_floor(m.kind, m.unit))
    expected = detect_online([to_point(p, m.kind) for p in pts], kind=m.kind, lower_is_better=m.lower_is_better,
                             config=config)
    want = sorted((pts[cp.index].build_ext_id, cp.direction, _state(cp.withdrawn, cp.confirmed), sig9(cp.rel_change),
                   sig9(cp.p_value), pts[cp.detected_at].build_ext_id) for cp in expected)
    got = sorted((a.build.ext_id, a.direction, a.detection, sig9(a.rel_change), sig9(a.p_value), a.detected_build.ext_id)
                 for a in Alert.objects.filter(series=series).select_related("build", "detected_build"))
    return got, want


def _state(withdrawn: bool, confirmed: bool) -> str:
    if withdrawn:
        return Alert.Detection.WITHDRAWN
    return Alert.Detection.CONFIRMED if confirmed else Alert.Detection.OPEN


@pytest.mark.parametrize("late", [(), (64, 68)], ids=["in order", "two builds late"])
def test_it_stores_an_alert_withdrawn_for_a_later_change_as_the_streaming_detector_does(upload, late):
    # +6% at build 60, raised on 66, and +20% at 67: the review moves the open alert towards 67 and, past the build
    # it was raised on, withdraws it and raises the step at its own culprit. The worker must store both as
    # streaming reports them, also when builds around them arrive late.
    from metrics.models import Series

    levels = pdfpaint_quiet()
    values = [round(v * (1.06 if i >= 60 else 1.0) * (1.2 if i >= 67 else 1.0), 3) for i, v in enumerate(levels)]
    upload_values(upload, values, [i for i in range(len(values)) if i not in late] + list(late),
                  name="pageload.two_steps")
    got, want = _stored_and_streamed(Series.objects.get(), len(values))
    # Late builds too: the replay from a late build starts before the alerts the builds after it had decided
    # (alerts.analysis.replay_start); resuming from their later state stored +26.3% for the step, not +27.5%.
    assert got == want
    assert [a[:3] for a in got if a[2] != Alert.Detection.WITHDRAWN] == [("67", "regression", Alert.Detection.CONFIRMED)]
    assert [a[2] for a in got].count(Alert.Detection.WITHDRAWN) == 1


#: real series, and which build arrives after all the others, relative to each build streaming raises an alert on
LATE_CASES = {
    # a mozilla-beta page load (250 pushes; eight alerts, two withdrawn): the build after each raise, so the builds
    # that followed it had already reviewed, confirmed or withdrawn the alert (the replay must not resume from that)
    "after each raise": ("mozilla6", "mozilla-beta/4975640", 1),
    # an autoland page load (109 pushes; one alert raised near culprit 31 and reviewed back to 24): three builds
    # before the raise, whose evidence raises it a build sooner, far from where the stored alert's culprit was left
    "before the raise": ("mozilla7", "autoland2/4520175", -3),
}


@pytest.mark.parametrize("case", LATE_CASES, ids=list(LATE_CASES))
def test_it_stores_what_streaming_reports_when_builds_around_each_alert_arrive_late(upload, case):
    # alerts.analysis.replay_start, _replayed_alert_for: the same alerts, estimates and detection builds as streaming
    from alerts.detection import detect_online
    from metrics.models import Series
    from perfplatform.detect_cmd import series_input

    source, sid, shift = LATE_CASES[case]
    points, kind, lower, _ = series_input(real_series(source, sid))
    streamed = detect_online(points, kind=kind, lower_is_better=lower)
    late = sorted({cp.detected_at + shift for cp in streamed} & set(range(len(points))))
    assert late
    upload_values(upload, [p.value for p in points], [i for i in range(len(points)) if i not in late] + late,
                  kind=kind)
    got, want = _stored_and_streamed(Series.objects.get(), len(points))
    assert len(want) == len(streamed)
    assert got == want
