"""Pre-merge checks of pull-request builds: find the merge-base, compare, store the verdicts (docs/API.md section 6).

Flow: a committed "pr" build gets a `Check` row (`pending`, the outbox) and a task; the task computes the
check when the base build (the base branch's build whose commit is the PR's `base_commit`) is there, else
leaves it pending. A branch build arriving later wakes the checks waiting for it; the periodic sweep
re-queues pending checks whose task was lost and settles those that waited longer than
`PERF_CHECK_BASE_WAIT_SECONDS` as `no_baseline`, and a reader of such an overdue check settles it first
(`current_check`: tasks in-process have no sweep). A pull-request build's `analysis` is "done" once its check
is decided. The statistics are `alerts.detection.checks` (pure).

Extension point: `register_extra_rows(fn)` adds a function `fn(build, rows) -> [MetricVerdict]` whose rows
are appended to every check (a crossed size budget is a `regression` row naming the budget; see issue 13).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import timedelta
from typing import NamedTuple

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from alerts import handoff
from alerts.detection import Point
from alerts.detection import checks as stats
from alerts.models import Check, MetricOverride
from alerts.ownership import metric_overrides
from metrics.history import recent_points
from metrics.models import Build, Measurement, Scope, Series, unpack_samples

log = logging.getLogger(__name__)

ExtraRows = Callable[[Build, list[stats.MetricVerdict]], list[stats.MetricVerdict]]
_extra_rows: list[ExtraRows] = []


def register_extra_rows(fn: ExtraRows) -> None:
    """Add rows to every check (e.g. size budgets); a regression row fails the check like a metric's."""
    if fn not in _extra_rows:
        _extra_rows.append(fn)


def false_fail_rate() -> float:
    return float(settings.PERF_CHECK_FALSE_FAIL_RATE)


# --- outbox ------------------------------------------------------------------------------------------------

def request_check(build_pk: int) -> None:
    """Hook for committed "pr" builds: mark the check pending (durably) and hand it to the queue."""
    build = Build.objects.filter(pk=build_pk, role=Scope.PR).select_related("app").first()
    if build is None:
        return
    now = timezone.now()
    Check.objects.update_or_create(
        build=build,
        defaults={"status": Check.Status.PENDING, "requested": now, "app": build.app, "platform": build.platform,
                  "base_branch": build.base_branch or build.app.default_branch, "base_commit": build.base_commit,
                  "error": ""},
    )
    queue_check(build_pk)


def queue_check(build_pk: int) -> None:
    handoff.publish(handoff.CHECK, build_pk)
    Check.objects.filter(build_id=build_pk, status=Check.Status.PENDING).update(queued=timezone.now())


def wake_waiting(branch_build_pk: int) -> int:
    """A branch build arrived: queue the pending checks that wait for it as their base (one indexed query)."""
    b = Build.objects.filter(pk=branch_build_pk, role=Scope.BRANCH).values_list("app_id", "platform", "branch",
                                                                              "commit").first()
    if b is None or not b[3]:
        return 0
    waiting = list(Check.objects.filter(app_id=b[0], platform=b[1], base_branch=b[2], base_commit=b[3],
                                        status=Check.Status.PENDING).values_list("build_id", flat=True))
    for pk in waiting:
        queue_check(pk)
    return len(waiting)


def sweep(*, min_age_seconds: int | None = None, limit: int = 200) -> int:
    """Re-queue pending checks whose hand-off is older than `min_age_seconds` (lost tasks, expired waits)."""
    age = settings.PERF_SWEEP_MIN_AGE_SECONDS if min_age_seconds is None else min_age_seconds
    cutoff = timezone.now() - timedelta(seconds=age)
    pks = list(Check.objects.filter(Q(queued__lte=cutoff) | Q(queued__isnull=True), status=Check.Status.PENDING)
               .order_by("requested").values_list("build_id", flat=True)[:limit])
    queued = 0
    for pk in pks:
        try:
            queue_check(pk)
            queued += 1
        except Exception:
            log.exception("broker unavailable; pending checks are left for the next sweep")
            break
    return queued


# --- computing -----------------------------------------------------------------------------------------------

def base_build_of(build: Build) -> Build | None:
    branch = build.base_branch or build.app.default_branch
    return (Build.objects.filter(app_id=build.app_id, platform=build.platform, role=Scope.BRANCH, branch=branch,
                                 commit=build.base_commit).order_by("-timestamp", "-pk").first())


class _Stored(NamedTuple):
    value: float
    samples: list[float] | None
    count: int | None
    total: int | None


def _point(kind: str, value: float, samples: list[float] | None, count: int | None, total: int | None) -> Point:
    if kind == "rate" and total is not None:
        return Point(value=value, count=count, total=total)
    if samples:
        return Point(value=value, samples=np.asarray(samples, dtype=float))
    return Point(value=value)


