"""Pre-merge checks: compare a pull-request build with the base branch at its merge-base, metric by metric.

Model (per metric, on the detector's analysis scale ``y``: the log of the build value for time/memory/size,
the value itself for count/score/other, pooled log counts for rates)::

    y_build = level + r_build + w_build

``r`` is the runner effect shared by every run of a build (between-build noise, variance ``tau^2``, AR(1)
along the base branch) and ``w`` the sampling noise of the build value over its runs (variance known from
the runs). Two builds of the same code differ by ``r_1 - r_2 + w_1 - w_2``: comparing the runs of two builds
as if they were draws from one distribution (a t-test or Mann-Whitney on the runs) ignores ``r`` and fails
innocent pull requests. So the test for a shift ``delta = y_head - level_base`` uses

    Var(delta) = tau^2 + w_head + Var(level_base),   Var(level_base) from the base window under AR(1)

with ``tau^2`` estimated from the base branch's history *up to the base build* (robust: the trimmed scale
of the residuals about the history's median, cut at a level shift, :func:`history_variance`), never from
newer builds. A few dozen base builds give each metric's variance only ~0.74 degrees of freedom per build,
fewer under AR(1) (:func:`ar1_df_factor`), and Holm's far tail over 100+ metrics punishes few degrees of
freedom hard; so the variances of the time (and of the memory) metrics of one check moderate each other
first, empirical-Bayes style (:func:`variance_prior`, Smyth's moderated t as in limma). The base level is
the robust level (median / 20%-trimmed mean) of the last ``baseline_builds`` builds up to the merge-base, cut at a level
shift on the base branch inside that window, so a pull request based just after a shift on main is
compared with the level it branched from. When the base build itself departs from the builds before it,
the metric must also differ significantly from the base build alone (an intersection-union test: either
baseline may be the right one).

Per kind: time/memory on the trimmed mean of the runs (robust to a few slow runs and bimodal runs, like the
detector; when a head's runs split into two modes, on the mode nearer the base level, :func:`_two_modes`, and
``inconclusive`` when the other mode is worse and the build value of all runs would have failed) with a
Student t reference (Satterthwaite degrees of freedom: the between-build variance is estimated from a
finite history); rates on pooled counts with the over-dispersion ``phi`` of the base
history (negative-binomial log-rate test); size exactly: any step at or above the size floor
(``abs_floor``, default 100000 bytes) or the relative ``min_change`` is a change, without statistics.

Real build noise is heavy-tailed (a build now and then far from its level); when the check's base builds show
such a tail beyond what the t-tests allow, p-values are held to a Student t with that tail and spiky metrics
to their own record (:func:`_apply_tails`): one build far out is then ``inconclusive`` (re-run), not a failure.

False failures are controlled family-wise over every noisy metric of the check (Holm-Bonferroni at
``false_fail_rate``, default 5% per check whatever the number of metrics). A metric is a ``regression`` or
``improvement`` when its Holm-adjusted p-value is at most the rate and the change passes the policy gates
(``min_change`` relative, or ``abs_floor`` absolute; ``abs_threshold`` absolute minimum); ``inconclusive``
when it points to a regression past the gates with an adjusted p-value within :data:`INCONCLUSIVE_FACTOR`
times the rate (it then says how many runs of the head would decide, from the noise model, or that more
runs of the same build cannot, because between-build noise dominates), or when only the comparison with
a departing base build alone keeps it from failing (the change may be the base commit's); ``same``
otherwise; ``no_baseline`` without any base history.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np
from scipy import special

from .model import DEFAULT_MIN_CHANGE, LOG_KINDS, Point
from .statistics import (
    MAD_TO_SIGMA,
    RATE_OFFSET,
    Noise,
    block_sum_corr,
    estimate_noise,
    fast_median,
    median_var_factor,
    noise_contrast,
    rate_shift_test,
    robust_location,
    trimmed_mean_variance_factor,
    trimmed_scale,
)

VERDICTS = ("regression", "improvement", "same", "inconclusive", "no_baseline")
#: Default size floor (bytes): a size step at or above it is a change even below the relative min_change.
SIZE_ABS_FLOOR = 100_000.0
#: Builds up to the merge-base whose level forms the baseline (fewer after a shift on the base branch).
BASELINE_BUILDS = 8
#: Builds of base history the between-build variance is estimated from (up to the base build).
HISTORY_BUILDS = 40
#: z of a level shift inside the baseline window that cuts the window there.
SHIFT_CUT_Z = 3.5
#: z by which the base build alone departs from the builds before it to be tested as a second baseline.
#: Consecutive builds share runner state (AR(1)), so a base build that departs by chance drags its pull
#: request's head along; below this the branch level alone decides. Offline over 12 seeds of the default
#: and a noisier profile (docs/CHECKS.md), 2.0 caught 14 more of 720 planted regressions than 1.5 for one
#: more of 720 A/A failures; 2.5 caught 20 more for 3 more failures. Held-out seeds agreed (+2, +2 of 180).
BASE_DEPARTS_Z = 2.0
#: A regression-pointing metric is inconclusive when its adjusted p-value is within this factor of the rate.
INCONCLUSIVE_FACTOR = 4.0
#: Runs further than this many (MAD-scaled) deviations from a build's median are left out of its value.
OUTLIER_MADS = 4.0
#: Floor of the between-build variance as a share of the within-build part: a short history that shows
#: none is not evidence of none.
TAU_FLOOR = 0.3
#: Degrees of freedom per lag-L difference of the trimmed difference scale (short histories): simulated
#: AR(1) histories (rho 0-0.5, runner share 20-80%, 12-40 builds) give 2 / Var(log v) = 0.47-0.61 each.
NOISE_DF_PER_BUILD = 0.55
#: Degrees of freedom per independent build of the trimmed scale of residuals about the history's median
#: (10+ builds): 2 / Var(log v) of simulated iid histories of 19-40 builds is 0.74 per build.
RESIDUAL_DF_PER_BUILD = 0.74
#: z (against the lag-4 difference scale) of the strongest split of the history that makes it two
#: segments for the residual scale: a level shift on the base branch must not count as noise.
HISTORY_CUT_Z = 6.0
#: Kinds whose per-build variances are moderated across the metrics of a check (log scale: unit-free).
MODERATED_KINDS = frozenset({"time", "memory"})
#: Weight of the fitted prior's degrees of freedom. The prior is fitted as if the metrics' true variances
#: were scaled inverse chi-square; when they are bounded and wide apart (runner noise 0.5-2%, run spread
#: 1.5-5%), full weight shrinks the noisiest metrics too far for Holm's far tail (A/A failures 8.8% at a
#: 5% rate on a noisy profile); half weight held A/A at 2.5-4.6% (docs/CHECKS.md).
PRIOR_WEIGHT = 0.5
#: Cap on the prior's degrees of freedom: never treat metrics as sharing one known variance.
PRIOR_MAX_DF = 50.0
#: Fewest metrics of one kind a check needs before their variances inform each other.
PRIOR_MIN_METRICS = 8
#: Gap (in per-run noise sd of the base builds) between neighbouring sorted runs of a build that splits them
#: into clusters (:func:`_two_modes`): the check then compares the mode nearer the base level (a majority of
#: runs on a slow path is not a shifted build value). Normal runs leave a gap this wide with two runs on each
#: side in 2e-4 of builds of 5 runs, 1e-5 of 10. Offline, 3 against 4: +9 of 180 planted regressions caught
#: with 15% slow runs (A/A +3), +3 of 540 on the noisy profile, held-out seeds and profile +0/+1 (CHECKS.md).
MODE_GAP_SD = 3.0
#: Residuals (in trimmed scales) beyond this count towards the check's tail (normal: 6.3e-5 of builds).
TAIL_Z = 4.0
#: Fewest base builds (over all level metrics of a check) to measure the tail from.
TAIL_MIN_BUILDS = 400
#: The tail counts as heavy when that many residuals beyond TAIL_Z are this unlikely under the t-tests' model.
TAIL_EXCESS_P = 0.01
#: Significance of the F-test by which a head's runs spread more than the base's (then not pooled).
SPREAD_TEST_P = 0.001
#: Cap on the weight (degrees of freedom) of the base builds' typical run spread pooled with the head's.
POOL_DF = 30.0
Z95 = 1.959963984540054
Z_POWER80 = 0.8416212335729143


@dataclass(frozen=True, slots=True)
class MetricInput:
    """One metric of a check: the head build's measurement and the base history (oldest first).

    ``history`` holds the base branch's builds up to and including the base build (the last element is
    the base build when it measured this metric), never newer ones: ``Point`` objects, or anything with
    the same ``value``/``samples``/``count``/``total`` attributes (the stored history rows).
    """

    metric: str
    kind: str
    head: Point
    history: Sequence[Point]
    device: str = ""
    unit: str = ""
    lower_is_better: bool = True
    min_change: float | None = None
    abs_floor: float | None = None
    abs_threshold: float | None = None


@dataclass(slots=True)
class MetricVerdict:
    """The check's answer for one metric (in the metric's unit; ``rel_change = after / before - 1``)."""

    metric: str
    device: str
    kind: str
    unit: str
    verdict: str
    before: float | None
    after: float | None
    rel_change: float | None
    ci: tuple[float, float] | None
    p_value: float | None
    test: str
    runs_head: int
    runs_base: int
    more_runs: int | None = None
    note: str = ""
    p_raw: float | None = field(default=None, repr=False)
    regression_side: bool = field(default=False, repr=False)
    mode_note: str = field(default="", repr=False)
    tail_note: str = field(default="", repr=False)
    p_gauss: float | None = field(default=None, repr=False)
    gates_ok: bool = field(default=False, repr=False)
    raw: _Raw | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        out = {
            "metric": self.metric, "device": self.device, "kind": self.kind, "unit": self.unit,
            "verdict": self.verdict, "before": self.before, "after": self.after, "rel_change": self.rel_change,
            "ci": list(self.ci) if self.ci is not None else None, "p_value": self.p_value,
            "runs": {"head": self.runs_head, "base": self.runs_base}, "test": self.test,
        }
        if self.more_runs is not None:
            out["more_runs"] = self.more_runs
        if self.note:
            out["note"] = self.note
        return out


# --- per-build summaries ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Summary:
    y: float  # analysis scale
    w: float  # sampling variance of y over the build's runs (nan: unknown)
    runs: int


def _summarise(p: Point, log: bool) -> _Summary | None:
    """Build value on the analysis scale and its sampling variance over the runs.

    Runs further than :data:`OUTLIER_MADS` MAD-scaled deviations from the build's median are left out; then
    5+ runs: the trimmed mean cutting ``ceil(0.2 n)`` runs at each end (the detector's build value: a second
    mode cannot move it); 2-4 runs: the median; else the value.
    """
    s = p.samples
    n = 0 if s is None else len(s)
    xs = np.sort(np.asarray(s, dtype=float)) if n >= 2 else None
    if n >= 5:
        med = fast_median(xs)
        mad = MAD_TO_SIGMA * fast_median(np.abs(xs - med))
        if mad > 0:
            # Runs far outside the build's own spread (a slow path taken by three runs of ten) are not
            # what the build measures; the 20% trimming alone would keep one of three.
            xs = xs[np.abs(xs - med) <= OUTLIER_MADS * mad]
    m = 0 if xs is None else xs.size
    if m >= 5:
        g = -(-m // 5)
        kept = xs[g:m - g]
        v = float(kept.mean())
        var = float(kept.var(ddof=1)) if kept.size > 1 else math.nan
        w = var * trimmed_mean_variance_factor(m)
    elif m >= 2:
        v = fast_median(xs)
        q1, q3 = np.percentile(xs, [25, 75])
        w = ((q3 - q1) / 1.3489795) ** 2 * median_var_factor(m) / m
    else:
        v, w = float(p.value), math.nan
    if log:
        if v <= 0:
            return None
        return _Summary(math.log(v), w / (v * v) if math.isfinite(w) else math.nan, max(n, 1))
    return _Summary(v, w, max(n, 1))


def _summaries(points: Sequence[Point], log: bool) -> list[_Summary]:
    """:func:`_summarise` of many builds; builds with the same number of runs (5+) in one numpy pass."""
    n = len(points[0].samples) if points and points[0].samples is not None else 0
    if n >= 5 and all(p.samples is not None and len(p.samples) == n for p in points):
        return _summaries_2d(points, n, log)
    return _summaries_each(points, log)


def _summaries_2d(points: Sequence[Point], n: int, log: bool) -> list[_Summary]:
    """Vectorised :func:`_summarise`: after sorting, each build's kept runs are one contiguous slice, so the
    trimmed means and variances come from cumulative sums over per-row slice bounds."""
    x = np.sort(np.asarray([np.asarray(p.samples, dtype=float) for p in points]), axis=1)
    med = np.median(x, axis=1)
    dev = np.abs(x - med[:, None])
    mad = MAD_TO_SIGMA * np.median(dev, axis=1)
    inside = (dev <= OUTLIER_MADS * mad[:, None]) | (mad[:, None] <= 0)
    lo = np.argmax(inside, axis=1)
    hi = n - np.argmax(inside[:, ::-1], axis=1)
    m = hi - lo
    g = -(-m // 5)
    a, b = lo + g, hi - g
    k = b - a
    zero = np.zeros((x.shape[0], 1))
    c1 = np.concatenate([zero, np.cumsum(x, axis=1)], axis=1)
    c2 = np.concatenate([zero, np.cumsum(x * x, axis=1)], axis=1)
    rows = np.arange(x.shape[0])
    kk = np.maximum(k, 1)
    mean = (c1[rows, b] - c1[rows, a]) / kk
    var = np.maximum(0.0, (c2[rows, b] - c2[rows, a]) - kk * mean * mean) / np.maximum(kk - 1, 1)
    factor = np.array([trimmed_mean_variance_factor(int(mi)) if mi >= 5 else math.nan for mi in range(n + 1)])
    w = var * factor[m]
    out: list[_Summary] = []
    for i, p in enumerate(points):
        if m[i] < 5 or (log and mean[i] <= 0):
            sm = _summarise(p, log)
            if sm is not None:
                out.append(sm)
        elif log:
            out.append(_Summary(math.log(mean[i]), float(w[i] / (mean[i] * mean[i])), n))
        else:
            out.append(_Summary(float(mean[i]), float(w[i]), n))
    return out


def _summaries_each(points: Sequence[Point], log: bool) -> list[_Summary]:
    out = []
    for p in points:
        s = _summarise(p, log)
        if s is not None:
            out.append(s)
    return out


# --- statistics helpers -------------------------------------------------------------------------------------

def _t_sf2(z: float, df: float) -> float:
    """Two-sided p-value of ``z`` against Student t(df)."""
    if not math.isfinite(z):
        return 0.0
    return min(1.0, 2.0 * float(special.stdtr(max(1.0, df), -abs(z))))


def _t_isf(p: float, df: float) -> float:
    return float(special.stdtrit(max(1.0, df), 1.0 - p))


def _satterthwaite(parts: Sequence[tuple[float, float]]) -> float:
    """Degrees of freedom of a sum of variance estimates ``(variance, df)`` (Welch-Satterthwaite)."""
    total = sum(v for v, _ in parts)
    denom = sum(v * v / d for v, d in parts if v > 0 and math.isfinite(d) and d > 0)
    if total <= 0 or denom <= 0:
        return 1e9
    return max(1.0, total * total / denom)


def _mean_var(noise: Noise, m: int) -> float:
    """Variance (units of sigma^2) of the mean of ``m`` consecutive build values: iid part + AR(1) part."""
    share = noise.ar_share if noise.rho > 0 else 0.0
    return (1 - share) / m + share * block_sum_corr(m, noise.rho) / (m * m)


def holm_adjust(p: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (step-down, monotone), in the input order."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def _level(x: list[float]) -> tuple[float, float]:
    """:func:`statistics.robust_location` of a short list (the same values, without numpy)."""
    n = len(x)
    xs = sorted(x)
    if n <= 4:
        h = n // 2
        med = xs[h] if n % 2 else 0.5 * (xs[h - 1] + xs[h])
        return med, median_var_factor(n)
    g = math.ceil(0.2 * n)
    kept = xs[g:n - g]
    return sum(kept) / len(kept), _trim_factor(n)


@lru_cache(maxsize=64)
def _trim_factor(n: int) -> float:
    """The trimmed mean's variance factor, as :func:`statistics.robust_location` gives it."""
    return robust_location(np.zeros(n))[1]


