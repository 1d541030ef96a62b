"""Property: whatever order builds arrive in (late builds, a backlog after a broker outage), the stored
alerts equal `detect_online` streaming the whole series in build order, exactly."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alerts.analysis import analyse_build
from alerts.models import Alert
from metrics.history import recent_points
from metrics.models import Build, Series
from tests.factories import history_bodies
from tests.test_analysis_real import _stored_and_streamed

pytestmark = pytest.mark.django_db(transaction=True)

N = 150
BODIES = history_bodies(N, shifts={"startup.cold.ttid": (70, 0.10), "size.apk.download": (120, 0.02)}, seed=11)


@st.composite
def arrival_plans(draw):
    """An upload order (late builds held back by 1-60 builds) and a backlog stretch analysed in one go."""
    order = list(range(N))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(40, N - 2))
        delay = draw(st.integers(1, 60))
        order.remove(i)
        order.insert(min(order.index(i - 1) + 1 + delay, len(order)) if (i - 1) in order else 0, i)
    start = draw(st.integers(0, N - 1))
    backlog = set(order[start:start + draw(st.integers(0, 40))])
    return order, backlog


@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(plan=arrival_plans())
def test_it_stores_the_alerts_of_the_streaming_detector_whatever_the_arrival_order(upload, handoffs, plan):
    from alerts import handoff

    order, backlog = plan
    Build.objects.all().delete()
    Alert.objects.all().delete()
    Series.objects.all().delete()
    for i in order:
        # During the outage the broker takes nothing: those builds stay pending until one analysis takes
        # the backlog along.
        (handoffs.held.add if i in backlog else handoffs.held.discard)(handoff.ANALYSIS)
        assert upload(BODIES[i]).status_code == 201
    handoffs.held.discard(handoff.ANALYSIS)
    for pk in Build.objects.filter(analysis="pending").order_by("timestamp").values_list("pk", flat=True):
        analyse_build(pk)
    for s in Series.objects.select_related("metric"):
        # what each alert shows and the build that raised it too: the replay resumes from alerts as they stood
        got, want = _stored_and_streamed(s)
        assert got == want, (s.metric.name, order, sorted(backlog))


def test_it_loads_the_whole_resume_window_before_a_build_that_arrives_30_builds_late(upload, handoffs):
    from alerts import handoff
    from alerts.analysis import REPLAY_MAX, _enough_history, base_config
    from alerts.detection.online import NOISE_EVERY

    handoffs.held.add(handoff.ANALYSIS)
    for body in BODIES:
        upload(body)
    cfg = base_config()
    keep, limit = cfg.window + NOISE_EVERY, cfg.window + REPLAY_MAX
    late = Build.objects.get(ext_id=str(N - 31))  # 30 builds after it are already there
    ids = list(Series.objects.values_list("pk", flat=True))
    history = _enough_history(recent_points(ids, limit=limit), dict.fromkeys(ids, {late.pk}), keep=keep,
                              limit=limit)
    for sid in ids:
        pts = history[sid]
        pos = next(i for i, p in enumerate(pts) if p.build_id == late.pk)
        assert pos >= keep, (sid, pos)
    # A build older than any default load is found too.
    oldest_late = Build.objects.get(ext_id=str(N - limit - 5))
    history = _enough_history(recent_points(ids, limit=limit), dict.fromkeys(ids, {oldest_late.pk}), keep=keep,
                              limit=limit)
    assert all(any(p.build_id == oldest_late.pk for p in history[sid]) for sid in ids)


def test_it_moves_the_alert_a_late_build_displaces_instead_of_leaving_a_withdrawn_one(upload, handoffs):
    """Without build 76 the detector puts a +5% shift at 72; once 76 arrives (4 builds late) the replay puts
    it at 75, as streaming does. The alert moves (triage and note with it); no withdrawn alert at 72 is left
    that the streaming detector never raised."""
    bodies = history_bodies(140, shifts={"startup.cold.ttid": (75, 0.05), "frames.feed.p90": (75, 0.05)}, seed=5)
    order = list(range(140))
    order.remove(76)
    order.insert(80, 76)
    for i in order:
        assert upload(bodies[i]).status_code == 201
    s = Series.objects.select_related("metric").get(metric__name="startup.cold.ttid")
    got, want = _stored_and_streamed(s)
    assert [(build, state == Alert.Detection.WITHDRAWN) for build, _, state, *_ in want] == [("75", False)]
    assert got == want
