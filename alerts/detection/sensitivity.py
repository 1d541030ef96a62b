"""Sensitivity: the smallest relative shift a series can detect within N builds at its current noise.

For a shift of ``delta`` (analysis scale) observed for ``N`` builds after ``n_b`` builds of history, the test
statistic is ``delta / se(N, n_b)``; the shift is detected with 80% power when
``delta >= (z_crit + z_0.80) * se``. The answer is ``max(min_change, expm1(delta))`` on log scales (or
``delta / level`` on linear ones). For time/memory, ``runs`` projects the figure to another number of
repeated runs per build: the between-build variance ``tau^2 = sigma^2 - w^2 pi/(2n)`` is kept and the
sampling variance of the median ``w^2 pi / (2 runs)`` rescaled, which is what adding runs can and cannot buy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .evaluate import STEP_TOLERANCE, Series, build_series, point_fields, series_noise
from .model import DEFAULT, DetectorConfig, Point
from .statistics import (
    Noise,
    critical_z,
    fast_median,
    median_var_factor,
    noise_contrast,
    normal_quantile,
    within_build_log_variance,
)

Z_POWER80 = normal_quantile(0.8)


@dataclass(frozen=True, slots=True)
class NoiseSummary:
    """What sensitivity needs to know about a window."""

    noise: Noise
    mode: str
    log: bool
    level: float
    n_history: int
    typical_count: float = 0.0

    @classmethod
    def of(cls, noise: Noise, s: Series) -> NoiseSummary:
        cnt = fast_median(s.counts) if s.counts is not None else 0.0  # np.median's value, less overhead
        return cls(noise, s.mode, s.log, fast_median(s.y), int(s.y.size), cnt)


def sensitivity_from_noise(summary: NoiseSummary, kind: str, config: DetectorConfig = DEFAULT,
                           within_builds: int = 10, sigma_override: float | None = None) -> float | None:
    """Smallest detectable relative shift (80% power) within ``within_builds`` builds; None if unknown."""
    noise = summary.noise
    n_a = max(1, within_builds)
    n_b = max(2, min(summary.n_history, config.window - min(n_a, config.max_after)))
    mc = config.min_change_for(kind)
    sigma = noise.sigma if sigma_override is None else sigma_override
    if summary.mode == "step":
        zc = critical_z(config.alpha, 1, noise.df, config.sensitivity)
        delta = max(zc * sigma, math.log1p(mc) - STEP_TOLERANCE * sigma if summary.log else 0.0)
    else:
        n_a = max(n_a, config.min_after)
        n_cand = max(1, min(config.max_after, n_b))
        zc = critical_z(config.alpha, n_cand, noise.df, config.sensitivity)
        if summary.mode == "rate":
            c = max(summary.typical_count, 0.5)
            var = 1.0 / (c * n_a) + 1.0 / (c * n_b) + noise.phi * (1.0 / n_a + 1.0 / n_b)
        else:
            iid = 1.0 / n_a + 1.0 / n_b
            var = sigma * sigma * (median_var_factor(n_a) / n_a + median_var_factor(n_b) / n_b)
            var *= noise_contrast(noise, n_a, n_b) / iid
        delta = (zc + Z_POWER80) * math.sqrt(var)
    if summary.log or summary.mode == "rate":
        rel = math.expm1(delta)
    else:
        rel = delta / abs(summary.level) if summary.level != 0 else math.inf
    rel = max(rel, mc)
    return float(rel) if math.isfinite(rel) else None


def sensitivity(points: Sequence[Point], *, kind: str, config: DetectorConfig = DEFAULT,
                within_builds: int = 10, runs: int | None = None) -> float | None:
    """Smallest relative shift detectable within ``within_builds`` builds at the series' current noise.

    Uses the last ``config.window`` points. ``runs``: for sampled kinds, project to that many repeated runs
    per build (default: the current run count). Returns None with fewer than ``min_before + 2`` points.
    """
    pts = list(points)[-config.window:]
    if len(pts) < config.min_before + 2:
        return None
    vals, cnts, tots, within = zip(*(point_fields(p, kind) for p in pts), strict=True)
    s = build_series(vals, cnts if kind == "rate" else None, tots if kind == "rate" else None, 0, kind, within)
    noise = series_noise(s)
    summary = NoiseSummary.of(noise, s)
    sigma = None
    if runs is not None and s.log and s.mode == "level":
        within = [w for w in (within_build_log_variance(p.samples) for p in pts) if w is not None]
        if within:
            w2 = float(np.median([w for w, _ in within]))
            n_now = float(np.median([n for _, n in within]))
            samp_now = w2 * median_var_factor(int(n_now)) / n_now
            tau2 = max(0.0, noise.sigma ** 2 - samp_now)
            sigma = math.sqrt(tau2 + w2 * median_var_factor(max(1, runs)) / max(1, runs))
    return sensitivity_from_noise(summary, kind, config, within_builds, sigma)
