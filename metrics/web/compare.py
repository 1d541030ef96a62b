"""Compare two builds (or two ranges of builds, `a=FROM..TO`) side by side for all metrics, with a
significance test fitting each kind."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

import numpy as np
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from scipy import stats

from metrics.models import App, Build, Measurement, unpack_samples

ALPHA = 0.05
#: Builds pooled per side of a range at most (the latest of the range): a page, not a report; about 4 s for
#: 150 metrics on a 2-core host at this size (docs/BENCHMARKS.md), and any signed-in user may ask for one.
MAX_RANGE_BUILDS = 100
WELCH_KINDS = {"memory", "score"}  # near-normal runs: Welch's t-test; other sampled kinds: Mann-Whitney U
# Single values: counts get a Poisson test, everything else (sizes) is exact: any difference is real.
# Over ranges of builds, single values are compared with Mann-Whitney U on the per-build values.


@dataclass(frozen=True)
class Significance:
    p: float | None
    test: str
    significant: bool


@dataclass
class Side:
    """One metric's data on one side: every build's value, the pooled runs, summed count/total."""

    values: list[float] = field(default_factory=list)
    samples: list[float] = field(default_factory=list)
    count: int = 0
    total: int = 0
    n_runs: int = 0

    def add(self, m: Measurement) -> None:
        self.values.append(m.value)
        smp = unpack_samples(m.samples)
        if smp:
            self.samples += smp
            self.n_runs += len(smp)
        if m.total:
            self.count += m.count or 0
            self.total += m.total

    @property
    def value(self) -> float:
        if self.total:
            return self.count / self.total
        return float(statistics.median(self.values))


def two_proportion_p(c1: int, n1: int, c2: int, n2: int) -> float:
    """Two-sided pooled two-proportion z-test."""
    pooled = (c1 + c2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return 1.0
    z = (c2 / n2 - c1 / n1) / se
    return float(2 * stats.norm.sf(abs(z)))


def _two_samples(kind: str, xs: list[float], ys: list[float], suffix: str = "") -> Significance:
    if kind in WELCH_KINDS:
        if np.std(xs) == 0 and np.std(ys) == 0:
            return Significance(None, "Welch t-test" + suffix, xs[0] != ys[0])
        p, test = float(stats.ttest_ind(xs, ys, equal_var=False).pvalue), "Welch t-test"
    else:
        p, test = float(stats.mannwhitneyu(xs, ys, alternative="two-sided").pvalue), "Mann-Whitney U"
    if math.isnan(p):
        p = 1.0
    return Significance(p, test + suffix, p < ALPHA)


def significance(kind: str, a: Side | Measurement, b: Side | Measurement) -> Significance:
    if isinstance(a, Measurement):
        a = _side([a])
    if isinstance(b, Measurement):
        b = _side([b])
    if len(a.samples) >= 2 and len(b.samples) >= 2:
        return _two_samples(kind, a.samples, b.samples)
    if a.total and b.total:
        p = two_proportion_p(a.count, a.total, b.count, b.total)
        return Significance(p, "two-proportion z-test", p < ALPHA)
    if len(a.values) >= 2 and len(b.values) >= 2:
        return _two_samples(kind, a.values, b.values, " (per-build values)")
    x, y = a.value, b.value
    if kind == "count" and x >= 0 and y >= 0 and x.is_integer() and y.is_integer() and x + y > 0:
        # Two Poisson counts: conditional on their sum, B's share is binomial(0.5) under "no change".
        p = float(stats.binomtest(int(y), int(x + y), 0.5).pvalue)
        return Significance(p, "Poisson (conditional binomial) test", p < ALPHA)
    return Significance(None, "exact", x != y)


def _side(measurements) -> Side:
    s = Side()
    for m in measurements:
        s.add(m)
    return s


def _one(ext_id: str, app: str, platform: str) -> tuple[Build | None, str]:
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


def _find(spec: str, app: str, platform: str) -> tuple[list[Build], str]:
    """`spec` is one build id or a range `FROM..TO` (both ends included, same app, platform, branch and role:
    a branch's range holds no requested re-runs); a range reads at most MAX_RANGE_BUILDS + 1 of its latest builds (`capped` cuts and says so)."""
    if not spec:
        return [], ""
    if ".." not in spec:
        b, err = _one(spec, app, platform)
        return ([b] if b else []), err
    lo_id, hi_id = spec.split("..", 1)
    lo, err = _one(lo_id, app, platform)
    if lo is None:
        return [], err
    hi, err = _one(hi_id, lo.app.name, lo.platform)
    if hi is None:
        return [], err
    if hi.timestamp < lo.timestamp:
        lo, hi = hi, lo
    builds = list(Build.objects.select_related("app").filter(
        app=lo.app, platform=lo.platform, branch=lo.branch, role=lo.role, timestamp__gte=lo.timestamp,
        timestamp__lte=hi.timestamp,
    ).order_by("-timestamp", "-pk")[:MAX_RANGE_BUILDS + 1])[::-1]
    return builds, ""


def capped(builds: list[Build], spec: str) -> tuple[list[Build], str]:
    """A range's latest MAX_RANGE_BUILDS builds (`_find` reads one more to know), and a note when cut."""
    if len(builds) <= MAX_RANGE_BUILDS:
        return builds, ""
    builds = builds[-MAX_RANGE_BUILDS:]
    return builds, (f"{spec} holds more than {MAX_RANGE_BUILDS} builds: its latest {MAX_RANGE_BUILDS} are compared, "
                    f"from {builds[0].ext_id}")


def pct(rel: float | None) -> str:
    """A relative change in percent; tiny changes keep two significant digits instead of showing 0.00%."""
    if rel is None:
        return ""
    if rel != 0 and abs(rel) < 1e-4:
        return f"{rel * 100:+.2g}%"
    return f"{rel * 100:+.2f}%"


def fmt(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:,.0f}" if abs(value) >= 10000 else f"{value:.4g}"


def _sides(builds: list[Build]) -> tuple[dict[tuple[str, str], Side], dict[tuple[str, str], Measurement]]:
    """Each side's data per (metric, device): not per series, whose branch and role differ between a pull
    request's build and its base, or between two branches, though the metric is the same."""
    sides: dict[tuple[str, str], Side] = {}
    first: dict[tuple[str, str], Measurement] = {}
    for m in Measurement.objects.filter(build__in=builds).select_related("series__metric"):
        key = (m.series.metric.name, m.series.device)
        sides.setdefault(key, Side()).add(m)
        first.setdefault(key, m)
    return sides, first


@login_required
def compare_page(request: HttpRequest) -> HttpResponse:
    g = request.GET
    a_id, b_id, app, platform = (g.get(k, "").strip() for k in ("a", "b", "app", "platform"))
    a, err_a = _find(a_id, app, platform)
    b, err_b = _find(b_id, app or (a[0].app.name if a else ""), platform or (a[0].platform if a else ""))
    errors = [e for e in (err_a, err_b) if e]
    (a, note_a), (b, note_b) = capped(a, a_id), capped(b, b_id)
    notes = [n for n in (note_a, note_b) if n]
    rows = []
    if a and b:
        sa, ma = _sides(a)
        sb, mb = _sides(b)
        for key in sorted(set(sa) | set(sb)):
            x, y = sa.get(key), sb.get(key)
            series = (ma.get(key) or mb[key]).series
            metric = series.metric
            xv, yv = (x.value if x else None), (y.value if y else None)
            rel = (yv - xv) / abs(xv) if x and y and xv else None
            sig = significance(metric.kind, x, y) if x and y else Significance(None, "missing", False)
            direction = ""
            if sig.significant and rel:
                direction = "worse" if (rel > 0) == metric.lower_is_better else "better"
            rows.append({
                "series": series, "metric": metric, "av": "" if xv is None else xv, "bv": "" if yv is None else yv,
                "a": fmt(xv), "b": fmt(yv), "rel": rel, "change": pct(rel),
                "sig": sig, "p": "" if sig.p is None else f"{sig.p:.3g}", "direction": direction,
                "runs": f"{x.n_runs if x else 0} / {y.n_runs if y else 0}",
            })
    sides = [{"label": label, "one": bs[0] if len(bs) == 1 else None, "first": bs[0], "last": bs[-1], "n": len(bs)}
             for label, bs in (("A", a), ("B", b)) if bs]
    apps = App.objects.order_by("name").values_list("name", flat=True)
    return render(request, "metrics/compare.html", {
        "a": a[0] if len(a) == 1 else None, "b": b[0] if len(b) == 1 else None, "a_builds": a, "b_builds": b, "sides": sides,
        "a_id": a_id, "b_id": b_id, "app": app, "platform": platform, "errors": errors, "notes": notes,
        "rows": rows, "apps": apps, "alpha": ALPHA,
        "n_sig": sum(1 for r in rows if r["sig"].significant),
        "n_worse": sum(1 for r in rows if r["direction"] == "worse"),
    })
