"""What a notification says: the webhook body of docs/API.md section 5 and a plain-text summary of it."""

from __future__ import annotations

import json
from typing import Any

from django.urls import NoReverseMatch

from alerts import display
from alerts.models import Alert, AlertGroup

EVENT = "alerts.created"


def _join(base_url: str, path: str) -> str:
    return base_url.rstrip("/") + "/" + path.lstrip("/")


def group_url(group: AlertGroup, *, base_url: str) -> str:
    """Absolute URL of the alert group page (the route may not be installed yet: fall back to /alerts/<id>/)."""
    try:
        path = group.get_absolute_url()
    except NoReverseMatch:
        path = f"/alerts/{group.pk}/"
    return _join(base_url, path)


def _safe_url(obj: Any, *, base_url: str) -> str | None:
    try:
        return _join(base_url, obj.get_absolute_url())
    except NoReverseMatch:
        return None


def _iso(value) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def notifiable_alerts(group: AlertGroup) -> list[Alert]:
    """The group's alerts a team is told about: everything but the ones the detector withdrew or whose
    re-runs did not reproduce them."""
    return list(
        group.alerts.exclude(detection=Alert.Detection.WITHDRAWN)
        .exclude(confirmation=Alert.Confirmation.NOT_REPRODUCED)
        .select_related("series__app", "series__metric", "build", "previous_build", "team")
        .order_by("-direction", "pk")  # regressions first
    )


def alert_dict(alert: Alert, *, base_url: str) -> dict[str, Any]:
    series = alert.series
    return {
        "id": alert.pk,
        "app": series.app.name,
        "platform": series.platform,
        "branch": series.branch,
        "device": series.device,
        "metric": series.metric.name,
        "unit": series.metric.unit,
        "build": alert.build.ext_id,
        "previous_build": alert.previous_build.ext_id if alert.previous_build else None,
        "direction": alert.direction,
        "rel_change": alert.rel_change,
        "abs_change": display.level(alert.abs_change),
        "before": display.level(alert.before),
        "after": display.level(alert.after),
        "p_value": alert.p_value,
        "status": alert.status,
        "detection": alert.detection,
        "culprit_commit": alert.culprit_commit or None,
        "range_commits": alert.range_commits,
        "confirmation": alert.confirmation,
        "shape": alert.shape,
        "slope_per_build": alert.slope_per_build,
        "window_builds": alert.window_builds,
        "team": alert.team.name,
        "created": _iso(alert.created),
        "url": _join(base_url, f"/alerts/{alert.group_id}/"),
        "series_url": _safe_url(series, base_url=base_url),
    }


def group_payload(group: AlertGroup, *, base_url: str) -> dict[str, Any]:
    """The body of the `alerts.created` webhook for one alert group (withdrawn alerts left out)."""
    group = AlertGroup.objects.select_related("build__app", "team").get(pk=group.pk)
    build = group.build
    alerts = notifiable_alerts(group)
    # The culprit range starts at the oldest "previous good build" among the alerts.
    previous = [a.previous_build for a in alerts if a.previous_build is not None]
    previous_build = min(previous, key=lambda b: (b.timestamp, b.pk)) if previous else None
    url = group_url(group, base_url=base_url)
    regressions = sum(1 for a in alerts if a.direction == Alert.Direction.REGRESSION)
    return {
        "event": EVENT,
        "app": build.app.name,
        "platform": build.platform,
        "branch": build.branch,
        "build": build.ext_id,
        "build_url": _safe_url(build, base_url=base_url),
        "group": {"id": group.pk, "url": url, "team": group.team.name},
        "commits": {
            "from": previous_build.commit if previous_build else None,
            "to": build.commit or None,
            "parent": build.parent_commit or None,
            "previous_build": previous_build.ext_id if previous_build else None,
        },
        "counts": {"regressions": regressions, "improvements": len(alerts) - regressions},
        "alerts": [alert_dict(a, base_url=base_url) for a in alerts],
        "budgets": [budget_dict(b, base_url=base_url) for b in group.budget_alerts.order_by("pk")],
        "url": url,
    }


def budget_dict(b, *, base_url: str) -> dict[str, Any]:
    """A crossed size budget of the group (docs/SIZE.md): the glob, the cap and the sum that crossed it."""
    return {"id": b.pk, "metric": b.metric, "max_bytes": b.max_bytes, "total": b.total,
            "previous_total": b.previous_total, "over_by": b.total - b.max_bytes, "status": b.status,
            "team": b.team.name, "url": _join(base_url, f"/alerts/{b.group_id}/")}


