"""The team's metric list collapsed by family (startup, frames, memory, size, crash...).

Each family shows its worst health, how many series are in each state and a sparkline of the
family's typical level: per build position (aligned on each series' latest build), the median over
the family's series of value / that series' median. Rendered once per cache generation and shared
by every viewer, like the health it is built from.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
from django.template.loader import render_to_string

from alerts.models import Team
from alerts.web import health as health_mod
from alerts.web.format import num, pct, spark_json
from metrics.history import recent_values

# Names whose first dotted segment is not the family a triager thinks in.
ALIASES = {"anr": "crash", "oom": "crash", "jank": "frames"}
ORDER = ["startup", "nav", "frames", "memory", "size", "crash"]
WORST_FIRST = ("regressed", "noisy", "improved", "stable")
SPARK_POINTS = 60


def family(metric: str) -> str:
    first = metric.split(".", 1)[0]
    return ALIASES.get(first, first)


def family_order(names) -> list[str]:
    names = set(names)
    return [f for f in ORDER if f in names] + sorted(names - set(ORDER))


def family_spark(columns: list[np.ndarray], points: int = SPARK_POINTS) -> list[float | None]:
    """The median over series of value / series median, per position from the end (None where empty)."""
    if not columns:
        return []
    grid = np.full((len(columns), points), np.nan)
    for row, values in enumerate(columns):
        tail = np.asarray(values[-points:], dtype=float)
        med = np.nanmedian(tail) if tail.size else np.nan
        if tail.size and np.isfinite(med) and med != 0:
            grid[row, points - tail.size:] = tail / med
    out = []
    for col in grid.T:
        ok = col[np.isfinite(col)]
        out.append(round(float(np.median(ok)), 4) if ok.size else None)
    while out and out[0] is None:
        out.pop(0)
    return out


def families_block(team: Team) -> dict:
    health = health_mod.team_health(team.pk)
    cols = recent_values([h.series for h in health], limit=SPARK_POINTS)
    by_family: dict[str, list] = defaultdict(list)
    for h in health:
        by_family[family(h.metric)].append(h)
    families = []
    for name in family_order(by_family):
        rows = sorted(by_family[name], key=lambda h: (health_mod.HEALTH_ORDER[h.health], h.app, h.platform, h.metric))
        counts = Counter(h.health for h in rows)
        worst = next(k for k in WORST_FIRST if counts.get(k))
        spark = family_spark([cols[h.series].values for h in rows if h.series in cols])
        families.append({
            "name": name, "n": len(rows), "worst": worst, "spark": spark_json(spark),
            "counts": [(k, counts[k]) for k in WORST_FIRST if counts.get(k)],
            "metrics": [{"h": h, "sens": pct(h.sensitivity).lstrip("+") if h.sensitivity is not None else "–",
                         "last": num(h.last_value, h.unit), "change": pct(h.rel_change)} for h in rows],
        })
    counts = Counter(h.health for h in health)
    html = render_to_string("alerts/team_metrics.html", {
        "team": team, "families": families,
        "counts": [(k, counts.get(k, 0)) for k in WORST_FIRST]})
    return {"html": html, "counts": dict(counts)}