def inputs_for(build: Build, base: Build) -> list[stats.MetricInput]:
    """One `MetricInput` per measurement of the PR build, with the base branch's history up to the base build."""
    rows = list(Measurement.objects.filter(build=build).select_related("series__metric")
                .order_by("series__metric__name", "series__device"))
    app_name = build.app.name
    sigs = {m.pk: Series.signature_of(app_name, build.platform, base.branch, m.series.device, m.series.metric.name)
            for m in rows}
    base_series = dict(Series.objects.filter(signature__in=set(sigs.values())).values_list("signature", "id"))
    history = recent_points(list(base_series.values()), limit=stats.HISTORY_BUILDS, until=base.timestamp,
                            with_samples=True)
    overrides = list(MetricOverride.objects.order_by("position"))
    out = []
    for m in rows:
        metric = m.series.metric
        sid = base_series.get(sigs[m.pk])
        pts = [p for p in history.get(sid, []) if p.build_time < base.timestamp or p.build_id == base.pk
               or p.build_time == base.timestamp and p.build_id < base.pk] if sid else []
        ov = metric_overrides(app_name, build.platform, metric.name, overrides)
        out.append(stats.MetricInput(
            metric=metric.name, kind=metric.kind, device=m.series.device, unit=metric.unit,
            lower_is_better=metric.lower_is_better,
            head=_point(metric.kind, m.value, unpack_samples(m.samples), m.count, m.total),
            # History points are read by attribute (value, samples, count, total): no Point copies, but the runs
            # unpacked once (a stored point unpacks them on every read, and the check reads them several times).
            history=[_Stored(p.value, p.samples, p.count, p.total) for p in pts],
            min_change=ov.get("min_change"), abs_floor=ov.get("abs_floor"), abs_threshold=ov.get("abs_threshold"),
        ))
    return out


def compute_check(build_pk: int) -> str:
    """Compute (or re-compute) the check of one PR build; returns its status. Idempotent."""
    started = time.perf_counter()
    with transaction.atomic():
        check = Check.objects.select_for_update().filter(build_id=build_pk).first()
        build = Build.objects.select_related("app").filter(pk=build_pk).first()
        if build is None or build.role != Scope.PR:
            return "missing"
        if check is None:
            check = Check(build=build, app=build.app, platform=build.platform, requested=timezone.now(),
                          base_branch=build.base_branch or build.app.default_branch, base_commit=build.base_commit)
        base = base_build_of(build)
        check.attempts += 1
        if base is None:
            waited = (timezone.now() - build.created).total_seconds()
            if waited < settings.PERF_CHECK_BASE_WAIT_SECONDS:
                check.status = Check.Status.PENDING
                check.markdown = render_markdown(check, build, None)
                check.save()
                return check.status
            rows = [stats.MetricVerdict(i.metric, i.device, i.kind, i.unit, "no_baseline", None,
                                        float(i.head.value), None, None, None,
                                        f"no baseline: no {check.base_branch} build of commit {build.base_commit}",
                                        len(i.head.samples) if i.head.samples is not None else 1, 0)
                    for i in _head_only_inputs(build)]
        else:
            rows = stats.run_check(inputs_for(build, base), false_fail_rate())
        for fn in _extra_rows:
            try:
                rows.extend(fn(build, rows))
            except Exception:
                log.exception("extra check rows failed for build %s", build_pk)
        check.base_build = base
        check.status = stats.check_status(rows)
        check.summary = stats.summary(rows)
        check.metrics = [_clean(r.to_dict()) for r in rows]
        check.computed = timezone.now()
        check.error = ""
        check.compute_ms = int((time.perf_counter() - started) * 1000)
        check.markdown = render_markdown(check, build, base)
        check.save()
        # A pull-request build's analysis is its check: the builds API says "done" once it is decided.
        Build.objects.filter(pk=build.pk).update(analysis=Build.Analysis.DONE, analysis_finished=check.computed,
                                                 analysis_error="")
        check_pk = check.pk
        transaction.on_commit(lambda: _after_compute(check_pk))
    return check.status


def overdue(check: Check | None, build: Build) -> bool:
    """A pending check whose build has waited `PERF_CHECK_BASE_WAIT_SECONDS` for its base: it is due to settle
    (as `no_baseline`, or against a base that came late) whether or not a sweep has run since."""
    if check is None or check.status != Check.Status.PENDING:
        return False
    return (timezone.now() - build.created).total_seconds() >= settings.PERF_CHECK_BASE_WAIT_SECONDS


def current_check(build: Build) -> Check | None:
    """The check of a pull-request build as a reader should see it now: an overdue pending check is settled
    first, so the contract's "at most PERF_CHECK_BASE_WAIT_SECONDS, then no_baseline" holds to the second, with
    or without a periodic sweep (tasks in-process have none)."""
    check = Check.objects.select_related("base_build").filter(build=build).first()
    if overdue(check, build):
        compute_check(build.pk)
        check = Check.objects.select_related("base_build").filter(build=build).first()
    return check


