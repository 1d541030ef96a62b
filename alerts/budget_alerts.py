"""Size budgets on a branch: read the sizes of builds, raise a BudgetAlert where a budget is crossed.

A budget is crossed at a build when it is over there and was not over at the previous build of the
branch (or there was none). The alert joins the group of (build, budget team), the group machinery
does the rest (status, notification, triage). Raising is idempotent: one alert per (build, team, glob).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from alerts.budgets import BudgetStatus, applies, evaluate_budgets
from alerts.models import AlertGroup, BudgetAlert, SizeBudget
from metrics.models import Build, Measurement

BYTE_UNITS = ("bytes", "byte", "b", "B")


def budgets_for(app: str, platform: str) -> list[SizeBudget]:
    return [b for b in SizeBudget.objects.order_by("position") if applies(b, app, platform)]


def sizes_by_build(build_ids: Iterable[int]) -> dict[int, dict[str, float]]:
    """Bytes per `size.*` metric of each build, in one query (a metric measured on several devices:
    the one without a device, else the first by device name)."""
    out: dict[int, dict[str, float]] = defaultdict(dict)
    rows = (Measurement.objects.filter(build_id__in=list(build_ids), series__metric__name__startswith="size.",
                                       series__metric__unit__in=BYTE_UNITS)
            .order_by("build_id", "series__device", "series__metric__name")
            .values_list("build_id", "series__metric__name", "value"))
    for build_id, name, value in rows:
        out[build_id].setdefault(name, value)
    return dict(out)


def build_budgets(build: Build, sizes: dict[str, float] | None = None) -> list[BudgetStatus]:
    """Every budget that applies to a build, evaluated on its sizes."""
    if sizes is None:
        sizes = sizes_by_build([build.pk]).get(build.pk, {})
    return evaluate_budgets(sizes, budgets_for(build.app.name, build.platform))


def raise_for_builds(builds: list[Build]) -> set[int]:
    """Raise the budget alerts of branch builds (one app, platform and branch); returns touched groups."""
    if not builds:
        return set()
    builds = sorted(builds, key=lambda b: (b.timestamp, b.pk))
    first = builds[0]
    rules = budgets_for(first.app.name, first.platform)
    if not rules:
        return set()
    before = (Build.objects.filter(app_id=first.app_id, platform=first.platform, branch=first.branch, role="branch",
                                   timestamp__lt=first.timestamp).order_by("-timestamp", "-pk").first())
    chain = ([before] if before else []) + builds
    sizes = sizes_by_build(b.pk for b in chain)
    touched: set[int] = set()
    previous: dict[str, BudgetStatus] = {}
    prev_build = None
    for b in chain:
        now = {s.metric: s for s in evaluate_budgets(sizes.get(b.pk, {}), rules)}
        for glob, status in now.items():
            if status.state == "empty" and glob in previous:  # a build without size uploads changes nothing
                now[glob] = previous[glob]
        if b is not before:
            for glob, status in now.items():
                was = previous.get(glob)
                if status.over and not (was is not None and was.over):
                    touched.add(_raise(b, prev_build, status, was))
        previous, prev_build = now, b
    return touched


def _raise(build: Build, prev: Build | None, status: BudgetStatus, was: BudgetStatus | None) -> int:
    group = AlertGroup.objects.get_or_create(build=build, team_id=status.team_id)[0]
    BudgetAlert.objects.update_or_create(
        build=build, team_id=status.team_id, metric=status.metric,
        defaults={"budget_id": status.budget_id, "max_bytes": status.max_bytes, "previous_build": prev,
                  "group": group, "total": status.total,
                  "previous_total": was.total if was is not None and was.matched else None},
    )
    return group.pk
