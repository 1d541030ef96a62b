"""Perfherder-style windowed t-test, written from Perfherder's published description.

Mozilla Treeherder's ``perfalert`` (``treeherder/perfalert/perfalert/__init__.py``): for every build ``i``,
compare a back window of at least ``min_back_window`` (12) and at most ``max_back_window`` (24) builds before
``i`` (never reaching back past the last detected regression unless that leaves fewer than 12) with a fore
window of ``fore_window`` (12) builds starting at ``i``, using Welch's t statistic on linearly weighted
averages; alert when ``t > t_threshold`` (7), both windows are full, and the relative change is at least 2%
(Perfherder's alert threshold). One value per build (the build's median), scanned once, offline.

This mirrors the reference implementation's structure (pure Python, per-build window assembly) so that
its cost is representative of the published system; ``detect_changes_fast`` is an equivalent O(n) numpy
formulation, reported beside it in the benchmark for fairness.
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
    """Change points ``{"index", "direction", "rel_change", "t", "detected_at"}`` of one series."""
    out = []
    last_seen_regression = 0
    n = len(values)
    for i in range(1, n):
        back = []
        prev = i - 1
        while (len(back) < max_back_window and prev >= 0
               and (i - prev) <= min(max(last_seen_regression, min_back_window), max_back_window)):
            back.append(values[prev])
            prev -= 1
        fore = values[i:i + fore_window]
        # back is newest-first as in perfalert, so linear weights favour the builds next to i
        t = abs(calc_t(back, list(fore), linear_weights))
        hist = analyze(back)
        fwd = analyze(fore)
        rel = (fwd["avg"] - hist["avg"]) / hist["avg"] if hist["avg"] else 0.0
        if len(back) >= min_back_window and len(fore) >= fore_window and t > t_threshold \
                and abs(rel) >= min_rel_change:
            up = fwd["avg"] > hist["avg"]
            out.append({"index": i, "direction": "regression" if up == lower_is_better else "improvement",
                        "rel_change": rel, "t": t, "detected_at": min(n - 1, i + fore_window - 1)})
            last_seen_regression = 0
        else:
            last_seen_regression += 1
    return out


def detect_changes_fast(values: Sequence[float], back: int = 12, fore: int = 12, t_threshold: float = 7.0,
                        min_rel_change: float = 0.02) -> np.ndarray:
    """Vectorised variant (fixed 12/12 windows, unweighted Welch t): indices where the test fires."""
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
    return i[(t > t_threshold) & (rel >= min_rel_change)]