def _head_only_inputs(build: Build) -> list[stats.MetricInput]:
    out = []
    for m in Measurement.objects.filter(build=build).select_related("series__metric").order_by("series__metric__name"):
        metric = m.series.metric
        out.append(stats.MetricInput(metric.name, metric.kind,
                                     _point(metric.kind, m.value, unpack_samples(m.samples), m.count, m.total), [],
                                     device=m.series.device, unit=metric.unit))
    return out


def _clean(d: dict) -> dict:
    """JSON-safe floats (no NaN/inf) rounded to what a reader needs."""
    def fix(v):
        if isinstance(v, float):
            return float(f"{v:.6g}") if np.isfinite(v) else None
        if isinstance(v, list):
            return [fix(x) for x in v]
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        return v
    return fix(d)


def _after_compute(check_pk: int) -> None:
    try:
        from alerts.codehost import service as codehost

        codehost.plan_post(check_pk)
    except Exception:
        log.exception("could not plan the code-host post of check %s; the sweep will", check_pk)


# --- presentation --------------------------------------------------------------------------------------------

def check_url(build: Build) -> str:
    return settings.PERF_BASE_URL + reverse("check-page", args=[build.app.name, build.platform, build.ext_id])


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:+.1%}"


def _num(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:,.4g}" if abs(x) < 1e6 else f"{x:,.0f}"


HEADLINE = {
    "pending": "waiting for the base build",
    "pass": "no regression",
    "fail": "regression",
    "inconclusive": "no regression found, some metrics undecided",
    "no_baseline": "no baseline to compare with",
}
MARKDOWN_ROWS = 40


def render_markdown(check: Check, build: Build, base: Build | None) -> str:
    """The summary CI shows (`$GITHUB_STEP_SUMMARY`, the PR comment)."""
    s = check.summary or {}
    lines = [f"### perfplatform check: **{check.status}** ({HEADLINE.get(check.status, '')})", ""]
    where = f"`{build.app.name}` {build.platform}, build `{build.ext_id}` on `{build.branch}`"
    if base is not None:
        where += f" vs `{base.branch}` build `{base.ext_id}` (`{base.commit[:12]}`, the merge-base)"
    else:
        where += f" vs `{check.base_branch}` at `{check.base_commit[:12]}` (no such build)"
    lines.append(where)
    lines.append("")
    lines.append(", ".join(f"{s.get(k, 0)} {k.replace('_', ' ')}" for k in stats.VERDICTS))
    order = {"regression": 0, "inconclusive": 1, "improvement": 2}
    shown = sorted((r for r in check.metrics if r["verdict"] in order),
                   key=lambda r: (order[r["verdict"]], r.get("p_value") or 0))
    if shown:
        lines += ["", "| verdict | metric | device | before | after | change (95% CI) | p | runs head/base |",
                  "|---|---|---|---:|---:|---:|---:|---:|"]
        for r in shown[:MARKDOWN_ROWS]:
            ci = r.get("ci") or [None, None]
            p = r.get("p_value")
            note = f" {r['note']}" if r.get("note") else ""
            lines.append(
                f"| {r['verdict']} | `{r['metric']}` | {r.get('device') or '–'} | {_num(r.get('before'))} | "
                f"{_num(r.get('after'))} | {_pct(r.get('rel_change'))} ({_pct(ci[0])} … {_pct(ci[1])}) | "
                f"{'–' if p is None else f'{p:.2g}'} | {r['runs']['head']}/{r['runs']['base']}{note} |")
        if len(shown) > MARKDOWN_ROWS:
            lines.append(f"| … | {len(shown) - MARKDOWN_ROWS} more | | | | | | |")
    lines += ["", f"False failures held at {false_fail_rate():.0%} per check over all metrics (Holm). "
              f"[Details]({check_url(build)})"]
    return "\n".join(lines) + "\n"


def check_payload(check: Check | None, build: Build) -> dict:
    """The API body of docs/API.md section 6."""
    base = check.base_build if check is not None else None
    status = check.status if check is not None else Check.Status.PENDING
    return {
        "status": status,
        "build": build.ext_id,
        "branch": build.branch,
        "commit": build.commit,
        "base": {"branch": check.base_branch if check else (build.base_branch or build.app.default_branch),
                 "build": base.ext_id if base is not None else None,
                 "commit": build.base_commit},
        "summary": {k: (check.summary or {}).get(k, 0) if check else 0 for k in stats.VERDICTS},
        "metrics": list(check.metrics) if check is not None else [],
        "markdown": check.markdown if check is not None and check.markdown else "",
        "url": check_url(build),
        "computed": check.computed if check is not None else None,
    }
