"""Turning detector events into alert rows and alert groups.

One alert per series change, keyed by (series, culprit build). A refined culprit moves the alert
(and into the new culprit's group); confirmation and withdrawal update it in place, so later builds
never add a second alert for the same change. Groups are (culprit build, owning team); their status
is derived from their alerts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Count, IntegerField, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from alerts.detection import ChangePoint
from alerts.models import Alert, AlertGroup, BudgetAlert
from metrics.history import HistoryPoint
from metrics.models import Series


@dataclass
class SeriesContext:
    """What the lifecycle needs of one series during one analysis."""

    series: Series
    points: list[HistoryPoint]  # the loaded window, oldest first
    team_id: int
    offset: int = 0  # the series position of points[0]: detector index i is points[i - offset]

    def build_at(self, index: int) -> int | None:
        """The build at series position `index`, or None when it lies outside the loaded window (clamping
        it to the window's edge would pin the alert on the wrong build)."""
        i = index - self.offset
        return self.points[i].build_id if 0 <= i < len(self.points) else None


def _fields(cp: ChangePoint, ctx: SeriesContext) -> dict:
    culprit = cp.index
    return {
        "previous_build_id": ctx.build_at(culprit - 1),
        "first_build_id": ctx.build_at(cp.first_index),
        "last_build_id": ctx.build_at(cp.last_index),
        "direction": cp.direction,
        "rel_change": cp.rel_change,
        "abs_change": cp.abs_change,
        "before": cp.before,
        "after": cp.after,
        "before_ci_low": cp.before_ci[0],
        "before_ci_high": cp.before_ci[1],
        "after_ci_low": cp.after_ci[0],
        "after_ci_high": cp.after_ci[1],
        "p_value": cp.p_value,
        "test": cp.test,
        "shape": cp.shape,
        "slope_per_build": cp.slope_per_build,
        "window_builds": cp.window_builds,
        "detection": (
            Alert.Detection.WITHDRAWN if cp.withdrawn else Alert.Detection.CONFIRMED if cp.confirmed else Alert.Detection.OPEN
        ),
    }


_REFINED_FIELDS = [f.name for f in Alert._meta.concrete_fields if not f.primary_key and f.name != "sent_change"]


def _group(build_id: int, team_id: int) -> AlertGroup:
    return AlertGroup.objects.get_or_create(build_id=build_id, team_id=team_id)[0]


def save_change_point(cp: ChangePoint, ctx: SeriesContext, *, decided_build_id: int | None, raised: bool = False,
                      existing: Alert | None = None) -> Alert:
    """Create or update the alert for `cp`; `existing` is the alert it refines (its culprit may move).

    `decided_build_id` is the build whose analysis made this decision (the alert's `decided_build`). On a
    `raised` event, and for a row created here, it is the alert's `detected_build` too, also where the row
    already existed: a withdrawn one raised anew, or an alert a replay after a late build raises again (the
    detector reviews an alert from the build that raised it, and the worker resumes from what is stored here).
    """
    culprit = ctx.build_at(cp.index)
    if culprit is None:
        raise ValueError(f"culprit index {cp.index} is outside the loaded window of series {ctx.series.pk}")
    fields = _fields(cp, ctx)
    if cp.sensitivity is not None:
        fields["sensitivity"] = cp.sensitivity
    at_culprit = Alert.objects.filter(series=ctx.series, build_id=culprit).first()
    if existing is not None and at_culprit is not None and at_culprit.pk != existing.pk:
        # The refined culprit already holds an alert (e.g. one withdrawn earlier): keep one row.
        if at_culprit.detection == Alert.Detection.WITHDRAWN:
            # One row per series and build: the moving alert takes the spot, but whatever a person wrote
            # on the withdrawn one (its triage and note) is carried over, never dropped.
            _carry_triage(at_culprit, existing)
            at_culprit.delete()
        else:
            existing.detection, existing.decided_build_id = Alert.Detection.WITHDRAWN, decided_build_id
            existing.save(update_fields=["detection", "decided_build", "updated"])
            existing = at_culprit
    alert = existing or at_culprit
    if alert is None:
        alert = Alert(series=ctx.series, build_id=culprit, team_id=ctx.team_id, detected_build_id=decided_build_id)
    elif raised and decided_build_id is not None:
        alert.detected_build_id = decided_build_id
    old_group_id = alert.group_id if alert.pk else None
    alert.build_id = culprit
    alert.decided_build_id = decided_build_id
    for key, value in fields.items():
        setattr(alert, key, value)
    alert.group = _group(culprit, alert.team_id)
    if alert.pk:  # what notification recorded meanwhile (sent_change) is not this task's to overwrite
        alert.save(update_fields=_REFINED_FIELDS)
    else:
        alert.save()
    if old_group_id and old_group_id != alert.group_id:
        refresh_groups([old_group_id])
    return alert


def merge_into(cp: ChangePoint, ctx: SeriesContext, drift: Alert, *, decided_build_id: int | None) -> int | None:
    """The alert of ``cp`` is now part of ``drift`` (the detector's ``merged`` event, on the analysis of build
    ``decided_build_id``): withdrawn, pointing at the drift, its triage and note carried over; what was merged
    into it (an earlier extent of the same drift) now points at ``drift`` too. Returns the id of the group it
    left, if any."""
    culprit = ctx.build_at(cp.index)
    alert = Alert.objects.filter(series=ctx.series, build_id=culprit).exclude(pk=drift.pk).first()
    if alert is None:
        return None
    _carry_triage(alert, drift)
    if drift.first_build_id is None:
        # A drift longer than the loaded window still says where it started: its first culprit
        # (``drift.drift_start``), which the first merged alert, the run's head, gives: a drift head's stored
        # first build, a shift head's own culprit (not its plausible range's start, a build or three sooner).
        head_is_drift = alert.shape == "drift" and alert.first_build_id is not None
        drift.first_build_id = alert.first_build_id if head_is_drift else alert.build_id
    drift.save(update_fields=["note", "status", "reassigned_to", "first_build", "updated"])
    alert.detection, alert.merged_into, alert.decided_build_id = Alert.Detection.WITHDRAWN, drift, decided_build_id
    alert.save(update_fields=["detection", "merged_into", "decided_build", "updated"])
    Alert.objects.filter(merged_into=alert).update(merged_into=drift)
    return alert.group_id


def _carry_triage(old: Alert, into: Alert) -> None:
    if old.note and old.note not in into.note:
        into.note = f"{into.note}\n{old.note}".strip() if into.note else old.note
    if old.status != Alert.Status.UNTRIAGED and into.status == Alert.Status.UNTRIAGED:
        into.status, into.reassigned_to_id = old.status, old.reassigned_to_id


def _or(value: float | None, default: float) -> float:
    return default if value is None else value  # 0.0 is a real bound, not a missing one


def as_change_point(alert: Alert, index_of: dict[int, int]) -> ChangePoint | None:
    """The stored alert as the detector's ChangePoint; `index_of` maps build ids to series positions."""
    if alert.build_id not in index_of:
        return None
    idx = index_of[alert.build_id]
    return ChangePoint(
        index=idx,
        first_index=index_of.get(alert.first_build_id, idx),
        last_index=index_of.get(alert.last_build_id, idx),
        direction=alert.direction,
        rel_change=alert.rel_change,
        abs_change=alert.abs_change,
        before=alert.before,
        after=alert.after,
        before_ci=(_or(alert.before_ci_low, alert.before), _or(alert.before_ci_high, alert.before)),
        after_ci=(_or(alert.after_ci_low, alert.after), _or(alert.after_ci_high, alert.after)),
        p_value=alert.p_value if alert.p_value is not None else 1.0,
        test=alert.test,
        detected_at=index_of.get(alert.detected_build_id, idx),
        withdrawn=alert.detection == Alert.Detection.WITHDRAWN,
        confirmed=alert.detection == Alert.Detection.CONFIRMED,
        sensitivity=alert.sensitivity,
        shape="drift" if alert.shape == "drift" else "shift",
        slope_per_build=alert.slope_per_build,
        window_builds=alert.window_builds,
    )


def mark_recoveries(series_ids: Sequence[int]) -> None:
    """An alert whose series later went back to its old level (a confirmed opposite change ending
    within half the original change of the old level) is marked recovered."""
    rows = Alert.objects.filter(series_id__in=series_ids, detection=Alert.Detection.CONFIRMED, recovered=False)
    by_series: dict[int, list[Alert]] = {}
    for a in Alert.objects.filter(series_id__in=series_ids, detection=Alert.Detection.CONFIRMED).select_related("build"):
        by_series.setdefault(a.series_id, []).append(a)
    pending = {a.pk for a in rows}
    for alerts in by_series.values():
        alerts.sort(key=lambda a: (a.build.timestamp, a.build_id))
        for i, a in enumerate(alerts):
            if a.pk not in pending:
                continue
            size = abs(a.after - a.before)
            for later in alerts[i + 1:]:
                opposite = (later.after - later.before) * (a.after - a.before) < 0
                if opposite and abs(later.after - a.before) <= 0.5 * size:
                    Alert.objects.filter(pk=a.pk).update(recovered=True)
                    break


def derive_status(counts: dict[str, int]) -> str:
    """Group status from its alerts' states: all withdrawn → withdrawn; none triaged → untriaged;
    all triaged to a final state → resolved; otherwise investigating."""
    live = counts["live"]
    if live == 0:
        return AlertGroup.Status.WITHDRAWN
    if counts["untriaged"] == live:
        return AlertGroup.Status.UNTRIAGED
    if counts["final"] == live:
        return AlertGroup.Status.RESOLVED
    return AlertGroup.Status.INVESTIGATING


def _budget_count(**filters) -> Coalesce:
    """Per group, how many budget alerts (matching `filters`) it holds: a subquery, so the alert counts'
    join is not multiplied."""
    rows = (BudgetAlert.objects.filter(group=OuterRef("pk"), **filters).order_by().values("group")
            .annotate(n=Count("pk")).values("n"))
    return Coalesce(Subquery(rows, output_field=IntegerField()), 0)


def refresh_groups(group_ids: Sequence[int]) -> None:
    """Derive each group's status from its alerts and its budget alerts (which are always live)."""
    live = ~Q(alerts__detection=Alert.Detection.WITHDRAWN) & ~Q(alerts__confirmation=Alert.Confirmation.NOT_REPRODUCED)
    stats = AlertGroup.objects.filter(pk__in=set(group_ids)).annotate(
        n_all=Count("alerts"),
        live=Count("alerts", filter=live),
        untriaged=Count("alerts", filter=live & Q(alerts__status=Alert.Status.UNTRIAGED)),
        final=Count("alerts", filter=live & Q(alerts__status__in=Alert.FINAL)),
        b_all=_budget_count(),
        b_untriaged=_budget_count(status=Alert.Status.UNTRIAGED),
        b_final=_budget_count(status__in=Alert.FINAL),
    )
    for g in stats:
        if g.n_all == 0 and g.b_all == 0 and g.notified is None:
            g.delete()  # emptied by a refinement before anyone was told
            continue
        status = derive_status({"live": g.live + g.b_all, "untriaged": g.untriaged + g.b_untriaged,
                                "final": g.final + g.b_final})
        if status != g.status:
            AlertGroup.objects.filter(pk=g.pk).update(status=status)
