"""`/` and the overview (the team dashboard is alerts/web/team.py)."""

from __future__ import annotations

from collections import Counter, defaultdict

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.safestring import mark_safe

from alerts.models import Alert, AlertGroup, Team
from alerts.web import check_links
from alerts.web import health as health_mod
from alerts.web.format import num, pct
from metrics import dashcache

OPEN = (AlertGroup.Status.UNTRIAGED, AlertGroup.Status.INVESTIGATING)
QUICK_TRIAGE = [("acknowledged", "Acknowledge"), ("invalid", "Invalid"), ("wontfix", "Won't fix"), ("fixed", "Fixed")]


@login_required
def root(request: HttpRequest) -> HttpResponse:
    team = Team.objects.filter(members=request.user).order_by("name").first()
    if team is not None:
        return redirect("team-page", team=team.name)
    return redirect("overview-page")


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
        "teams": Team.objects.order_by("name"), "checks_html": mark_safe(check_links.section()),
    })
