"""When alert groups are sent to their team's channels.

A new group waits until PERF_NOTIFY_SETTLE_BUILDS later builds of its branch were analysed, so the
alerts that need a few builds of confirmation (timings, rates) join it before anyone is told, and at least
one build after the build that raised its newest alert, whose estimates (the culprit first) the next build
may still refine; a group whose branch goes quiet is sent after PERF_NOTIFY_MAX_DELAY_SECONDS by the
periodic sweep. Each group is sent once: `plan_deliveries` records one Delivery per channel and marks the group
notified.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from alerts import handoff
from alerts.models import Alert, AlertGroup, Delivery
from metrics.models import Build

log = logging.getLogger(__name__)


def _queue(group_ids: list[int]) -> int:
    from alerts.bisection.engine import held
    from alerts.notify.service import plan_deliveries
    queued = 0
    waiting = held(group_ids)  # an alert of theirs is being bisected or confirmed
    for gid in group_ids:
        if gid in waiting:
            continue
        for delivery_id in plan_deliveries(gid):
            handoff.publish(handoff.DELIVERY, delivery_id)
            queued += 1
    return queued


def _unnotified() -> Q:
    # One filter() on the same alert row: live, and not withdrawn by a re-run that did not reproduce it;
    # or a crossed size budget (never withdrawn).
    live = (Q(alerts__detection__in=[Alert.Detection.OPEN, Alert.Detection.CONFIRMED])
            & Q(alerts__confirmation__in=[c for c in Alert.Confirmation.values if c != Alert.Confirmation.NOT_REPRODUCED]))
    return Q(notified__isnull=True) & (live | Q(budget_alerts__isnull=False))


def notify_due_groups(build_pk: int) -> int:
    """Send the groups of this build's branch that have settled, counting builds up to this one."""
    build = Build.objects.filter(pk=build_pk).first()
    if build is None:
        return 0
    settle = settings.PERF_NOTIFY_SETTLE_BUILDS
    branch = Build.objects.filter(app_id=build.app_id, platform=build.platform, branch=build.branch,
                                  timestamp__lte=build.timestamp, analysis=Build.Analysis.DONE)
    stamps = list(branch.order_by("-timestamp", "-pk").values_list("timestamp", flat=True)[:settle + 1])
    if len(stamps) <= settle:
        return 0
    newest, cutoff = stamps[0], stamps[settle]
    # A soak run sent a rate alert with a culprit one build early: raised with PERF_NOTIFY_SETTLE_BUILDS 2
    # already passed since its culprit, it went out in the pass that raised it, before the next build moved it.
    raised_last = Alert.objects.filter(group=OuterRef("pk"), detected_build__timestamp__gte=newest) \
        .exclude(detection=Alert.Detection.WITHDRAWN)
    due = (
        AlertGroup.objects.filter(_unnotified(), build__app_id=build.app_id, build__platform=build.platform,
                                  build__branch=build.branch, build__timestamp__lte=cutoff)
        .exclude(Exists(raised_last)).values_list("pk", flat=True).distinct()
    )
    return _queue(sorted(due))


def notify_stale_groups() -> int:
    """Send groups that waited longer than PERF_NOTIFY_MAX_DELAY_SECONDS, and re-queue deliveries
    whose task never ran (broker down when they were planned)."""
    cutoff = timezone.now() - timedelta(seconds=settings.PERF_NOTIFY_MAX_DELAY_SECONDS)
    due = AlertGroup.objects.filter(_unnotified(), created__lte=cutoff).values_list("pk", flat=True).distinct()
    queued = _queue(sorted(due))
    # A first hand-off lost (the broker down when it was planned): as old as the other outboxes' lost hand-offs.
    now = timezone.now()
    stuck = Delivery.objects.filter(status=Delivery.Status.PENDING, attempts=0,
                                    created__lte=now - timedelta(seconds=settings.PERF_SWEEP_MIN_AGE_SECONDS)) \
        .exclude(claimed_until__gt=now)  # in flight: its sender records it
    for delivery_id in stuck.values_list("pk", flat=True)[:500]:
        handoff.publish(handoff.DELIVERY, delivery_id)
        queued += 1
    return queued
