"""Compare two builds side by side for all metrics, with a significance test fitting each kind."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from scipy import stats

from metrics.models import App, Build, Measurement, unpack_samples

ALPHA = 0.05
WELCH_KINDS = {"memory", "score"}  # near-normal runs: Welch's t-test; other sampled kinds: Mann-Whitney U
# Single values: counts get a Poisson test, everything else (sizes) is exact: any difference is real.


@dataclass(frozen=True)
class Significance:
    p: float | None
    test: str
    significant: bool


def two_proportion_p(c1: int, n1: int, c2: int, n2: int) -> float:
    """Two-sided pooled two-proportion z-test."""
    pooled = (c1 + c2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return 1.0
    z = (c2 / n2 - c1 / n1) / se
    return float(2 * stats.norm.sf(abs(z)))


def significance(kind: str, a: Measurement, b: Measurement) -> Significance:
    sa, sb = unpack_samples(a.samples), unpack_samples(b.samples)
    if sa and sb and len(sa) >= 2 and len(sb) >= 2:
        if kind in WELCH_KINDS:
            if np.std(sa) == 0 and np.std(sb) == 0:
                return Significance(None, "Welch t-test", sa[0] != sb[0])
            p = float(stats.ttest_ind(sa, sb, equal_var=False).pvalue)
            test = "Welch t-test"
        else:
            p = float(stats.mannwhitneyu(sa, sb, alternative="two-sided").pvalue)
            test = "Mann-Whitney U"
        if math.isnan(p):
            p = 1.0
        return Significance(p, test, p < ALPHA)
    if a.total and b.total and a.count is not None and b.count is not None:
        p = two_proportion_p(a.count, a.total, b.count, b.total)
        return Significance(p, "two-proportion z-test", p < ALPHA)
    if kind == "count" and a.value >= 0 and b.value >= 0 and a.value.is_integer() and b.value.is_integer() \
            and a.value + b.value > 0:
        # Two Poisson counts: conditional on their sum, B's share is binomial(0.5) under "no change".
        p = float(stats.binomtest(int(b.value), int(a.value + b.value), 0.5).pvalue)
        return Significance(p, "Poisson (conditional binomial) test", p < ALPHA)
    return Significance(None, "exact", a.value != b.value)


def _find(ext_id: str, app: str, platform: str) -> tuple[Build | None, str]:
    if not ext_id:
        return None, ""
    qs = Build.objects.select_related("app").filter(ext_id=ext_id)
    if app:
        qs = qs.filter(app__name=app)
    if platform:
        qs = qs.filter(platform=platform)
    found = list(qs[:2])
    if not found:
        return None, f"no build {ext_id!r}" + (f" of {app}" if app else "") + (f" on {platform}" if platform else "")
    if len(found) > 1:
        return None, f"build {ext_id!r} exists for several apps or platforms: choose the app and platform"
    return found[0], ""


def fmt(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:,.0f}" if abs(value) >= 10000 else f"{value:.4g}"


@login_required
def compare_page(request: HttpRequest) -> HttpResponse:
    g = request.GET
    a_id, b_id, app, platform = (g.get(k, "").strip() for k in ("a", "b", "app", "platform"))
    a, err_a = _find(a_id, app, platform)
    b, err_b = _find(b_id, app or (a.app.name if a else ""), platform or (a.platform if a else ""))
    errors = [e for e in (err_a, err_b) if e]
    rows = []
    if a and b:
        ma = {m.series_id: m for m in Measurement.objects.filter(build=a).select_related("series__metric")}
        mb = {m.series_id: m for m in Measurement.objects.filter(build=b).select_related("series__metric")}
        for sid in sorted(set(ma) | set(mb), key=lambda s: ((ma.get(s) or mb[s]).series.metric.name, s)):
            x, y = ma.get(sid), mb.get(sid)
            series = (x or y).series
            metric = series.metric
            rel = (y.value - x.value) / abs(x.value) if x and y and x.value else None
            sig = significance(metric.kind, x, y) if x and y else Significance(None, "missing", False)
            direction = ""
            if sig.significant and rel:
                direction = "worse" if (rel > 0) == metric.lower_is_better else "better"
            rows.append({
                "series": series, "metric": metric, "av": x.value if x else "", "bv": y.value if y else "",
                "a": fmt(x.value if x else None), "b": fmt(y.value if y else None),
                "rel": rel, "change": "" if rel is None else f"{rel * 100:+.2f}%", "sig": sig,
                "p": "" if sig.p is None else f"{sig.p:.3g}", "direction": direction,
                "runs": f"{x.n_samples if x else 0} / {y.n_samples if y else 0}",
            })
    apps = App.objects.order_by("name").values_list("name", flat=True)
    return render(request, "metrics/compare.html", {
        "a": a, "b": b, "a_id": a_id, "b_id": b_id, "app": app, "platform": platform, "errors": errors,
        "rows": rows, "apps": apps, "alpha": ALPHA,
        "n_sig": sum(1 for r in rows if r["sig"].significant),
        "n_worse": sum(1 for r in rows if r["direction"] == "worse"),
    })
