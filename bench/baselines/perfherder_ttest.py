"""Perfherder's windowed t-test, written from its published description.

Mozilla Treeherder's ``perfalert`` (``treeherder/perfalert/perfalert/__init__.py``): for every build ``i``,
compare a back window of at least ``min_back_window`` (12) and at most ``max_back_window`` (24) builds before
``i`` (reaching past 12 only while no build since the last one whose score crossed the threshold has crossed
it) with a fore window of ``fore_window`` (12) builds starting at ``i``, using Welch's t statistic on linearly
weighted averages. A change is a build whose windows are both full, whose score is above ``t_threshold`` (7)
and no lower than either neighbour's (one alert per shift, at its peak), and whose relative change is at
least 2% (Perfherder's alert threshold, applied by ``treeherder/perf/alerts.py``). One value per build (the
build's median), scanned once, offline. With ``min_rel_change=0`` it reproduces the change points
Treeherder's own ``tests/perfalert/test_analyze.py`` requires on its sample series
(``tests/test_perfherder_baseline.py``).

Offline over the whole series: Perfherder in production re-runs the analysis only on the data after a series'
latest alert (``treeherder/perf/alerts.py``), so it raises no second alert within about 13 builds of one; that is
not simulated here.

Pure Python with per-build window assembly, as the reference implementation, but leaner: one value per build in
plain lists, where Perfherder's code builds a ``RevisionDatum`` per build and sums each build's list of values
in its own generator. Run beside Perfherder's own code read from a treeherder clone (``perfherder_reference.py``,
``bench/eval_real.py --perfherder-repo``; treeherder dc3080dd, 2026-08), it finds the same change points on every
series of the real corpus (133 of 133) at 0.29-0.33x its CPU: a speed measured against this baseline is about
three times as strict as one against Perfherder itself. ``detect_changes_fast`` is an O(n) numpy approximation
(fixed, unweighted windows), reported beside it in the benchmark for fairness.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def default_weights(i: int, n: int) -> float:
    return 1.0


def linear_weights(i: int, n: int) -> float:
    if i >= n:
        return 0.0
    return float(n - i) / float(n)


def analyze(values: Sequence[float], weight_fn=default_weights) -> dict:
    """Weighted average and sample variance of a window (one value per build)."""
    n = len(values)
    weights = [weight_fn(i, n) for i in range(n)]
    weighted_sum = 0.0
    sum_of_weights = 0.0
    for i in range(n):
        weighted_sum += values[i] * weights[i]
        sum_of_weights += weights[i]
    avg = weighted_sum / sum_of_weights if n > 0 else 0.0
    variance = sum((v - avg) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return {"avg": avg, "n": n, "variance": variance}


def calc_t(w1: Sequence[float], w2: Sequence[float], weight_fn=linear_weights) -> float:
    if not w1 or not w2:
        return 0.0
    s1 = analyze(w1, weight_fn)
    s2 = analyze(w2, weight_fn)
    delta = s2["avg"] - s1["avg"]
    if delta == 0:
        return 0.0
    if s1["variance"] == 0 and s2["variance"] == 0:
        return math.inf
    return delta / math.sqrt(s1["variance"] / s1["n"] + s2["variance"] / s2["n"])


def detect_changes(values: Sequence[float], min_back_window: int = 12, max_back_window: int = 24,
                   fore_window: int = 12, t_threshold: float = 7.0, min_rel_change: float = 0.02,
                   lower_is_better: bool = True) -> list[dict]:
    """Change points ``{"index", "direction", "rel_change", "t", "detected_at"}`` of one series.

    Two passes, as Perfherder's: first a t score for every build ``i`` (the back window grows past
    ``min_back_window`` only while no build since the last one above the threshold has crossed it), then a
    change at each build whose windows are both full and whose score is above the threshold and no lower
    than either neighbour's: one alert per shift, at its peak. ``min_rel_change`` is the alert threshold
    Perfherder applies afterwards to ``(fore mean - back mean) / back mean`` (0 keeps every peak, as
    ``tests/perfalert/test_analyze.py`` does).
    """
    n = len(values)
    t = [0.0] * n
    full = [False] * n
    hist = [0.0] * n
    fwd = [0.0] * n
    builds_since_crossing = 0
    for i in range(1, n):
        reach = min(max(builds_since_crossing, min_back_window), max_back_window)
        # newest first, so that linear weights favour the builds next to i
        back = [values[j] for j in range(i - 1, max(i - 1 - reach, -1), -1)]
        fore = list(values[i:i + fore_window])
        t[i] = abs(calc_t(back, fore, linear_weights))
        full[i] = len(back) >= min_back_window and len(fore) >= fore_window
        hist[i], fwd[i] = analyze(back)["avg"], analyze(fore)["avg"]
        builds_since_crossing = 0 if t[i] > t_threshold else builds_since_crossing + 1
    out = []
    for i in range(1, n):
        peak = t[i] >= t[i - 1] and (i + 1 == n or t[i] >= t[i + 1])
        if full[i] and t[i] > t_threshold and peak:
            change = alert(i, n, hist[i], fwd[i], t[i], min_rel_change=min_rel_change,
                           lower_is_better=lower_is_better, fore_window=fore_window)
            if change is not None:
                out.append(change)
    return out


def alert(i: int, n: int, hist: float, fwd: float, t: float, *, min_rel_change: float, lower_is_better: bool,
          fore_window: int) -> dict | None:
    """The change point ``{"index", "direction", "rel_change", "t", "detected_at"}`` of a peak at build ``i`` of ``n``
    whose back and fore windows' plain means are ``hist`` and ``fwd``, or None under Perfherder's alert threshold
    (``min_rel_change`` of ``(fwd - hist) / hist``). Shared with ``perfherder_reference.py``, whose change points
    are compared with these whole."""
    rel = (fwd - hist) / hist if hist else 0.0
    if abs(rel) < min_rel_change:
        return None
    return {"index": i, "direction": "regression" if (fwd > hist) == lower_is_better else "improvement",
            "rel_change": rel, "t": t, "detected_at": min(n - 1, i + fore_window - 1)}


def record_values(rec: dict) -> tuple[list[float], bool]:
    """``(values, lower_is_better)`` of a series record of the eval kit's format (``points``' values, its
    ``direction``: lower is better unless it says higher)."""
    return [float(p["value"]) for p in rec["points"]], rec.get("direction", "lower_is_better") != "higher_is_better"


def detect_record(rec: dict, t_threshold: float = 7.0) -> list[dict]:
    """``detect_changes`` of a series record of the eval kit's format (``record_values``)."""
    values, lower = record_values(rec)
    return detect_changes(values, t_threshold=t_threshold, lower_is_better=lower)


