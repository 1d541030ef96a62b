"""`/`, the team dashboard and the overview."""

from __future__ import annotations

from collections import Counter, defaultdict

from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from alerts.api import can_triage
from alerts.models import Alert, AlertGroup, Team
from alerts.web import health as health_mod
from alerts.web.format import num, pct, short
from metrics import dashcache
from metrics.models import Build

OPEN = (AlertGroup.Status.UNTRIAGED, AlertGroup.Status.INVESTIGATING)
QUICK_TRIAGE = [("acknowledged", "Acknowledge"), ("invalid", "Invalid"), ("wontfix", "Won't fix"), ("fixed", "Fixed")]


@login_required
def root(request: HttpRequest) -> HttpResponse:
    team = Team.objects.filter(members=request.user).order_by("name").first()
    if team is not None:
        return redirect("team-page", team=team.name)
    return redirect("overview-page")


def group_rows(groups) -> list[dict]:
    """Open alert groups with what a triager needs on one line each."""
    groups = list(groups)
    prev_ids = {a.previous_build_id for g in groups for a in g.live if a.previous_build_id}
    prev = Build.objects.in_bulk(prev_ids)
    rows = []
    for g in groups:
        alerts = g.live
        previous = [prev[a.previous_build_id] for a in alerts if a.previous_build_id in prev]
        first = min(previous, key=lambda b: (b.timestamp, b.pk)) if previous else None
        rows.append({
            "group": g, "build": g.build, "previous": first,
            "commit_from": short(first.commit) if first else "", "commit_to": short(g.build.commit),
            "alerts": [{"alert": a, "metric": a.series.metric.name, "device": a.series.device,
                        "before": num(a.before, a.series.metric.unit), "after": num(a.after, a.series.metric.unit),
                        "pct": pct(a.rel_change), "series_url": a.series.get_absolute_url()} for a in alerts],
            "regressions": sum(1 for a in alerts if a.direction == Alert.Direction.REGRESSION),
        })
    return rows


def open_groups(team: Team, limit: int):
    live = (Alert.objects.exclude(detection=Alert.Detection.WITHDRAWN)
            .select_related("series__metric").order_by("-direction", "series__metric__name"))
    return (AlertGroup.objects.filter(team=team, status__in=OPEN)
            .select_related("build__app")
            .prefetch_related(Prefetch("alerts", queryset=live, to_attr="live"))
            .order_by("-build__timestamp", "-pk")[:limit])


def team_metrics_block(team: Team) -> dict:
    """The team's metric health table, rendered once per cache generation for every viewer."""
    health = sorted(health_mod.team_health(team.pk),
                    key=lambda h: (health_mod.HEALTH_ORDER[h.health], h.app, h.platform, h.metric))
    counts = Counter(h.health for h in health)
    metrics = [{"h": h, "sens": pct(h.sensitivity).lstrip("+") if h.sensitivity is not None else "–",
                "last": num(h.last_value, h.unit), "change": pct(h.rel_change)} for h in health]
    html = render_to_string("alerts/team_metrics.html", {
        "team": team, "metrics": metrics,
        "counts": [(k, counts.get(k, 0)) for k in ("regressed", "noisy", "improved", "stable")]})
    return {"html": html, "counts": dict(counts)}


@login_required
def team_page(request: HttpRequest, team: str) -> HttpResponse:
    t = get_object_or_404(Team, name=team)
    limit = 500 if request.GET.get("all") else 25
    open_count = AlertGroup.objects.filter(team=t, status__in=OPEN).count()
    rows = group_rows(open_groups(t, limit))
    block = dashcache.cached(f"team-metrics:{t.pk}", lambda: team_metrics_block(t),
                             ttl=health_mod.TTL, stale_ttl=health_mod.STALE_TTL)
    return render(request, "alerts/team.html", {
        "team": t, "rows": rows, "open_count": open_count, "truncated": open_count > len(rows),
        "health_counts": block["counts"], "metrics_html": mark_safe(block["html"]),
        "can_triage": can_triage(request.user.pk, request.user.is_staff, t.pk),
        "quick": QUICK_TRIAGE, "teams": Team.objects.order_by("name"),
        "channels": channel_rows(t),
    })


def channel_rows(team: Team) -> list[dict]:
    """Each notification channel with its last delivery, so a failing endpoint shows on the page."""
    rows = []
    for channel in team.channels.active().order_by("kind", "key"):
        last = channel.deliveries.order_by("-last_attempt", "-pk").first()
        rows.append({"channel": channel, "last": last})
    return rows


FAMILY_ORDER = ["startup", "nav", "frames", "memory", "size", "crash", "anr", "oom"]


def family(metric: str) -> str:
    return metric.split(".", 1)[0]


def compute_overview() -> dict:
    teams = {t.pk: t.name for t in Team.objects.all()}
    regs: dict[tuple[str, str], Counter] = defaultdict(Counter)
    open_alerts = (Alert.objects.filter(direction=Alert.Direction.REGRESSION, group__status__in=OPEN,
                                        status__in=(Alert.Status.UNTRIAGED, Alert.Status.ACKNOWLEDGED))
                   .exclude(detection=Alert.Detection.WITHDRAWN)
                   .values_list("series__app__name", "series__platform", "team_id"))
    for app, platform, team_id in open_alerts:
        regs[(app, platform)][teams.get(team_id, "?")] += 1
    grid: dict[tuple[str, str], dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    fams: set[str] = set()
    for h in health_mod.all_health():
        f = family(h.metric)
        fams.add(f)
        grid[(h.app, h.platform)][f][h.health] += 1
    families = [f for f in FAMILY_ORDER if f in fams] + sorted(fams - set(FAMILY_ORDER))
    rows = []
    for key in sorted(set(grid) | set(regs)):
        cells = []
        for f in families:
            c = grid[key].get(f, Counter())
            total = sum(c.values())
            worst = next((k for k in ("regressed", "noisy", "improved", "stable") if c.get(k)), "none")
            cells.append({"family": f, "total": total, "worst": worst, "regressed": c.get("regressed", 0),
                          "noisy": c.get("noisy", 0), "improved": c.get("improved", 0)})
        rows.append({"app": key[0], "platform": key[1], "cells": cells,
                     "teams": sorted(regs[key].items()), "open": sum(regs[key].values())})
    return {"families": families, "rows": rows}


@login_required
def overview_page(request: HttpRequest) -> HttpResponse:
    data = dashcache.cached("overview", compute_overview, ttl=health_mod.TTL, stale_ttl=health_mod.STALE_TTL)
    q = request.GET.get("q", "").strip()
    app, platform = request.GET.get("app", ""), request.GET.get("platform", "")
    results = []
    if q or app or platform:
        teams = {t.pk: t.name for t in Team.objects.all()}
        for h in health_mod.all_health():
            if q.lower() in h.metric.lower() and (not app or h.app == app) and (not platform or h.platform == platform):
                results.append({"h": h, "team": teams.get(h.team_id, ""), "last": num(h.last_value, h.unit),
                                "sens": pct(h.sensitivity).lstrip("+") if h.sensitivity is not None else "–"})
        results.sort(key=lambda r: (health_mod.HEALTH_ORDER[r["h"].health], r["h"].metric))
    return render(request, "alerts/overview.html", {
        **data, "q": q, "app": app, "platform": platform, "results": results[:300],
        "n_results": len(results), "searched": bool(q or app or platform),
        "teams": Team.objects.order_by("name"),
    })
