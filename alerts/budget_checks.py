"""Size budgets in pre-merge checks: a pull-request build that takes a budget over its cap fails its check.

Registered with `alerts.premerge.register_extra_rows`. For a check with a base build, each budget that
matches some `size.*` metric of the pull-request build adds one row named `budget:<glob>`: `regression`
(which fails the check) when the build's total is over `max_bytes` and larger than the base build's (the
pull request adds to the overshoot), else `same` with the headroom or overshoot in its note. A check without
a baseline gets no budget rows: it never fails (docs/API.md section 6).
"""

from __future__ import annotations

from alerts import budget_alerts
from alerts.budgets import evaluate_budgets
from alerts.detection.checks import MetricVerdict
from alerts.models import Team
from metrics.models import Build


def budget_rows(build: Build, rows: list[MetricVerdict]) -> list[MetricVerdict]:
    budgets = budget_alerts.budgets_for(build.app.name, build.platform)
    if not budgets:
        return []
    if all(r.verdict == "no_baseline" for r in rows):
        return []  # no base build, or a device/metrics the base never measured
    base_build = _base_build(build)
    if base_build is None:
        return []
    sizes = budget_alerts.sizes_by_build([build.pk, base_build.pk])
    head = evaluate_budgets(sizes.get(build.pk, {}), budgets)
    before = {s.position: s for s in evaluate_budgets(sizes.get(base_build.pk, {}), budgets)}
    teams = dict(Team.objects.filter(pk__in={s.team_id for s in head}).values_list("pk", "name"))
    out = []
    for s in head:
        if s.state == "empty":
            continue
        prev = before.get(s.position)
        prev_total = prev.total if prev is not None and prev.state != "empty" else None
        over = s.total > s.max_bytes
        grew = prev_total is None or s.total > prev_total
        note = (f"size budget of team {teams.get(s.team_id, '?')}: {s.total:,.0f} of {s.max_bytes:,} bytes "
                + (f"(over by {s.total - s.max_bytes:,.0f})" if over else f"({s.max_bytes - s.total:,.0f} left)"))
        out.append(MetricVerdict(
            metric=f"budget:{s.metric}", device="", kind="size", unit="bytes",
            verdict="regression" if over and grew else "same", before=prev_total, after=s.total,
            rel_change=(s.total / prev_total - 1) if prev_total else None, ci=None, p_value=None,
            test=f"size budget (sum of {len(s.matched)} metrics <= {s.max_bytes} bytes)",
            runs_head=1, runs_base=1 if prev_total is not None else 0, note=note,
        ))
    return out


def _base_build(build: Build) -> Build | None:
    from alerts.premerge import base_build_of

    return base_build_of(build)
