"""Whether a due alert group would only repeat what its team was already sent.

Two things make a group hold alerts the team has heard of. A refined alert whose culprit moves to a
neighbouring build leaves its sent group for that build's new one. And online, a metric that keeps creeping
extends its drift step by step: each extent is a new drift alert at the latest step, in a new group
(docs/DETECTION.md, "Online drift"); sending each would be the train of messages a drift alert exists to
avoid. An alert counts as told when its total change is below ``PERF_NOTIFY_DRIFT_GROWTH`` times the
largest change already sent for it: for itself (``Alert.sent_change``), and for a drift, for every alert of
the same series and direction inside its window. A group whose alerts are all told is not sent; a crossed
size budget always is.
"""

from __future__ import annotations

from django.conf import settings

from alerts.models import Alert, AlertGroup


def told_change(alert: Alert) -> float:
    """The largest ``|rel_change|`` the team was already sent for ``alert`` (0 when none)."""
    told = alert.sent_change or 0.0
    if alert.shape == "drift" and alert.first_build_id is not None:
        earlier = (Alert.objects.filter(series_id=alert.series_id, direction=alert.direction,
                                        sent_change__isnull=False,
                                        build__timestamp__gte=alert.first_build.timestamp,
                                        build__timestamp__lte=alert.build.timestamp)
                   .exclude(pk=alert.pk).values_list("sent_change", flat=True))
        told = max([told, *earlier])
    return told


def repeat_reason(group: AlertGroup, alerts: list[Alert]) -> str:
    """Why ``group`` (with its notifiable ``alerts``) need not be sent; ``""`` when it must be."""
    if not alerts or group.budget_alerts.exists():
        return ""
    growth = settings.PERF_NOTIFY_DRIFT_GROWTH
    for a in alerts:
        told = told_change(a)
        if a.rel_change is None or told == 0.0 or abs(a.rel_change) >= growth * told:
            return ""
    what = "a drift" if any(a.shape == "drift" for a in alerts) else "alerts"
    return f"repeats {what} already sent, not grown {growth:g}x since"


def mark_sent(alerts: list[Alert]) -> None:
    """Remember the change each alert was sent with."""
    for a in alerts:
        if a.rel_change is not None:
            Alert.objects.filter(pk=a.pk).update(sent_change=abs(a.rel_change))
