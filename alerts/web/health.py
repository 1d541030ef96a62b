"""Metric health for dashboards: stable, regressed, improved or noisy, with each series' sensitivity.

The computation reads the recent values of every series in scope (one query), their live alerts (one
query) and runs the detector's sensitivity estimate on the values; it is cached with single-flight
recomputation (metrics.dashcache) and invalidated when a build is analysed or an alert triaged.
"""

from __future__ import annotations

from dataclasses import dataclass

from alerts.detection import Point
from alerts.detection.sensitivity import sensitivity
from alerts.models import Alert
from alerts.ownership import Owners
from metrics import dashcache
from metrics.history import SeriesValues, recent_values
from metrics.models import Scope, Series

RECENT = 60  # builds that count as "recent" for health, and the noise window
TTL, STALE_TTL = 300, 3600
# Sensitivity (smallest detectable relative shift within 10 builds) above which a series is "noisy".
NOISY_ABOVE = {"time": 0.10, "memory": 0.03, "size": 0.01, "count": 0.20, "rate": 0.60, "score": 0.15}
CLEARED = {Alert.Status.INVALID, Alert.Status.FIXED, Alert.Status.BACKED_OUT, Alert.Status.REASSIGNED}
HEALTH_ORDER = {"regressed": 0, "noisy": 1, "improved": 2, "stable": 3}


@dataclass(frozen=True)
class SeriesHealth:
    series: int
    app: str
    platform: str
    branch: str
    device: str
    metric: str
    kind: str
    unit: str
    team_id: int
    health: str
    sensitivity: float | None
    last_value: float | None
    alert_group: int | None  # the group of the alert behind "regressed"/"improved"
    rel_change: float | None


def compute_health(*, team_id: int | None = None) -> list[SeriesHealth]:
    owners = Owners()
    rows = list(Series.objects.filter(scope=Scope.BRANCH).select_related("app", "metric").order_by("app__name", "platform", "metric__name", "device"))
    teams = {s.pk: owners.team_id(s.app.name, s.platform, s.metric.name) for s in rows}
    if team_id is not None:
        rows = [s for s in rows if teams[s.pk] == team_id]
    ids = [s.pk for s in rows]
    history = recent_values(ids, limit=RECENT)
    latest: dict[int, Alert] = {}
    alerts = (Alert.objects.filter(series_id__in=ids).exclude(detection=Alert.Detection.WITHDRAWN)
              .order_by("series_id", "build__timestamp", "pk")
              .only("series_id", "build_id", "group_id", "direction", "status", "recovered", "sensitivity", "rel_change"))
    for a in alerts.iterator(chunk_size=2000):
        latest[a.series_id] = a  # ordered by build time: the last one wins
    out = []
    for s in rows:
        cols = history.get(s.pk)
        n = len(cols.values) if cols is not None else 0
        kind = s.metric.kind
        a = latest.get(s.pk)
        recent_builds = set(cols.build_ids.tolist()) if cols is not None else set()
        sens = a.sensitivity if a is not None and a.sensitivity is not None else None
        if sens is None and n >= 12:
            try:
                sens = sensitivity(_points(cols, kind), kind=kind)
            except (ValueError, ZeroDivisionError, FloatingPointError):
                sens = None
        health, group, rel = "stable", None, None
        if a is not None and a.build_id in recent_builds and not a.recovered and a.status not in CLEARED:
            health = "regressed" if a.direction == Alert.Direction.REGRESSION else "improved"
            group, rel = a.group_id, a.rel_change
        elif sens is not None and sens > NOISY_ABOVE.get(kind, 0.10):
            health = "noisy"
        out.append(SeriesHealth(
            series=s.pk, app=s.app.name, platform=s.platform, branch=s.branch, device=s.device, metric=s.metric.name,
            kind=kind, unit=s.metric.unit, team_id=teams[s.pk], health=health, sensitivity=sens,
            last_value=float(cols.values[-1]) if n else None, alert_group=group, rel_change=rel,
        ))
    return out


def _points(cols: SeriesValues, kind: str) -> list[Point]:
    if kind == "rate" and cols.totals is not None:
        return [Point(value=float(v), count=int(c), total=int(t))
                for v, c, t in zip(cols.values, cols.counts, cols.totals, strict=True) if t == t]
    return [Point(value=float(v)) for v in cols.values]


def team_health(team_id: int) -> list[SeriesHealth]:
    return dashcache.cached(f"health:team:{team_id}", lambda: compute_health(team_id=team_id),
                            ttl=TTL, stale_ttl=STALE_TTL)


def all_health() -> list[SeriesHealth]:
    return dashcache.cached("health:all", compute_health, ttl=TTL, stale_ttl=STALE_TTL)
