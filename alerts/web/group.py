"""The alert group page: what the notification said, triage with a note, reassignment."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from alerts.models import Alert, AlertGroup
from alerts.triage import MAX_NOTE, TriageError, can_triage, triage
from alerts.web.bisection import bisection_blocks
from alerts.web.budget_view import budget_alert_row
from alerts.web.format import num, pct, short, spark_json
from metrics import sparkline

STATUSES = [s for s in Alert.Status.values if s != Alert.Status.REASSIGNED]
GRAPHS = 12  # live alerts drawn around the culprit; the rest are in the table
REASSIGN_EACH_SIDE = 20  # groups offered for reassignment before and after the culprit build


def culprit_graphs(group: AlertGroup, live: list[Alert]) -> list[dict]:
    """A window of ~90 builds around the culprit for each live alert, read in one query."""
    shown = live[:GRAPHS]
    windows = sparkline.around([(a.series_id, group.build.timestamp) for a in shown], before=60, after=30)
    out = []
    for a in shown:
        w = windows.get((a.series_id, group.build.timestamp))
        if w is None or not w.values:
            continue
        out.append({"a": a, "metric": a.series.metric.name, "unit": a.series.metric.unit,
                    "spark": spark_json(w.values, w.mark), "n": len(w.values), "pct": pct(a.rel_change)})
    return out


def reassign_candidates(group: AlertGroup, each_side: int = REASSIGN_EACH_SIDE) -> list[AlertGroup]:
    """The groups of the builds nearest the culprit, `each_side` before and after it, newest first: a
    misplaced culprit is a neighbour of the build that was blamed, not one of the app's latest."""
    same = (AlertGroup.objects.filter(build__app=group.build.app, build__platform=group.build.platform)
            .exclude(build_id=group.build_id).select_related("build", "team"))
    at = group.build.timestamp
    later = list(same.filter(build__timestamp__gte=at).order_by("build__timestamp", "pk")[:each_side])
    earlier = list(same.filter(build__timestamp__lt=at).order_by("-build__timestamp", "-pk")[:each_side])
    return later[::-1] + earlier


def _triage(request: HttpRequest, group: AlertGroup) -> tuple[int, str]:
    """Apply a POSTed triage to one alert (`alert`=id) or every live alert of the group (`alert`=all)."""
    status = request.POST.get("status", "")
    target = request.POST.get("alert", "")
    if target != "all" and not target.isdigit():
        return 400, "alert must be an alert id or 'all'"
    current = None if target == "all" else group.alerts.filter(pk=int(target)).values_list(
        "status", "reassigned_to_id").first()
    if target != "all" and current is None:
        return 404, "no such alert in this group"
    # A reassigned alert's form offers its own status, so saving its note keeps the reassignment.
    keep = current[1] if current and current[0] == Alert.Status.REASSIGNED == status else None
    if status not in STATUSES and keep is None:
        return 400, f"status must be one of {', '.join(STATUSES)}"
    note = request.POST.get("note")
    if target == "all" and not note:
        note = None  # an empty note on a whole-group triage keeps each alert's own note
    try:
        result = triage([] if target == "all" else [int(target)], status=status, note=note,
                        user_id=request.user.pk, is_staff=request.user.is_staff, reassigned_to=keep,
                        whole_groups=[group.pk] if target == "all" else [])
    except TriageError as exc:
        return exc.status, exc.message
    return 200, f"{result.count} alert(s) marked {status}"


def safe_next(request: HttpRequest, fallback: str) -> str:
    """`next` only when it is a path on this site (never `//evil.example` or another scheme)."""
    target = request.POST.get("next", "")
    if target.startswith("/") and url_has_allowed_host_and_scheme(
            target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return fallback


@login_required
@require_http_methods(["GET", "POST"])
def alert_group_page(request: HttpRequest, group_id: int) -> HttpResponse:
    group = get_object_or_404(AlertGroup.objects.select_related("build__app", "team"), pk=group_id)
    allowed = can_triage(request.user.pk, request.user.is_staff, group.team_id)
    if request.method == "POST":
        wants_json = request.headers.get("Accept", "").startswith("application/json")
        if not allowed:
            msg = f"only members of {group.team.name} or staff can triage"
            return JsonResponse({"error": msg}, status=403) if wants_json else HttpResponse(msg, status=403)
        code, msg = _triage(request, group)
        group.refresh_from_db(fields=["status"])
        if wants_json:
            return JsonResponse({"message": msg, "group_status": group.status}, status=code)
        if code != 200:
            return HttpResponse(msg, status=code)
        return redirect(safe_next(request, group.get_absolute_url()))
    alerts = list(group.alerts.select_related("series__metric", "series__app", "previous_build", "build",
                                              "first_build", "last_build", "reassigned_to__build",
                                              "merged_into__build", "merged_into__group")
                  .order_by("detection", "-direction", "series__metric__name"))
    live = [a for a in alerts if a.detection != Alert.Detection.WITHDRAWN]
    previous = [a.previous_build for a in live if a.previous_build is not None]
    first = min(previous, key=lambda b: (b.timestamp, b.pk)) if previous else None
    candidates = reassign_candidates(group)
    rows = [{
        "a": a, "metric": a.series.metric.name, "unit": a.series.metric.unit,
        "before": num(a.before, a.series.metric.unit), "after": num(a.after, a.series.metric.unit),
        "before_ci": f"{num(a.before_ci_low)} – {num(a.before_ci_high)}" if a.before_ci_low is not None else "",
        "after_ci": f"{num(a.after_ci_low)} – {num(a.after_ci_high)}" if a.after_ci_low is not None else "",
        "pct": pct(a.rel_change), "abs": num(a.abs_change, a.series.metric.unit),
        "sens": pct(a.sensitivity).lstrip("+") if a.sensitivity is not None else "–",
        "p": f"{a.p_value:.2g}" if a.p_value is not None else "–",
    } for a in alerts]
    return render(request, "alerts/group.html", {
        "group": group, "build": group.build, "previous": first, "rows": rows, "allowed": allowed,
        "statuses": STATUSES, "candidates": candidates, "max_note": MAX_NOTE, "graphs": culprit_graphs(group, live),
        "budgets": [budget_alert_row(b) for b in group.budget_alerts.order_by("pk")],
        "bisection_blocks": bisection_blocks(alerts),
        "commit_from": short(first.commit) if first else "", "commit_to": short(group.build.commit),
        "counts": {"regressions": sum(1 for a in live if a.direction == Alert.Direction.REGRESSION),
                   "improvements": sum(1 for a in live if a.direction == Alert.Direction.IMPROVEMENT),
                   "withdrawn": len(alerts) - len(live)},
    })
