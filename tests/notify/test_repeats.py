"""A due group that would only repeat what its team was already sent is not sent (alerts/notify/repeats.py)."""

from datetime import timedelta

import pytest

from alerts.models import Alert, AlertGroup, BudgetAlert, Delivery
from alerts.notify.service import plan_deliveries
from metrics.models import Build
from tests.notify.fixtures import add_channel

pytestmark = pytest.mark.django_db


@pytest.fixture
def channel(scene, http_server):
    return add_channel(scene.team, "webhook", url=http_server.url)


def _next_group(scene, ext_id: str, minutes: int) -> AlertGroup:
    build = Build.objects.create(app=scene.app, platform="android", branch="main", ext_id=ext_id,
                                 commit=f"{ext_id}beef", timestamp=scene.build.timestamp + timedelta(minutes=minutes),
                                 analysis="done")
    return AlertGroup.objects.create(build=build, team=scene.team)


def _move(alert: Alert, group: AlertGroup, rel_change: float) -> None:
    alert.refresh_from_db()
    alert.group, alert.build, alert.rel_change = group, group.build, rel_change
    alert.save()


def test_it_remembers_what_each_alert_was_sent_with(scene, channel):
    assert plan_deliveries(scene.group.pk)
    scene.regression.refresh_from_db()
    assert scene.regression.sent_change == pytest.approx(0.2)


def test_it_does_not_send_an_alert_again_when_its_culprit_moved(scene, channel):
    assert plan_deliveries(scene.group.pk)
    later = _next_group(scene, "4712", 30)
    _move(scene.regression, later, 0.22)
    _move(scene.improvement, later, -0.035)
    assert plan_deliveries(later.pk) == []
    later.refresh_from_db()
    assert later.notified is not None and later.not_sent == "repeats alerts already sent, not grown 1.5x since"
    assert not Delivery.objects.filter(group=later).exists()


def test_it_sends_a_moved_alert_again_once_it_grew(scene, channel, settings):
    settings.PERF_NOTIFY_DRIFT_GROWTH = 2.0
    assert plan_deliveries(scene.group.pk)
    later = _next_group(scene, "4712", 30)
    _move(scene.regression, later, 0.41)  # 2.05x the 20% sent
    assert len(plan_deliveries(later.pk)) == 1
    assert AlertGroup.objects.get(pk=later.pk).not_sent == ""


def test_it_sends_a_drift_that_grew_from_the_steps_sent_before_it(scene, channel):
    assert plan_deliveries(scene.group.pk)  # the 20% step was sent
    drift_group = _next_group(scene, "4720", 300)
    drift = Alert.objects.create(
        series=scene.regression.series, build=drift_group.build, previous_build=scene.previous_build,
        first_build=scene.build, group=drift_group, team=scene.team, direction="regression", rel_change=0.25,
        abs_change=100.0, before=400.0, after=500.0, p_value=1e-5, test="t", shape="drift", window_builds=10, slope_per_build=10.0)
    assert plan_deliveries(drift_group.pk) == []  # 25% after 20% sent: the same finding
    Alert.objects.filter(pk=drift.pk).update(rel_change=0.31)
    third = _next_group(scene, "4721", 330)
    Alert.objects.filter(pk=drift.pk).update(group=third)
    assert len(plan_deliveries(third.pk)) == 1  # 31% >= 1.5 x 20%


def test_it_always_sends_a_crossed_size_budget(scene, channel):
    assert plan_deliveries(scene.group.pk)
    later = _next_group(scene, "4712", 30)
    _move(scene.regression, later, 0.2)
    BudgetAlert.objects.create(metric="size.apk.*", max_bytes=30_000_000, build=later.build, group=later,
                               team=scene.team, total=30_500_000.0)
    assert len(plan_deliveries(later.pk)) == 1


def test_it_sends_a_group_that_holds_only_a_crossed_budget(scene, channel):
    only = _next_group(scene, "4712", 30)
    BudgetAlert.objects.create(metric="size.apk.*", max_bytes=30_000_000, build=only.build, group=only,
                               team=scene.team, total=30_500_000.0)
    assert len(plan_deliveries(only.pk)) == 1
