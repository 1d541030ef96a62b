"""Triage: the one way an alert's status and note change, used by the API, the alert page and bulk triage.

Every call is one transaction. It locks the alerts it changes (in primary-key order, so two concurrent
triages of overlapping sets cannot deadlock), checks the caller may triage each owning team, writes,
re-derives the affected groups' statuses, and invalidates the dashboards' cache once it committed. Crossed
size budgets of the groups follow a whole-group triage, since the group page and bulk triage act on
"everything in this group".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from alerts import lifecycle
from alerts.models import Alert, AlertGroup, BudgetAlert, Team
from metrics import dashcache

MAX_NOTE = 5000


@dataclass
class TriageError(Exception):
    status: int  # the HTTP status a caller answers with
    path: str
    message: str

    def __str__(self) -> str:
        return self.message


def can_triage(user_id: int | None, is_staff: bool, team_id: int) -> bool:
    if user_id is None:
        return False
    return is_staff or Team.objects.filter(pk=team_id, members__pk=user_id).exists()


@dataclass(frozen=True)
class Result:
    alerts: list[Alert]
    budgets: int

    @property
    def count(self) -> int:
        return len(self.alerts) + self.budgets


def triage(alert_ids: Iterable[int] = (), *, status: str, note: str | None = None, user_id: int | None,
           is_staff: bool, reassigned_to: int | None = None, whole_groups: Iterable[int] = ()) -> Result:
    """Set `status` (and `note`, when given) on the alerts `alert_ids` plus every live alert and crossed
    budget of the groups `whole_groups`. Raises TriageError (nothing written) on a bad status, an unknown
    target, or an alert the caller may not triage."""
    if status not in Alert.Status.values:
        raise TriageError(400, "status", f"must be one of {', '.join(Alert.Status.values)}")
    group_ids = sorted(set(whole_groups))
    with transaction.atomic():
        target = None
        if status == Alert.Status.REASSIGNED:
            target = AlertGroup.objects.filter(pk=reassigned_to).first() if reassigned_to else None
            if target is None:
                raise TriageError(400, "reassigned_to", "must name the alert group of another build")
        wanted = set(alert_ids)
        qs = Alert.objects.filter(pk__in=wanted)
        if group_ids:
            qs = qs | Alert.objects.filter(group_id__in=group_ids).exclude(detection=Alert.Detection.WITHDRAWN)
        alerts = list(qs.select_for_update(of=("self",)).order_by("pk"))
        missing = wanted - {a.pk for a in alerts}
        if missing:
            raise TriageError(404, "alert", f"no such alert: {', '.join(map(str, sorted(missing)))}")
        teams = {a.team_id for a in alerts} | set(
            AlertGroup.objects.filter(pk__in=group_ids).values_list("team_id", flat=True))
        for team_id in teams:
            if not can_triage(user_id, is_staff, team_id):
                name = Team.objects.filter(pk=team_id).values_list("name", flat=True).first()
                raise TriageError(403, "alert", f"only members of {name!r} or staff can triage this alert")
        touched = set(group_ids) | {a.group_id for a in alerts}
        if target is not None:
            touched.add(target.pk)
        for a in alerts:
            a.status = status
            a.reassigned_to = target
            if note is not None:
                a.note = note[:MAX_NOTE]
            a.save(update_fields=["status", "note", "reassigned_to", "updated"])
        budgets = 0
        if group_ids:
            fields = {"status": status, **({"note": note[:MAX_NOTE]} if note else {})}
            budgets = BudgetAlert.objects.filter(group_id__in=group_ids).update(**fields)
        lifecycle.refresh_groups(sorted(touched))
    dashcache.bump()  # after the write is committed, so no reader caches the old state again
    return Result(alerts, budgets)