def detect_changes_fast(values: Sequence[float], back: int = 12, fore: int = 12, t_threshold: float = 7.0,
                        min_rel_change: float = 0.02) -> np.ndarray:
    """Vectorised variant (fixed 12/12 windows, unweighted Welch t): indices where the test peaks above the
    threshold."""
    x = np.asarray(values, dtype=float)
    n = x.size
    if n < back + fore:
        return np.empty(0, dtype=int)
    c1 = np.concatenate(([0.0], np.cumsum(x)))
    c2 = np.concatenate(([0.0], np.cumsum(x * x)))
    i = np.arange(back, n - fore + 1)
    sb, sf = c1[i] - c1[i - back], c1[i + fore] - c1[i]
    qb, qf = c2[i] - c2[i - back], c2[i + fore] - c2[i]
    mb, mf = sb / back, sf / fore
    vb = np.maximum((qb - back * mb * mb) / (back - 1), 0.0)
    vf = np.maximum((qf - fore * mf * mf) / (fore - 1), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(mf - mb) / np.sqrt(vb / back + vf / fore)
        rel = np.abs(mf - mb) / np.abs(mb)
    t = np.nan_to_num(t, nan=0.0)
    padded = np.concatenate(([-np.inf], t, [-np.inf]))
    peak = (t >= padded[:-2]) & (t >= padded[2:])
    return i[(t > t_threshold) & peak & (rel >= min_rel_change)]
