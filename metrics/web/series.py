"""The series page (uPlot graph of the history) and the distribution view (a heatmap of runs)."""

from __future__ import annotations

import math

import numpy as np
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from metrics.history import recent_points
from metrics.models import Series

DEFAULT_POINTS, MAX_POINTS = 2000, 10_000


def _int_param(request: HttpRequest, name: str, default: int, lo: int, hi: int) -> int:
    try:
        return max(lo, min(hi, int(request.GET.get(name, default))))
    except ValueError:
        return default


def _round(values, digits: int = 6) -> list[float | None]:
    out = []
    for v in values:
        if v is None or not math.isfinite(v):
            out.append(None)
        elif v == 0:
            out.append(0.0)
        else:
            out.append(float(f"{v:.{digits}g}"))
    return out


def spread(points) -> tuple[list[float | None], list[float | None], str]:
    """Per build: p10–p90 of the samples, or the 95% Wilson interval of count/total; and its label."""
    n = len(points)
    lo: list[float | None] = [None] * n
    hi: list[float | None] = [None] * n
    label = ""
    by_len: dict[int, list[int]] = {}
    for i, p in enumerate(points):
        if p.samples and len(p.samples) >= 2:
            by_len.setdefault(len(p.samples), []).append(i)
        elif p.total:
            z, phat, t = 1.96, p.count / p.total, p.total
            centre = (phat + z * z / (2 * t)) / (1 + z * z / t)
            half = z * math.sqrt(phat * (1 - phat) / t + z * z / (4 * t * t)) / (1 + z * z / t)
            lo[i], hi[i] = max(0.0, centre - half), centre + half
            label = "95% interval of the rate"
    for idx in by_len.values():  # one vectorised percentile per run count
        arr = np.array([points[i].samples for i in idx], dtype=float)
        p10, p90 = np.percentile(arr, [10, 90], axis=1)
        for j, i in enumerate(idx):
            lo[i], hi[i] = float(p10[j]), float(p90[j])
        label = "p10–p90 of the runs"
    return lo, hi, label


@login_required
def series_page(request: HttpRequest, series_id: int) -> HttpResponse:
    s = get_object_or_404(Series.objects.select_related("app", "metric"), pk=series_id)
    n = _int_param(request, "n", DEFAULT_POINTS, 10, MAX_POINTS)
    points = recent_points([s.pk], limit=n, with_samples=True).get(s.pk, [])
    lo, hi, band = spread(points)
    data = {
        "x": [int(p.build_time.timestamp()) for p in points],
        "v": _round([p.value for p in points]),
        "lo": _round(lo), "hi": _round(hi),
        "b": [p.build_ext_id for p in points],
        "c": [p.commit for p in points],
    }
    return render(request, "metrics/series.html", {
        "series": s, "data": data, "n_points": len(points), "band": band, "n": n,
        "latest": points[-20:][::-1], "alerts_api": f"/api/v1/alerts?series={s.pk}&limit=500",
        "build_base": f"/builds/{s.app.name}/{s.platform}/",
    })


@login_required
def distribution_page(request: HttpRequest, series_id: int) -> HttpResponse:
    s = get_object_or_404(Series.objects.select_related("app", "metric"), pk=series_id)
    n = _int_param(request, "n", 300, 10, 2000)
    points = recent_points([s.pk], limit=n, with_samples=True).get(s.pk, [])
    runs = [p.samples if p.samples else [p.value] for p in points]
    typical = int(np.median([len(r) for r in runs])) if runs else 1
    bins = _int_param(request, "bins", max(12, min(48, round(6 * math.sqrt(typical)))), 4, 200)
    has_runs = any(p.samples and len(p.samples) > 1 for p in points)
    flat = np.concatenate([np.asarray(r, dtype=float) for r in runs]) if runs else np.array([])
    counts: list[int] = []
    lo_edge = hi_edge = 0.0
    flaky = []
    if flat.size:
        lo_edge, hi_edge = (float(x) for x in np.percentile(flat, [0.5, 99.5]))
        if hi_edge <= lo_edge:
            hi_edge = lo_edge + (abs(lo_edge) * 1e-6 or 1e-9)
        for r in runs:
            h, _ = np.histogram(np.clip(np.asarray(r, dtype=float), lo_edge, hi_edge), bins=bins, range=(lo_edge, hi_edge))
            counts.extend(int(c) for c in h)
        if has_runs:
            spreads = []
            for p, r in zip(points, runs, strict=True):
                if len(r) >= 3:
                    q10, q50, q90 = np.percentile(r, [10, 50, 90])
                    spreads.append(((q90 - q10) / abs(q50) if q50 else 0.0, p))
            spreads.sort(key=lambda t: -t[0])
            flaky = [{"build": p.build_ext_id, "spread": f"{w * 100:.1f}%", "commit": p.commit[:10]} for w, p in spreads[:5]]
    data = {"bins": bins, "lo": lo_edge, "hi": hi_edge, "counts": counts,
            "b": [p.build_ext_id for p in points], "n": [len(r) for r in runs],
            "x": [int(p.build_time.timestamp()) for p in points], "v": _round([p.value for p in points])}
    return render(request, "metrics/distribution.html", {
        "series": s, "data": data, "n_points": len(points), "has_runs": has_runs, "flaky": flaky, "n": n,
        "build_base": f"/builds/{s.app.name}/{s.platform}/",
    })