def encode_payload(payload: dict[str, Any]) -> bytes:
    """The exact bytes sent (and signed) for a payload."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# --- Human-readable summary (email, Slack) -------------------------------------------------------------


def format_value(value: float | None, unit: str = "") -> str:
    if value is None:
        return "?"
    if abs(value) >= 1000:
        text = f"{value:,.0f}"
    else:
        text = f"{value:.4g}"
    return f"{text} {unit}".strip() if unit else text


def format_change(rel_change: float | None) -> str:
    if rel_change is None:
        return "?"
    return f"{rel_change * 100:+.1f}%"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def headline(payload: dict[str, Any]) -> str:
    """`3 regressions in com.example.shop android main build 4711` (improvements counted too)."""
    counts = payload.get("counts") or {}
    parts = []
    if counts.get("regressions"):
        parts.append(_plural(counts["regressions"], "regression"))
    if counts.get("improvements"):
        parts.append(_plural(counts["improvements"], "improvement"))
    if payload.get("budgets"):
        parts.append(_plural(len(payload["budgets"]), "size budget") + " crossed")
    what = ", ".join(parts) or _plural(len(payload.get("alerts", [])), "alert")
    return f"{what} in {payload['app']} {payload['platform']} {payload['branch']} build {payload['build']}"


def commit_range(payload: dict[str, Any]) -> str:
    commits = payload.get("commits") or {}
    start, end = commits.get("from"), commits.get("to")
    if start and end:
        text = f"{start}..{end}"
    elif end:
        text = f"up to {end}"
    else:
        return "unknown"
    if commits.get("previous_build"):
        text += f" (since build {commits['previous_build']})"
    return text


def metric_line(alert: dict[str, Any]) -> str:
    """`startup.cold.ttid (pixel-6): 400 ms → 480 ms (+20.0%)`, drifts with `, drift over 40 builds, +2 ms/build`."""
    device = f" ({alert['device']})" if alert.get("device") else ""
    unit = alert.get("unit") or ""
    line = (
        f"{alert['metric']}{device}: {format_value(alert['before'], unit)} → "
        f"{format_value(alert['after'], unit)} ({format_change(alert['rel_change'])})"
    )
    if alert.get("shape") == "drift" and alert.get("window_builds"):
        slope = alert.get("slope_per_build") or 0.0
        sign = "+" if slope >= 0 else "-"
        line += f", drift over {alert['window_builds']} builds, {sign}{format_value(abs(slope), unit)}/build"
    return line


def culprit_line(alert: dict[str, Any]) -> str | None:
    """`culprit abc1234 (bisected)` once the platform has named the commit, else None."""
    commit = alert.get("culprit_commit")
    if not commit:
        return None
    how = {"bisected": "found by bisection", "confirmed": "re-run confirmed"}.get(alert.get("confirmation") or "")
    return f"culprit {commit}" + (f" ({how})" if how else "")


def budget_line(budget: dict[str, Any]) -> str:
    """`size.apk.* over its 30,000,000 bytes budget: 30,500,000 bytes (+500,000), was 29,900,000 bytes`."""
    line = (f"{budget['metric']} over its {format_value(budget['max_bytes'], 'bytes')} budget: "
            f"{format_value(budget['total'], 'bytes')} (+{format_value(budget['over_by'], 'bytes')})")
    if budget.get("previous_total") is not None:
        line += f", was {format_value(budget['previous_total'], 'bytes')}"
    return line


def summary_lines(payload: dict[str, Any]) -> list[str]:
    """Plain-text summary: where, which build and commits, each metric's change (and culprit commit, once
    found), the size budgets crossed, and links."""
    lines = [
        headline(payload),
        "",
        f"App: {payload['app']}",
        f"Platform: {payload['platform']}",
        f"Branch: {payload['branch']}",
        f"Build: {payload['build']}" + (f" {payload['build_url']}" if payload.get("build_url") else ""),
        f"Commits: {commit_range(payload)}",
    ]
    for direction, title in (("regression", "Regressions"), ("improvement", "Improvements")):
        alerts = [a for a in payload["alerts"] if a["direction"] == direction]
        if not alerts:
            continue
        lines += ["", f"{title}:"]
        for alert in alerts:
            lines.append(f"- {metric_line(alert)}")
            if culprit := culprit_line(alert):
                lines.append(f"  {culprit}")
            if alert.get("series_url"):
                lines.append(f"  {alert['series_url']}")
    if payload.get("budgets"):
        lines += ["", "Size budgets crossed:"] + [f"- {budget_line(b)}" for b in payload["budgets"]]
    lines += ["", f"Alert group: {payload['url']}"]
    return lines
