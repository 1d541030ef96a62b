"""Recent pull-request checks: the team page lists those that measured the team's metrics, the
overview the latest of all; each links to its check page."""

from __future__ import annotations

from django.template.loader import render_to_string

from alerts.models import Check, Team
from alerts.ownership import Owners

RECENT = 50


def recent_checks(team: Team | None = None, limit: int = 10) -> list[dict]:
    owners = Owners() if team is not None else None
    out = []
    for c in Check.objects.select_related("build", "app").order_by("-requested", "-pk")[:RECENT]:
        mine = c.metrics or []
        if owners is not None:
            mine = [m for m in mine if owners.team_id(c.app.name, c.platform, m.get("metric", "")) == team.pk]
            if not mine:
                continue
        out.append({"c": c, "url": f"/checks/{c.app.name}/{c.platform}/{c.build.ext_id}/",
                    "regressions": sum(1 for m in mine if m.get("verdict") == "regression"), "n": len(mine)})
        if len(out) >= limit:
            break
    return out


def section(team: Team | None = None) -> str:
    rows = recent_checks(team)
    if not rows:
        return ""
    return render_to_string("alerts/checks_section.html", {"rows": rows, "team": team})