def baseline_start(y: np.ndarray, noise: Noise, builds: int = BASELINE_BUILDS) -> tuple[int, float, float]:
    """Where the base level's window starts: ``(start index, z of the strongest shift, z of the base build)``.

    The window is the last ``builds`` values, cut at the strongest level shift inside it when that shift's
    robust two-segment z reaches :data:`SHIFT_CUT_Z` (a shift on the base branch just before the merge-base).
    The second z compares the base build alone with the builds before it.
    """
    n = y.size
    start = max(0, n - builds)
    if n < 4 or noise.sigma <= 0:
        return start, 0.0, 0.0
    best_m, best_z, z_one = 0, 0.0, 0.0
    vals = y.tolist()  # the segments are short: plain Python sorts beat numpy's per-call overhead
    s2 = noise.sigma * noise.sigma
    for m in range(1, min(builds, n - 3) + 1):
        before = vals[max(0, n - m - 16):n - m]
        mb, fb = _level(before)
        ma, fa = _level(vals[n - m:])
        na, nb = m, len(before)
        se2 = s2 * (fa / na + fb / nb) * noise_contrast(noise, na, nb) / (1.0 / na + 1.0 / nb)
        z = (ma - mb) / math.sqrt(se2) if se2 > 0 else 0.0
        if m == 1:
            z_one = z
        if abs(z) > abs(best_z):
            best_m, best_z = m, z
    if abs(best_z) >= SHIFT_CUT_Z:
        start = n - best_m
    return start, best_z, z_one


