"""When a group is due: PERF_NOTIFY_SETTLE_BUILDS builds after its culprit, and at least one build after the
build that raised its newest alert (the next build may still move that alert's culprit)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from alerts import notifications
from alerts.models import Alert, AlertGroup
from metrics.models import Build
from tests.notify.fixtures import add_channel

pytestmark = pytest.mark.django_db


def later_build(scene, i: int) -> Build:
    return Build.objects.create(app=scene.app, platform="android", branch="main", ext_id=f"48{i:02d}",
                                commit=f"f{i:06d}", timestamp=scene.build.timestamp + timedelta(hours=i),
                                analysis="done")


def test_it_waits_one_build_after_the_build_that_raised_the_newest_alert(scene, settings, handoffs):
    settings.PERF_NOTIFY_SETTLE_BUILDS = 2
    settings.PERF_WEBHOOK_ALLOW_PRIVATE = True
    add_channel(scene.team, "webhook", url="http://127.0.0.1:9/hook", secret="s")
    later_build(scene, 1)
    b2 = later_build(scene, 2)
    # Two builds after the culprit: settled by the culprit alone, but the regression was raised by b2 itself.
    Alert.objects.filter(pk=scene.regression.pk).update(detected_build=b2)
    assert notifications.notify_due_groups(b2.pk) == 0
    assert AlertGroup.objects.get(pk=scene.group.pk).notified is None
    b3 = later_build(scene, 3)
    assert notifications.notify_due_groups(b3.pk) == 1
    assert AlertGroup.objects.get(pk=scene.group.pk).notified is not None
