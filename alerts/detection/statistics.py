"""Per-kind statistics: transforms, robust noise estimates, the two-segment tests and their thresholds.

Model (all kinds but ``rate``), on the analysis scale ``y`` (log of the value for time/memory/size, the value
itself otherwise)::

    y_k = mu_segment + e_k,    e_k stationary with marginal variance sigma^2 and lag-1 autocorrelation rho

``e_k`` is the per-build noise: for time/memory the runner effect shared by all runs of build ``k``
(correlated from build to build, AR(1)) plus the sampling noise of the build's median over its ``n_k`` runs.
``sigma`` is estimated from the series itself (between-build variance), never from the within-build spread
alone, which understates it. Estimates are robust (MAD of lag-1 and lag-4 differences) so that level shifts,
one-off flaky builds and bimodal slow runs do not inflate them.

Model for ``rate`` (count/total with over-dispersion, a negative-binomial / Poisson-gamma model)::

    count_k ~ Poisson(total_k * r_segment * G_k),   G_k ~ Gamma(1/phi, phi)   (mean 1, variance phi)

so ``log(count_k / total_k)`` has variance ``1/mu_k + phi``. ``phi`` (extra-Poisson, between-build
dispersion) is estimated robustly from successive differences; a plain binomial/Poisson test
(``phi = 0``) over-alerts.

Tests (see :func:`shift_test` and :func:`rate_shift_test`): a robust two-segment z-test of the level before
and after a candidate culprit, with the variance of the contrast computed under AR(1) noise, compared to a
critical value from the per-build false-alarm target, Bonferroni-corrected over an effective number of
candidate culprits, using a Student t reference for the uncertainty of the estimated scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special

MAD_TO_SIGMA = 1.482602218505602  # 1 / Phi^-1(3/4)
#: n * Var(median of n iid N(0,1)) for n = 1..15 (simulated, 2e5 replicates); tends to pi/2.
_MEDIAN_VAR_FACTOR = (1.0, 1.0, 1.346, 1.193, 1.438, 1.286, 1.471, 1.351, 1.489, 1.390, 1.515, 1.417, 1.519,
                      1.420, 1.528)
#: Asymptotic relative efficiency of MAD for a normal scale: df of the scale estimate ~ 0.37 * n.
MAD_EFFICIENCY = 0.37
RATE_OFFSET = 0.5  # continuity correction of log(count / total) for zero counts


# --- basic robust statistics -------------------------------------------------------------------------------

def mad_sigma(x: np.ndarray) -> float:
    """Normal-consistent MAD: ``1.4826 * median(|x - median(x)|)`` (0.0 for fewer than 2 values)."""
    if x.size < 2:
        return 0.0
    med = np.median(x)
    return float(MAD_TO_SIGMA * np.median(np.abs(x - med)))


def median_var_factor(n: int) -> float:
    """``n * Var(median)/sigma^2`` for ``n`` iid normal values (1 for n <= 2, pi/2 asymptotically)."""
    if n <= 0:
        return math.inf
    if n <= len(_MEDIAN_VAR_FACTOR):
        return _MEDIAN_VAR_FACTOR[n - 1]
    return (math.pi / 2) * (1.0 - 0.6 / n)


def block_sum_corr(n: int, rho: float) -> float:
    """``sum_{i,j<n} rho^|i-j|``: variance of the sum of ``n`` consecutive AR(1) values (unit variance)."""
    if n <= 0:
        return 0.0
    if rho <= 0.0:
        return float(n)
    r = rho
    return n * (1 + r) / (1 - r) - 2 * r * (1 - r**n) / (1 - r) ** 2


def cross_block_corr(a: int, b: int, rho: float) -> float:
    """Sum of ``rho^dist`` over pairs of a block of ``b`` values followed directly by a block of ``a``."""
    if rho <= 0.0 or a <= 0 or b <= 0:
        return 0.0
    r = rho
    return r * (1 - r**b) / (1 - r) * (1 - r**a) / (1 - r)


def contrast_var(n_after: int, n_before: int, rho: float) -> float:
    """Variance (in units of sigma^2) of ``mean(after) - mean(before)`` for adjacent blocks of AR(1) noise.

    With ``rho = 0`` this is the textbook ``1/n_after + 1/n_before``.
    """
    a, b = n_after, n_before
    va = block_sum_corr(a, rho) / (a * a)
    vb = block_sum_corr(b, rho) / (b * b)
    cov = cross_block_corr(a, b, rho) / (a * b)
    return max(va + vb - 2 * cov, 1e-12 * (1 / a + 1 / b))


# --- noise of a window ----------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Noise:
    """Noise of one series over the current window, on the analysis scale.

    sigma: marginal per-build standard deviation (between-build; includes the sampling noise of the median)
    rho: lag-1 autocorrelation of the per-build noise (clipped to [0, 0.8])
    df: effective degrees of freedom of ``sigma`` (for the Student t reference)
    phi: extra-Poisson variance of log rates (rate kind only, else 0)
    """

    sigma: float
    rho: float
    df: float
    phi: float = 0.0


def trimmed_scale(d: np.ndarray) -> float:
    """Normal-consistent scale of ``d``: RMS of the 90% of deviations from the median closest to it.

    Dropping the largest 10% makes it robust to level shifts and flaky builds (each touches a few
    differences) while keeping ~80% efficiency (MAD: 37%). Consistency: E[X^2 | |X| < z_.95] = 0.6230.
    """
    a = np.abs(d - np.median(d))
    keep = max(1, int(a.size * 0.9))
    if keep < a.size:
        a = np.partition(a, keep - 1)[:keep]
    return float(math.sqrt(float(np.dot(a, a)) / keep / 0.6230))


def ar1_from_ratio(r: float) -> float:
    """Solve ``(1 + rho)(1 + rho^2) = 1 / r`` for rho in [0, 0.8] (r = Var(diff_1) / Var(diff_4))."""
    if r >= 1.0:
        return 0.0
    target = 1.0 / r
    if (1.8 * (1 + 0.64)) <= target:
        return 0.8
    rho = 0.4
    for _ in range(8):
        g = (1 + rho) * (1 + rho * rho) - target
        dg = 1 + 2 * rho + 3 * rho * rho
        rho = min(0.8, max(0.0, rho - g / dg))
    return rho


def estimate_noise(y: np.ndarray) -> Noise:
    """Robust noise of a level series that may contain a few level shifts and outliers.

    For AR(1) noise with marginal variance sigma^2, ``Var(y_k - y_{k-l}) = 2 sigma^2 (1 - rho^l)``. With robust
    (trimmed) scales ``s1``, ``s4`` of the lag-1 and lag-4 differences, ``s1^2 / s4^2 = 1/((1+rho)(1+rho^2))``
    gives rho, and ``sigma^2 = s4^2 / (1 - rho^4)``. Differences are used (not deviations from a level) so that
    the level shifts we are looking for do not inflate the noise; the trimming makes it insensitive to flaky
    builds and bimodal slow runs.
    """
    n = y.size
    if n < 3:
        return Noise(0.0, 0.0, 1.0)
    s1 = trimmed_scale(y[1:] - y[:-1]) / math.sqrt(2)
    if n >= 12:
        s4 = trimmed_scale(y[4:] - y[:-4]) / math.sqrt(2)
    else:
        s4 = s1
    if s4 <= 0 or s1 <= 0:
        return Noise(max(s1, s4), 0.0, max(1.0, 0.8 * (n - 1)))
    rho = ar1_from_ratio((s1 * s1) / (s4 * s4))
    sigma = max(s1, s4 / math.sqrt(1 - rho**4))
    return Noise(sigma=sigma, rho=rho, df=max(1.0, 0.8 * (n - 1)))


def estimate_step_noise(y: np.ndarray) -> Noise:
    """Noise of a deterministic metric (size): the typical build-to-build step of ordinary commits.

    Ordinary commits make a random walk of mostly-zero tiny steps (creep); planted changes are rare large
    steps. The scale is the root mean square of the steps after trimming the largest 10%, which keeps the
    creep and drops real jumps.
    """
    if y.size < 3:
        return Noise(0.0, 0.0, 1.0)
    d = np.abs(np.diff(y))
    keep = max(1, int(d.size * 0.9))
    part = np.partition(d, keep - 1)[:keep] if keep < d.size else d
    return Noise(sigma=float(math.sqrt(np.mean(part * part))), rho=0.0, df=max(1.0, 0.5 * keep))


def estimate_rate_noise(y: np.ndarray, v: np.ndarray) -> Noise:
    """Dispersion of log rates: ``phi = max(0, s^2 - median(1/mu))`` with ``s = MAD(diff y)/sqrt(2)``.

    ``s^2`` estimates the total per-build variance ``1/mu + phi`` of ``log(count/total)``; subtracting the
    Poisson part leaves the over-dispersion (the quasi-likelihood / beta-binomial idea on the log scale).
    """
    base = estimate_noise(y)
    pois = float(np.median(v)) if v.size else 0.0
    phi = max(0.0, base.sigma * base.sigma - pois)
    return Noise(sigma=base.sigma, rho=0.0, df=base.df, phi=phi)


# --- thresholds -----------------------------------------------------------------------------------------------

def effective_candidates(n_candidates: int) -> float:
    """Effective number of independent tests in a scan over ``n`` candidate culprits.

    The scan statistics of neighbouring culprits are strongly correlated (they share most data); as for
    multiscale scans, the number of distinct scales ``1 + log2(n)`` is used for the Bonferroni correction.
    """
    return 1.0 + math.log2(max(1, n_candidates))


@lru_cache(maxsize=4096)
def _t_isf(p: float, df: float) -> float:
    if df > 1e6:
        return float(-special.ndtri(p))
    return float(special.stdtrit(df, 1.0 - p))


def critical_z(alpha: float, n_candidates: int, df: float, sensitivity: float = 1.0) -> float:
    """Two-sided critical value for a per-build false-alarm probability ``alpha`` over a scan.

    ``t_{df}^{-1}(1 - alpha / (2 * n_eff)) / sensitivity``; df is rounded to limit the cache size.
    """
    p = alpha / (2.0 * effective_candidates(n_candidates))
    dfr = float(min(1e9, max(1.0, round(df))))
    return _t_isf(p, dfr) / sensitivity


def p_value(z: float, df: float, n_candidates: int = 1) -> float:
    """Two-sided p-value of ``z`` against Student t(df), Bonferroni-corrected over the scan."""
    if not math.isfinite(z):
        return 0.0
    p = 2.0 * float(special.stdtr(max(1.0, df), -abs(z)))
    return min(1.0, p * effective_candidates(n_candidates))


def normal_quantile(q: float) -> float:
    return float(special.ndtri(q))


# --- two-segment tests ----------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ShiftTest:
    """Result of testing a level shift at one culprit (analysis scale)."""

    before: float
    after: float
    se_before: float
    se_after: float
    delta: float
    se: float
    z: float
    n_before: int
    n_after: int
    sustained: bool
    test: str


def shift_test(before: np.ndarray, after: np.ndarray, noise: Noise) -> ShiftTest:
    """Robust two-segment test: median(after) - median(before) over its AR(1) standard error.

    ``se^2 = sigma^2 * contrast_var(n_a, n_b, rho) * f``, where ``f`` is the variance inflation of the
    median over the mean (small-sample exact for n <= 15, pi/2 asymptotically) averaged over the segments.
    Sustained: see :func:`is_sustained`.
    """
    nb, na = before.size, after.size
    mb = float(np.median(before))
    ma = float(np.median(after))
    delta = ma - mb
    fa, fb = median_var_factor(na), median_var_factor(nb)
    s2 = noise.sigma * noise.sigma
    var_a_iid = s2 * fa / na
    var_b_iid = s2 * fb / nb
    cv = contrast_var(na, nb, noise.rho)
    iid = 1.0 / na + 1.0 / nb
    se = math.sqrt(max((var_a_iid + var_b_iid) * cv / iid, 0.0))
    if se > 0:
        z = delta / se
    else:
        z = 0.0 if delta == 0 else math.copysign(math.inf, delta)
    sustained = delta != 0 and is_sustained(after, mb + delta / 2, delta > 0)
    infl = math.sqrt(max(1.0, cv / iid))
    return ShiftTest(mb, ma, math.sqrt(var_b_iid) * infl, math.sqrt(var_a_iid) * infl, delta, se, z, nb, na,
                     sustained, "robust two-segment median z-test, AR(1) between-build variance")


def is_sustained(after: np.ndarray, mid: float, up: bool) -> bool:
    """Is the new level held, not a cluster of flaky builds?

    Up to 4 builds after the culprit: all of them lie beyond the midpoint of the two levels (so one or two
    flaky builds, whatever their size, never make a shift). Longer: the medians of both the first and the
    second half of the post-culprit builds lie beyond the midpoint (the shift persists to the newest builds).
    """
    x = after if up else -after
    m = mid if up else -mid
    n = x.size
    if n <= 4:
        return bool(np.all(x > m))
    h = n // 2
    return bool(np.median(x[:h]) > m and np.median(x[h:]) > m)


def rate_shift_test(c_before: np.ndarray, t_before: np.ndarray, c_after: np.ndarray, t_after: np.ndarray,
                    noise: Noise) -> ShiftTest:
    """Over-dispersed Poisson (negative-binomial) test of a rate change on the log scale.

    ``delta = log((C_a + .5)/T_a) - log((C_b + .5)/T_b)`` with pooled counts ``C`` and exposures ``T``;
    ``Var = 1/(C_a + .5) + 1/(C_b + .5) + phi (1/n_a + 1/n_b)``: the Poisson part of the pooled counts plus the
    between-build dispersion ``phi``. Sustained: dropping the single post-culprit build that contributes most
    to the shift keeps the one-sided evidence above z = 1.645.
    """
    nb, na = c_before.size, c_after.size
    cb, tb = float(c_before.sum()), float(t_before.sum())
    ca, ta = float(c_after.sum()), float(t_after.sum())
    lb = math.log((cb + RATE_OFFSET) / max(tb, 1.0))
    la = math.log((ca + RATE_OFFSET) / max(ta, 1.0))
    vb = 1.0 / (cb + RATE_OFFSET) + noise.phi / nb
    va = 1.0 / (ca + RATE_OFFSET) + noise.phi / na
    delta = la - lb
    se = math.sqrt(va + vb)
    z = delta / se
    sustained = False
    if delta != 0 and na >= 2:
        rates = (c_after + RATE_OFFSET) / np.maximum(t_after, 1.0)
        drop = int(np.argmax(rates)) if delta > 0 else int(np.argmin(rates))
        ca2, ta2 = ca - float(c_after[drop]), ta - float(t_after[drop])
        la2 = math.log((ca2 + RATE_OFFSET) / max(ta2, 1.0))
        se2 = math.sqrt(1.0 / (ca2 + RATE_OFFSET) + noise.phi / (na - 1) + vb)
        sustained = (la2 - lb) / se2 * math.copysign(1.0, delta) >= 1.645
    elif delta != 0:
        sustained = True
    return ShiftTest(lb, la, math.sqrt(vb), math.sqrt(va), delta, se, z, nb, na, sustained,
                     "over-dispersed Poisson (NB) log-rate z-test, pooled counts")


def step_test(prev: float, cur: float, noise: Noise) -> ShiftTest:
    """Deterministic metric: the step ``y_k - y_{k-1}`` against the creep scale of ordinary commits."""
    delta = cur - prev
    se = noise.sigma
    if se > 0:
        z = delta / se
    else:
        z = 0.0 if delta == 0 else math.copysign(math.inf, delta)
    return ShiftTest(prev, cur, se / math.sqrt(2), se / math.sqrt(2), delta, se, z, 1, 1, delta != 0,
                     "single-build step test against the creep of ordinary commits (deterministic metric)")


# --- per-point transforms -------------------------------------------------------------------------------------

def within_build_log_variance(samples) -> tuple[float, int] | None:
    """Within-build variance of log samples (robust, IQR-based) and the run count; ``None`` without runs."""
    if samples is None:
        return None
    s = np.asarray(samples, dtype=float)
    n = s.size
    if n < 2 or np.any(s <= 0):
        return None
    q1, q3 = np.percentile(np.log(s), [25, 75])
    sd = (q3 - q1) / 1.3489795
    return float(sd * sd), n