def history_variance(y: np.ndarray) -> tuple[float, float]:
    """``(v, df)``: the marginal variance of a build value from the base history and its degrees of freedom
    as if the builds were independent (:func:`ar1_df_factor` corrects that).

    With 10+ builds, ``v`` is the squared trimmed scale (:func:`statistics.trimmed_scale`) of the residuals
    about the history's median, or about each segment's median when the strongest split of the history,
    ``z_k = |S_k| / sqrt(d k (n - k) / n)`` with ``S_k`` the cumulative sum of ``y - mean(y)`` over the first
    ``k`` builds and ``d`` the half-variance of lag-4 differences, reaches :data:`HISTORY_CUT_Z` (a level
    shift on the base branch). Lag-4 differences alone are robust to shifts too, but each difference spends
    two builds: residuals give ~0.74 degrees of freedom per build against ~0.55, and fewer degrees of freedom
    cost far more than a biased scale in Holm's far tail over 100+ metrics. Shorter histories: the
    half-variance of lag-L differences (L = 2 from 5 builds, else 1).
    """
    return _history_fit(y)[0]


def _history_fit(y: np.ndarray) -> tuple[tuple[float, float], np.ndarray]:
    """:func:`history_variance` ``(v, df)`` and, from the same residuals, the history's residuals in units of
    ``sqrt(v)``, sorted (empty below 10 builds), for :func:`_apply_tails`."""
    n = y.size
    if n < 10:
        lag = 2 if n >= 5 else 1
        v = (trimmed_scale(y[lag:] - y[:-lag]) ** 2) / 2.0
        return (float(v), max(1.0, NOISE_DF_PER_BUILD * (n - lag))), np.zeros(0)
    r, segments = _history_residuals(y)
    v = float(trimmed_scale(r) ** 2)
    return (v, max(1.0, RESIDUAL_DF_PER_BUILD * (n - segments))), (np.sort(r / math.sqrt(v)) if v > 0 else np.zeros(0))


def _history_residuals(y: np.ndarray) -> tuple[np.ndarray, int]:
    """Residuals of 10+ builds about the median, or about each segment's median (see :func:`history_variance`)."""
    n = y.size
    d = (trimmed_scale(y[4:] - y[:-4]) ** 2) / 2.0
    k = np.arange(3, n - 2)
    z = np.abs(np.cumsum(y - y.mean())[k - 1]) / np.sqrt(d * k * (n - k) / n) if d > 0 else np.zeros(1)
    i = int(np.argmax(z))
    if z[i] >= HISTORY_CUT_Z:
        c = int(k[i])
        r = np.concatenate([y[:c] - fast_median(np.sort(y[:c])), y[c:] - fast_median(np.sort(y[c:]))])
        segments = 2
    else:
        r, segments = y - fast_median(np.sort(y)), 1
    return r, segments


