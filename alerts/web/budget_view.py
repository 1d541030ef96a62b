"""Size budgets on the team page (the team's budgets on each app and platform's latest branch build)
and on the size page (every budget that applies to the build), with the headroom left."""

from __future__ import annotations

from django.db.models import Max, Q
from django.template.loader import render_to_string

from alerts.budget_alerts import budgets_for, sizes_by_build
from alerts.budgets import BudgetStatus, applies, evaluate_budgets
from alerts.models import BudgetAlert, SizeBudget, Team
from alerts.web import health as health_mod
from alerts.web.format import human_bytes
from metrics import dashcache
from metrics.models import App, Build


def row(status: BudgetStatus, build: Build, teams: dict[int, str]) -> dict:
    used = status.used if status.max_bytes > 0 else 1.0
    return {
        "s": status, "build": build, "team": teams.get(status.team_id, "?"), "total": human_bytes(status.total),
        "cap": human_bytes(status.max_bytes), "pct": f"{used * 100:.0f}%" if status.matched else "–",
        "bar": f"{min(1.0, used) * 100:.1f}" if status.matched else "0",
        "headroom": ("−" if status.headroom < 0 else "") + human_bytes(abs(status.headroom)),
    }


def budget_alert_row(b: BudgetAlert) -> dict:
    """A crossed budget as the group page and the team dashboard show it."""
    return {"b": b, "total": human_bytes(b.total), "cap": human_bytes(b.max_bytes), "over": human_bytes(b.over_by),
            "before": human_bytes(b.previous_total) if b.previous_total is not None else "–"}


def latest_branch_builds() -> list[Build]:
    """Each app and platform's newest build of its default branch (two queries)."""
    defaults = dict(App.objects.values_list("pk", "default_branch"))
    newest = (Build.objects.filter(role="branch").values("app_id", "platform", "branch").annotate(t=Max("timestamp")))
    keep = [r for r in newest if r["branch"] == defaults.get(r["app_id"])]
    if not keep:
        return []
    q = Q()
    for r in keep:
        q |= Q(app_id=r["app_id"], platform=r["platform"], branch=r["branch"], timestamp=r["t"])
    return list(Build.objects.filter(q, role="branch").select_related("app").order_by("app__name", "platform"))


def team_budget_rows(team: Team) -> list[dict]:
    rules = list(SizeBudget.objects.filter(team=team).order_by("position"))
    if not rules:
        return []
    builds = latest_branch_builds()
    sizes = sizes_by_build(b.pk for b in builds)
    teams = {team.pk: team.name}
    rows = []
    for b in builds:
        mine = [r for r in rules if applies(r, b.app.name, b.platform)]
        for status in evaluate_budgets(sizes.get(b.pk, {}), mine):
            rows.append(row(status, b, teams))
    order = {"over": 0, "near": 1, "ok": 2, "empty": 3}
    rows.sort(key=lambda r: (order[r["s"].state], -r["s"].used if r["s"].matched else 0))
    return rows


def team_section(team: Team) -> str:
    def compute() -> str:
        rows = team_budget_rows(team)
        if not rows:
            return ""
        return render_to_string("alerts/budgets_section.html", {"rows": rows, "scope": "team", "team": team})

    return dashcache.cached(f"team-budgets:{team.pk}", compute, ttl=health_mod.TTL, stale_ttl=health_mod.STALE_TTL)


def size_section(build: Build, sizes: dict[str, float]) -> str:
    rules = budgets_for(build.app.name, build.platform)
    if not rules:
        return ""
    teams = dict(Team.objects.values_list("pk", "name"))
    rows = [row(s, build, teams) for s in evaluate_budgets(sizes, rules)]
    return render_to_string("alerts/budgets_section.html", {"rows": rows, "scope": "build", "build": build})