def ar1_df_factor(rho: float, share: float) -> float:
    """Share of the independent-builds degrees of freedom a variance estimate keeps when the runner part
    (``share`` of the variance) follows AR(1) with coefficient ``rho``: ``1 / (1 + 2 sum_k c_k^2)`` with the
    build values' autocorrelations ``c_k = share rho^k`` (Bartlett), i.e. ``1 / (1 + 2 share^2 rho^2 / (1 -
    rho^2))``."""
    if rho <= 0 or share <= 0:
        return 1.0
    r2 = min(rho, 0.99) ** 2
    return 1.0 / (1.0 + 2.0 * share * share * r2 / (1.0 - r2))


@dataclass(frozen=True, slots=True)
class VariancePrior:
    """Empirical-Bayes prior of the per-build variance over the metrics of one kind in one check:
    ``sigma^2 ~ s0^2 d0 / chi^2_d0`` (Smyth 2004, the moderated t of limma)."""

    s0: float  # prior variance s0^2
    d0: float  # prior degrees of freedom

    def moderate(self, v: float, df: float) -> tuple[float, float]:
        """Posterior variance ``(d0' s0^2 + df v) / (d0' + df)`` and its degrees of freedom ``d0' + df``, with
        ``d0' = min(PRIOR_WEIGHT d0, PRIOR_MAX_DF)``."""
        d0 = min(PRIOR_WEIGHT * self.d0, PRIOR_MAX_DF)
        return (d0 * self.s0 + df * v) / (d0 + df), d0 + df


def variance_prior(estimates: Sequence[tuple[float, float]]) -> VariancePrior | None:
    """The prior of :class:`VariancePrior` fitted to ``(v, df)`` of many metrics by moments of ``log v``.

    With ``e = log v - digamma(df/2) + log(df/2)``: ``E[e] = log s0^2 - digamma(d0/2) + log(d0/2)`` and
    ``Var(e) = trigamma(d0/2) + mean(trigamma(df/2))`` (each metric's own sampling spread), solved for ``d0``
    (Smyth 2004, section 6.2). When the spread of ``log v`` is no wider than sampling alone explains, the
    metrics share one variance scale (``d0`` infinite); when it is far wider, ``d0`` is small and the prior
    moves little. None with fewer than :data:`PRIOR_MIN_METRICS` usable estimates.
    """
    pairs = [(v, d) for v, d in estimates if v > 0 and math.isfinite(v) and d >= 1]
    if len(pairs) < PRIOR_MIN_METRICS:
        return None
    v = np.array([a for a, _ in pairs])
    d = np.array([b for _, b in pairs])
    e = np.log(v) - special.digamma(d / 2) + np.log(d / 2)
    spread = float(np.var(e, ddof=1)) - float(np.mean(special.polygamma(1, d / 2)))
    if spread <= 0:
        return VariancePrior(float(np.exp(e.mean())), math.inf)
    half = _trigamma_inverse(spread)
    d0 = 2 * half
    s0 = float(np.exp(e.mean() + special.digamma(half) - math.log(half)))
    return VariancePrior(s0, d0)


def _trigamma_inverse(x: float) -> float:
    """``y`` with ``trigamma(y) = x`` (Newton's method from Smyth's starting point)."""
    y = 0.5 + 1.0 / x
    for _ in range(50):
        tri = float(special.polygamma(1, y))
        step = tri * (1 - tri / x) / float(special.polygamma(2, y))
        y += step
        if -step / y < 1e-8:
            break
    return max(y, 1e-3)


def between_build_noise(y: np.ndarray, within: float | None, head_w: float = math.nan,
                        prior: VariancePrior | None = None,
                        variance: tuple[float, float] | None = None) -> tuple[Noise, float]:
    """Per-build noise of the base history: ``(Noise, degrees of freedom of the between-build part)``.

    ``sigma^2`` (marginal variance of a build value) is :func:`history_variance` (``variance``: its value, when
    already computed; robust to a level shift and a few flaky builds); ``tau^2 = sigma^2 - within`` is the
    between-build part, floored at :data:`TAU_FLOOR` of the within part (an estimate of zero is not evidence of none). The AR(1)
    coefficient from the detector's estimator is clipped to [0, 0.6]: it sets how much averaging the base
    window buys (a short history often overstates it) and how many of the history's degrees of freedom are
    independent (:func:`ar1_df_factor`). The between-build part's degrees of freedom shrink with its share of
    ``sigma^2`` (it is a difference of two estimates). With a ``prior`` (the other metrics of the same kind in
    the check), ``sigma^2`` is then moderated towards it, with the prior's degrees of freedom added.
    """
    n = y.size
    if n < 3:
        # Too little history to see between-build noise: assume the runner effect as large as the sampling
        # noise of a build value (or, without runs, the spread of what there is).
        w0 = within if within is not None else (head_w if math.isfinite(head_w) else 0.0)
        spread = float(np.var(y, ddof=1)) if n >= 2 else 0.0
        s2 = max(2 * w0, spread)
        return Noise(math.sqrt(s2), 0.0, 1.0, ar_share=0.5 if w0 > 0 else 1.0), 1.0
    v, df_v = variance if variance is not None else history_variance(y)
    w = within if within is not None and within > 0 else 0.0
    rho = min(0.6, estimate_noise(y, within).rho) if n >= 12 else 0.0
    own_tau2, _ = excess_variance(v, df_v, w)
    df_v = max(1.0, df_v * ar1_df_factor(rho, own_tau2 / (own_tau2 + w) if own_tau2 + w > 0 else 1.0))
    if prior is not None:
        v, df_v = prior.moderate(v, df_v)
    tau2, df_tau = excess_variance(v, df_v, w)
    sigma2 = tau2 + w
    share = tau2 / sigma2 if sigma2 > 0 else 1.0
    return Noise(math.sqrt(sigma2), rho, df_v, ar_share=share), df_tau


def excess_variance(v: float, df_v: float, known: float) -> tuple[float, float]:
    """``(excess, df)``: the part of an estimated variance ``v`` (``df_v`` degrees of freedom) beyond a known
    part ``known`` (the runs' sampling variance of a build value; the Poisson part of a log rate), floored at
    :data:`TAU_FLOOR` of the known part (an estimate of none is not evidence of none). A difference with a
    known part keeps ``df_v (excess / v)^2`` of ``v``'s degrees of freedom."""
    excess = max(v - known, TAU_FLOOR * known) if known > 0 else v
    return excess, max(1.0, df_v * min(1.0, excess / v) ** 2) if v > 0 else 1.0


# --- per-kind comparisons (raw, before the family-wise decision) ------------------------------------------

@dataclass(slots=True)
class _Raw:
    delta: float  # head - base on the analysis scale
    se: float
    df: float
    before: float  # metric unit
    after: float
    p: float
    test: str
    runs_head: int
    runs_base: int
    log: bool
    # projection of more head runs: se^2 = fixed + per_run / n_head
    fixed_var: float = math.nan
    per_run_var: float = math.nan
    # p against the branch level alone (``p`` may be the intersection-union one, with the base build alone)
    p_branch: float = math.nan
    # the head's runs in two modes (:func:`_two_modes`): runs of the other mode and its mean on the scale
    other_runs: int = 0
    other_y: float = math.nan
    # the comparison of the head's build value from all its runs (differs from delta/p with two modes)
    delta_full: float = math.nan
    p_full: float = math.nan


def _to_unit(y: float, log: bool) -> float:
    return math.exp(y) if log else y


@dataclass(frozen=True, slots=True)
class _Prepared:
    head: _Summary | None
    hist: list[_Summary]
    y: np.ndarray
    variance: tuple[float, float] | None  # history_variance(y), 3+ builds
    resid: np.ndarray | None = None  # y's residuals in units of sqrt(variance), sorted (_history_fit)
    run_sd: float = 0.0  # _run_sd(hist)


def _run_sd(hist: Sequence[_Summary]) -> float:
    """Per-run sd of the typical base build, the scale of a gap between two modes of runs: the median build
    variance, which builds with a few slow runs of their own do not inflate as they inflate the mean."""
    ws = [h.w for h in hist if math.isfinite(h.w)]
    return math.sqrt(float(np.median(ws)) * int(np.median([h.runs for h in hist]))) if ws else 0.0


def _prepare_level(inp: MetricInput, log: bool) -> _Prepared:
    pts = list(inp.history)[-HISTORY_BUILDS:]
    hist = _summaries(pts, log)
    run_sd = _run_sd(hist)
    if len(hist) == len(pts):
        _settle_base_modes(pts, hist, log, run_sd)
    y = np.fromiter((h.y for h in hist), float, len(hist))
    hv, resid = _history_fit(y) if y.size >= 3 else (None, None)
    return _Prepared(_summarise(inp.head, log), hist, y, hv, resid, run_sd)


def _compare_level(inp: MetricInput, log: bool, prior: VariancePrior | None = None,
                   prepared: _Prepared | None = None, split_modes: bool = True) -> _Raw | None:
    prep = prepared or _prepare_level(inp, log)
    head, hist, y = prep.head, prep.hist, prep.y
    if head is None or not hist:
        return None
    ws = [h.w for h in hist if math.isfinite(h.w)]
    # The mean, not the median: each build's variance has a few degrees of freedom and a skewed
    # distribution whose median understates it.
    within = float(np.mean(ws)) if len(ws) >= max(1, len(hist) // 2) else None
    runs_hist = int(np.median([h.runs for h in hist]))
    noise, df_tau = between_build_noise(y, within, head.w, prior, prep.variance)
    sigma2 = noise.sigma ** 2
    tau2 = sigma2 * noise.ar_share
    w_bar = sigma2 - tau2
    start, _, z_base = baseline_start(y, noise)
    window = y[start:]
    m = window.size
    level, f = robust_location(window)
    g = block_sum_corr(m, noise.rho) / (m * m)
    base_tau, base_w = f * tau2 * g, f * w_bar / m
    base_var = base_tau + base_w
    modes = _two_modes(inp.head.samples, log, prep.run_sd, level) if split_modes else None
    if modes is not None:
        # Compare the runs that look like a build of this code on a usual runner; the other mode's share
        # of runs says too little to fail a check on (see decide()).
        head = _Summary(modes[0], math.nan, modes[1])
    # The head's sampling noise: its own runs' spread pooled with the base builds' typical one (scaled to
    # the head's run count). A handful of kept runs gives a variance with 2-3 degrees of freedom, far too
    # noisy alone; the pool still lets a head whose runs really spread more count for more.
    typical = w_bar * runs_hist / head.runs if w_bar > 0 else 0.0
    own = head.w if math.isfinite(head.w) else math.nan
    df_own = max(1.0, 0.6 * (head.runs - 1))
    df_typ = min(POOL_DF, max(2.0, 0.6 * len(ws) * max(1, runs_hist - 1))) if typical > 0 else 0.0
    spread_more = (math.isfinite(own) and df_typ > 0
                   and own > typical * float(special.fdtri(df_own, df_typ, 1 - SPREAD_TEST_P)))
    if spread_more:
        # The head's runs spread far more than the base's (e.g. half of them on a slow path): its own
        # spread is the honest uncertainty of its value.
        w_head, df_w = own, df_own
    elif math.isfinite(own) and df_typ > 0:
        w_head = (df_own * own + df_typ * typical) / (df_own + df_typ)
        df_w = df_own + df_typ
    elif math.isfinite(own):
        w_head, df_w = own, df_own
    else:
        w_head, df_w = typical, max(df_typ, 2.0)
    if not math.isfinite(own) and within is None:
        tau2_head = sigma2  # no runs at all: the per-build noise is all we know
    else:
        tau2_head = tau2
    fixed = tau2_head + base_var
    var = fixed + w_head
    df = _satterthwaite([(tau2_head + base_tau, df_tau), (base_w, POOL_DF), (w_head, df_w)])
    delta = head.y - level
    se = math.sqrt(max(var, 0.0))
    z = delta / se if se > 0 else (0.0 if delta == 0 else math.copysign(math.inf, delta))
    p = _t_sf2(z, df)
    # what the comparison of the head's usual build value says (for decide(): did the two-mode rule change it?)
    full = _compare_level(inp, log, prior, prep, split_modes=False) if modes is not None else None
    delta_full, p_full = (full.delta, full.p) if full is not None else (delta, p)
    test = (f"t-test on {'log ' if log else ''}trimmed means: between-build variance from {y.size} base builds "
            f"(AR(1)), base level over {m} build{'s' if m != 1 else ''}")
    # Intersection-union with the base build alone when it departs from the builds before it.
    p_branch = p
    if m > 1 and abs(z_base) >= BASE_DEPARTS_Z:
        last = hist[-1]
        w_last = last.w if math.isfinite(last.w) else w_bar
        var1 = tau2 + w_last + tau2_head + w_head
        z1 = (head.y - last.y) / math.sqrt(var1) if var1 > 0 else 0.0
        # both comparisons must point the same way: a head between the two baselines differs from neither
        p1 = _t_sf2(z1, df) if z1 * delta > 0 else 1.0
        if p1 > p:
            p = p1
            test += "; also against the base build alone, which departs from the builds before it"
    if modes is not None:
        test += f"; the head's runs form two modes, compared on the {modes[1]} runs nearer the base level"
    runs_head = head.runs + (modes[2] if modes else 0)
    return _Raw(delta, se, df, _to_unit(level, log), _to_unit(head.y, log), p, test, runs_head, runs_hist, log,
                fixed_var=fixed, per_run_var=w_head * head.runs, p_branch=p_branch,
                other_runs=modes[2] if modes else 0, other_y=modes[3] if modes else math.nan,
                delta_full=delta_full, p_full=p_full)


def _settle_base_modes(points: Sequence[Point], hist: list[_Summary], log: bool, run_sd: float) -> None:
    """A base build whose runs split into two modes (:func:`_two_modes`, gap scale ``run_sd``) counts at its
    mode nearer the history's median, as a head does: a build with most of a few runs on a slow path is not a
    jump of the level (and would otherwise be taken for the heavy tail of :func:`_apply_tails`)."""
    if len(hist) < 3:
        return
    n = len(points[0].samples) if points[0].samples is not None else 0
    if run_sd <= 0 or n < 4 or any(p.samples is None or len(p.samples) != n for p in points):
        return
    x = np.sort(np.asarray([np.asarray(p.samples, dtype=float) for p in points]), axis=1)
    if log:
        if x[:, 0].min() <= 0:
            return
        x = np.log(x)
    wide = np.diff(x, axis=1).max(axis=1) >= MODE_GAP_SD * run_sd
    if not wide.any():
        return
    centre = fast_median(np.sort(np.fromiter((h.y for h in hist), float, len(hist))))
    for i in np.flatnonzero(wide):
        modes = _two_modes(points[i].samples, log, run_sd, centre)
        if modes is not None:
            hist[i] = _Summary(modes[0], modes[4], hist[i].runs)


def _two_modes(samples: Sequence[float] | None, log: bool, run_sd: float,
               level: float) -> tuple[float, int, int, float, float] | None:
    """``(mean of the mode nearer level, its runs, the other runs, the other runs' mean, the sampling variance
    of the first mean)`` on the analysis scale, or None when the runs form one mode.

    The sorted runs split into clusters at every gap between neighbours of at least :data:`MODE_GAP_SD`
    per-run sds; a mode is a cluster of two or more runs, and the runs form two modes when one leaves two or
    more runs outside it, and no run outside it lies nearer the level than its mean. Slow runs each slow by
    their own amount (30-80%) form a spread of clusters above the usual runs: the widest gap alone can fall
    between two slow clusters and make a mode half slow.
    """
    if samples is None or len(samples) < 4 or run_sd <= 0:
        return None
    x = np.sort(np.asarray(samples, dtype=float))
    if log:
        if x[0] <= 0:
            return None
        x = np.log(x)
    cuts = np.flatnonzero(np.diff(x) >= MODE_GAP_SD * run_sd) + 1
    if cuts.size == 0:
        return None
    best: np.ndarray | None = None
    for part in np.split(x, cuts):
        if part.size >= 2 and x.size - part.size >= 2 and (
                best is None or abs(float(part.mean()) - level) < abs(float(best.mean()) - level)):
            best = part
    if best is None:
        return None
    near = abs(float(best.mean()) - level)
    if np.count_nonzero(np.abs(x - level) < near) > np.count_nonzero(np.abs(best - level) < near):
        return None  # a lone run lies nearer the level than the mode: the runs are spread, not in two modes
    rest = float(x.sum() - best.sum()) / (x.size - best.size)
    return float(best.mean()), int(best.size), int(x.size - best.size), rest, float(best.var(ddof=1)) / best.size


def rate_dispersion(y: np.ndarray, pois: np.ndarray) -> tuple[float, float]:
    """``(phi, df)``: the extra-Poisson variance of a history's log rates ``y`` and its degrees of freedom.

    A log rate's variance is ``1/mu + phi`` (``pois`` holds each build's ``1/(count + 0.5)``); the total is
    :func:`history_variance` of ``y`` (the trimmed residual scale, as for level metrics) and ``phi`` its
    :func:`excess_variance` over the mean Poisson part. Lag-1 differences (the detector's dispersion)
    overstate ``phi`` by ~20% on negative-binomial histories of 19-40 builds and spread ~1.4x wider: a
    check's rate test lost most planted regressions to it.
    """
    if y.size < 3:
        return 0.0, 1.0
    v, df_v = history_variance(y)
    return excess_variance(v, df_v, float(np.mean(pois)) if pois.size else 0.0)


def _compare_rate(inp: MetricInput) -> _Raw | None:
    h = inp.head
    hist = [p for p in list(inp.history)[-HISTORY_BUILDS:] if p.count is not None and p.total]
    if h.count is None or not h.total or not hist:
        return None
    c = np.fromiter((p.count for p in hist), float, len(hist))
    t = np.fromiter((p.total for p in hist), float, len(hist))
    y = np.log((c + RATE_OFFSET) / np.maximum(t, 1.0))
    phi, df_phi = rate_dispersion(y, 1.0 / (c + RATE_OFFSET))
    noise = Noise(math.sqrt(phi), 0.0, df_phi, phi=phi)
    n = y.size
    start = max(0, n - BASELINE_BUILDS)
    if n >= 4:
        best_m, best_z = 0, 0.0
        for m in range(1, min(BASELINE_BUILDS, n - 3) + 1):
            lo = max(0, n - m - 16)
            tst = rate_shift_test(c[lo:n - m], t[lo:n - m], c[n - m:], t[n - m:], noise)
            if abs(tst.z) > abs(best_z):
                best_m, best_z = m, tst.z
        if abs(best_z) >= SHIFT_CUT_Z:
            start = n - best_m
    cb, tb = float(c[start:].sum()), float(t[start:].sum())
    m = n - start
    lb = math.log((cb + RATE_OFFSET) / max(tb, 1.0))
    la = math.log((h.count + RATE_OFFSET) / max(float(h.total), 1.0))
    pois = 1.0 / (h.count + RATE_OFFSET) + 1.0 / (cb + RATE_OFFSET)
    disp = phi * (1.0 + 1.0 / m)
    var = pois + disp
    df = _satterthwaite([(disp, df_phi), (pois, 1e9)])
    delta = la - lb
    se = math.sqrt(var)
    z = delta / se
    p = _t_sf2(z, df)
    test = (f"over-dispersed Poisson log-rate test: dispersion from {n} base builds, base counts pooled over "
            f"{m} build{'s' if m != 1 else ''}")
    return _Raw(delta, se, df, math.exp(lb), math.exp(la), p, test, 1, m, True)


def _compare_size(inp: MetricInput, policy_min: float, floor: float) -> MetricVerdict:
    base = inp.history[-1]
    before, after = float(base.value), float(inp.head.value)
    d = after - before
    rel = d / abs(before) if before != 0 else (0.0 if d == 0 else math.inf)
    changed = d != 0 and (abs(d) >= floor or abs(rel) >= policy_min)
    if inp.abs_threshold is not None and abs(d) < inp.abs_threshold:
        changed = False
    worse = (d > 0) == inp.lower_is_better
    verdict = "same" if not changed else ("regression" if worse else "improvement")
    rel_out = rel if math.isfinite(rel) else None
    return MetricVerdict(
        inp.metric, inp.device, inp.kind, inp.unit, verdict, before, after, rel_out,
        (rel_out, rel_out) if rel_out is not None else None, None,
        f"exact size comparison with the base build (a change is a step >= {floor:g} {inp.unit or 'units'} "
        f"or >= {policy_min:.2%})", 1, 1, regression_side=worse and d != 0, gates_ok=changed,
    )


def _gates(inp: MetricInput, raw: _Raw, min_change: float) -> bool:
    """Policy gates on top of significance: relative min_change or absolute floor; absolute threshold."""
    absd = abs(raw.after - raw.before)
    rel = abs(math.expm1(raw.delta)) if raw.log else (absd / abs(raw.before) if raw.before else math.inf)
    ok = raw.delta != 0 and (rel >= min_change or (inp.abs_floor is not None and absd >= inp.abs_floor))
    if inp.abs_threshold is not None and absd < inp.abs_threshold:
        ok = False
    return ok


def _rel_interval(raw: _Raw) -> tuple[float, float, float]:
    lo, hi = raw.delta - Z95 * raw.se, raw.delta + Z95 * raw.se
    if raw.log:
        return math.expm1(raw.delta), math.expm1(lo), math.expm1(hi)
    b = abs(raw.before) if raw.before else math.nan
    return raw.delta / b, lo / b, hi / b


def compare_metric(inp: MetricInput, prior: VariancePrior | None = None,
                   prepared: _Prepared | None = None) -> MetricVerdict:
    """The raw comparison of one metric (verdict ``same`` or ``no_baseline`` until :func:`decide`).

    ``prior``: the variance prior of the metric's kind in this check (:func:`variance_prior`), used for
    time and memory metrics."""
    kind = inp.kind
    min_change = inp.min_change if inp.min_change is not None else DEFAULT_MIN_CHANGE.get(kind, 0.0)
    if not inp.history:
        return MetricVerdict(inp.metric, inp.device, kind, inp.unit, "no_baseline", None,
                             _head_value(inp.head, kind), None, None, None,
                             "no baseline: the base branch never measured this metric on this device before the "
                             "base build", _runs(inp.head), 0)
    if kind == "size":
        floor = inp.abs_floor if inp.abs_floor is not None else SIZE_ABS_FLOOR
        return _compare_size(inp, min_change, floor)
    raw = _compare_rate(inp) if kind == "rate" else _compare_level(inp, kind in LOG_KINDS, prior, prepared)
    if raw is None:
        return MetricVerdict(inp.metric, inp.device, kind, inp.unit, "no_baseline", None,
                             _head_value(inp.head, kind), None, None, None,
                             "no comparable baseline (no counts, or non-positive values on a log scale)",
                             _runs(inp.head), 0)
    rel, lo, hi = _rel_interval(raw)
    v = MetricVerdict(inp.metric, inp.device, kind, inp.unit, "same", raw.before, raw.after,
                      _finite(rel), (_finite(lo), _finite(hi)), raw.p, raw.test, raw.runs_head, raw.runs_base,
                      p_raw=raw.p)
    v.regression_side = raw.delta != 0 and (raw.delta > 0) == inp.lower_is_better
    v.gates_ok = _gates(inp, raw, min_change)
    v.raw = raw
    if raw.other_runs:
        base = math.log(raw.before) if raw.log else raw.before
        far = math.expm1(raw.other_y - base) if raw.log else ((raw.other_y - base) / abs(base) if base else math.inf)
        full_worse = raw.delta_full != 0 and (raw.delta_full > 0) == inp.lower_is_better
        if far != 0 and (far > 0) == inp.lower_is_better and abs(far) >= min_change and full_worse:
            v.mode_note = (f"{raw.other_runs} of {raw.runs_head} runs of the head are on a mode {far:+.1%} from the "
                           f"base level, the others do not differ enough to decide: re-run the build (a mode that is "
                           f"this change's own comes back)")
    return v


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _runs(p: Point) -> int:
    return len(p.samples) if p.samples is not None else 1


def _head_value(p: Point, kind: str) -> float:
    if kind == "rate" and p.count is not None and p.total:
        return p.count / p.total
    return float(p.value)


def more_runs_needed(raw: _Raw, alpha: float) -> int | None:
    """Head runs to add so the observed change would reach significance ``alpha`` with 80% power.

    ``se^2(n) = fixed + per_run / n``: more runs of the same build shrink only the sampling part, so when the
    between-build part alone is too large, no number of runs decides (None).
    """
    if not (math.isfinite(raw.fixed_var) and math.isfinite(raw.per_run_var)) or raw.delta == 0:
        return None
    zc = _t_isf(alpha / 2, raw.df) + Z_POWER80
    target = (raw.delta / zc) ** 2
    room = target - raw.fixed_var
    if room <= 0 or raw.per_run_var <= 0:
        return None
    n = math.ceil(raw.per_run_var / room)
    return max(1, n - raw.runs_head)


def decide(rows: list[MetricVerdict], false_fail_rate: float = 0.05) -> list[MetricVerdict]:
    """Family-wise decision over the noisy metrics of one check, then the gates; size is exact.

    Only a regression fails a check, so regressions are decided on one-sided p-values (the change being in
    the regression direction), Holm-adjusted over every noisy metric: the probability that a check of
    unchanged code fails is at most ``false_fail_rate``. Improvements are decided the same way on the other
    side. ``p_value`` is the adjusted one-sided p-value in the direction of the estimate.
    """
    alpha = false_fail_rate
    noisy = [r for r in rows if r.p_raw is not None and r.verdict == "same"]
    m = len(noisy)
    worse = [r.p_raw / 2 if r.regression_side else 1 - r.p_raw / 2 for r in noisy]
    better = [1 - r.p_raw / 2 if r.regression_side else r.p_raw / 2 for r in noisy]
    adj_worse, adj_better = holm_adjust(worse), holm_adjust(better)
    for r, pw, pb in zip(noisy, adj_worse, adj_better, strict=True):
        r.p_value = pw if r.regression_side else pb
        r.test += f"; one-sided, Holm over {m} metric{'s' if m != 1 else ''}"
        if r.regression_side and pw <= alpha and r.gates_ok:
            r.verdict = "regression"
        elif not r.regression_side and pb <= alpha and r.gates_ok:
            r.verdict = "improvement"
        elif r.tail_note and r.regression_side and r.gates_ok and m * r.p_gauss / 2 <= alpha:
            r.verdict = "inconclusive"
            r.note = r.tail_note
        elif r.mode_note and m * r.raw.p_full / 2 <= alpha:
            # only where the two-mode rule changed the outcome: the usual build value would fail the check
            r.verdict = "inconclusive"
            r.note = r.mode_note
        elif r.regression_side and r.gates_ok and _base_build_blocks(r, m, alpha):
            r.verdict = "inconclusive"
            r.note = ("worse than the base branch's level, but the base build itself departs from the builds "
                      "before it, and against it alone the change is not significant: the change may be the "
                      "base commit's; re-run the check once the next base-branch builds are in")
        elif r.regression_side and r.gates_ok and pw <= min(1.0, INCONCLUSIVE_FACTOR * alpha):
            r.verdict = "inconclusive"
            r.more_runs = more_runs_needed(r.raw, 2 * alpha / m) if r.raw is not None else None
            r.note = (f"about {r.more_runs} more runs of this build would decide" if r.more_runs is not None else
                      "more runs of this build cannot decide: between-build noise dominates; rebuild or "
                      "repeat on other runners")
    return rows


def _base_build_blocks(r: MetricVerdict, m: int, alpha: float) -> bool:
    """Only the comparison with the base build alone kept this metric from failing: against the branch level
    its one-sided p is significant even Bonferroni-adjusted (no smaller than Holm's adjustment)."""
    raw = r.raw
    return (raw is not None and math.isfinite(raw.p_branch) and raw.p_branch < raw.p
            and m * raw.p_branch / 2 <= alpha)


def run_check(inputs: Sequence[MetricInput], false_fail_rate: float = 0.05,
              extra: Sequence[MetricVerdict] = ()) -> list[MetricVerdict]:
    """Compare every metric and decide family-wise; ``extra`` rows (e.g. size budgets) are appended as given."""
    if not (0 < false_fail_rate < 1):
        raise ValueError("false_fail_rate must be in (0, 1)")
    # Two builds' worth of history say little about one metric's between-build variance; the other metrics
    # of the same kind in the same check (same runners, same base builds) say much about its typical size.
    # Their variances moderate each other on the log scale, where time and memory metrics share units.
    prepared: dict[int, _Prepared] = {}
    estimates: dict[str, list[tuple[float, float]]] = {}
    for i, inp in enumerate(inputs):
        if inp.kind not in ("size", "rate") and inp.history:
            prep = prepared[i] = _prepare_level(inp, inp.kind in LOG_KINDS)
            if prep.variance is not None and inp.kind in MODERATED_KINDS:
                estimates.setdefault(inp.kind, []).append(prep.variance)
    priors = {k: variance_prior(e) for k, e in estimates.items()}
    rows = [compare_metric(inp, priors.get(inp.kind), prepared.get(i)) for i, inp in enumerate(inputs)]
    _apply_tails(rows, [prepared.get(i) for i in range(len(inputs))])
    rows = decide(rows, false_fail_rate)
    return rows + [replace(e) for e in extra]


@lru_cache(maxsize=1)
def _tail_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(nu, c_nu, share beyond TAIL_Z)`` over a grid of Student t degrees of freedom: ``c_nu`` is the
    population :func:`statistics.trimmed_scale` of t(nu) (RMS of the central 90%, normal-consistent), so a
    residual in units of that scale exceeds TAIL_Z with probability ``2 sf(TAIL_Z c_nu; nu)``."""
    nus = np.geomspace(1.5, 2000.0, 80)
    q = special.stdtrit(nus, 0.95)  # P(|T| < q) = 0.9
    # E[T^2; |T| < q] for every nu at once: Simpson's rule on [0, q] (the integrand is smooth there), doubled
    u = np.linspace(0.0, 1.0, 401)
    x = q[:, None] * u[None, :]
    log_norm = special.gammaln((nus + 1) / 2) - special.gammaln(nus / 2) - 0.5 * np.log(nus * math.pi)
    f = x * x * np.exp(log_norm[:, None] - (nus[:, None] + 1) / 2 * np.log1p(x * x / nus[:, None]))
    weights = np.ones(u.size)
    weights[1:-1:2], weights[2:-1:2] = 4.0, 2.0
    m2 = 2.0 * (f @ weights) * (q / (u.size - 1)) / 3.0 / 0.9
    cs = np.sqrt(m2 / 0.6230)
    return nus, cs, 2.0 * special.stdtr(nus, -TAIL_Z * cs)


def tail_df(beyond: int, total: int) -> tuple[float, float]:
    """``(nu, c_nu)`` of the Student t whose share of residuals beyond :data:`TAIL_Z` trimmed scales is
    ``(beyond + 0.5) / (total + 1)`` (the check's pooled base-build residuals)."""
    nus, cs, shares = _tail_table()
    share = (beyond + 0.5) / (total + 1.0)
    if share >= shares[0]:
        return float(nus[0]), float(cs[0])
    if share <= shares[-1]:
        return math.inf, 1.0
    # shares fall with nu: interpolate log nu against log share
    ls = np.log(shares[::-1])
    lnu = float(np.interp(math.log(share), ls, np.log(nus[::-1])))
    nu = math.exp(lnu)
    return nu, float(np.interp(lnu, np.log(nus), cs))


def _apply_tails(rows: list[MetricVerdict], preps: list[_Prepared | None]) -> None:
    """Heavy tails of real build noise (a build now and then far from its level: a busy runner, a flaky
    network): when the check's base builds (every level metric, each in units of its own scale) land beyond
    :data:`TAIL_Z` scales far more often than the t-tests' model allows (Poisson p < :data:`TAIL_EXCESS_P`),
    each level metric's p-value is at least what a Student t with that tail gives (:func:`tail_df`), and a metric
    whose own base builds went that far is held to its own record too: ``(k + 1) / (n + 2)``, ``k`` of its
    ``n`` builds at least as far out as the head. A single build can then no longer fail the check on such
    a metric: it is ``inconclusive`` (re-run) where the normal model alone would have failed it."""
    used = [p for p in preps if p is not None and p.resid is not None and p.resid.size and p.variance]
    total = sum(p.resid.size for p in used)
    if total < TAIL_MIN_BUILDS:
        return
    beyond = sum(int(np.count_nonzero(np.abs(p.resid) > TAIL_Z)) for p in used)
    # A scale estimated from a few dozen builds makes standardised residuals t-like by itself; the t-tests
    # already allow for that. Only an excess over it is a heavy tail of the builds themselves.
    expected = sum(p.resid.size * 2.0 * float(special.stdtr(p.variance[1], -TAIL_Z)) for p in used)
    if beyond == 0 or float(special.pdtrc(beyond - 1, expected)) > TAIL_EXCESS_P:
        return
    nu, c = tail_df(beyond, total)
    for r, prep in zip(rows, preps, strict=True):
        # level metrics only: rates carry their own over-dispersion model, sizes are exact
        if prep is None or r.p_raw is None or r.verdict != "same" or r.raw is None or r.raw.se <= 0:
            continue
        z = abs(r.raw.delta) / r.raw.se
        p_tail = min(1.0, 2.0 * float(special.stdtr(nu, -z * c))) if math.isfinite(nu) else 0.0
        own = ""
        res = prep.resid
        if res is not None and res.size and max(-res[0], res[-1]) > TAIL_Z:
            k = int(np.count_nonzero(np.abs(res) >= z))
            p_tail = max(p_tail, (k + 1) / (res.size + 2))
            own = f"; this metric's own {int(np.count_nonzero(np.abs(res) > TAIL_Z))} times in {res.size}"
        if p_tail > r.p_raw:
            r.p_gauss, r.p_raw = r.p_raw, p_tail
            r.tail_note = (f"base builds of this check land over {TAIL_Z:g} sds from their level {beyond} times in "
                           f"{total} (about {expected:.1f} expected without heavy tails){own}: one build this far "
                           f"out is not yet a regression; re-run the build to confirm")


def check_status(rows: Sequence[MetricVerdict]) -> str:
    """``fail`` exactly when a metric regressed; else ``inconclusive`` if one is; ``pass`` if any metric was
    compared; else ``no_baseline``."""
    verdicts = {r.verdict for r in rows}
    if "regression" in verdicts:
        return "fail"
    if "inconclusive" in verdicts:
        return "inconclusive"
    if verdicts & {"same", "improvement"}:
        return "pass"
    return "no_baseline"


def summary(rows: Sequence[MetricVerdict]) -> dict[str, int]:
    out = dict.fromkeys(VERDICTS, 0)
    for r in rows:
        out[r.verdict] += 1
    return out


__all__ = [
    "VERDICTS",
    "MetricInput",
    "MetricVerdict",
    "baseline_start",
    "check_status",
    "compare_metric",
    "decide",
    "holm_adjust",
    "more_runs_needed",
    "run_check",
    "summary",
]
