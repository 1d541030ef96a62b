"""Per-kind statistics: transforms, robust noise estimates, the two-segment tests and their thresholds.

Model (all kinds but ``rate``), on the analysis scale ``y`` (log of the value for time/memory/size, the value
itself otherwise)::

    y_k = mu_segment + e_k,    e_k stationary with marginal variance sigma^2 and lag-1 autocorrelation rho

``e_k`` is the per-build noise: for time/memory the runner effect shared by all runs of build ``k``
(correlated from build to build, AR(1)) plus the sampling noise of the build's median over its ``n_k`` runs.
``sigma`` is estimated from the series itself (between-build variance), never from the within-build spread
alone, which understates it. Estimates are robust (trimmed RMS of lag-1 and lag-4 differences,
``trimmed_scale``) so that level shifts, one-off flaky builds and bimodal slow runs do not inflate them.

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
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special

MAD_TO_SIGMA = 1.482602218505602  # 1 / Phi^-1(3/4)
#: n * Var(median of n iid N(0,1)) for n = 1..15 (simulated, 2e5 replicates; bench/gen_statistics_tables.py
#: regenerates this and the two trimmed-mean tables below); tends to pi/2.
_MEDIAN_VAR_FACTOR = (1.0, 1.0, 1.346, 1.193, 1.438, 1.286, 1.471, 1.351, 1.489, 1.390, 1.515, 1.417, 1.519,
                      1.420, 1.528)
#: Asymptotic relative efficiency of MAD for a normal scale: df of the scale estimate ~ 0.37 * n.
MAD_EFFICIENCY = 0.37
RATE_OFFSET = 0.5  # continuity correction of log(count / total) for zero counts


# --- basic robust statistics -------------------------------------------------------------------------------

def fast_median(x: np.ndarray) -> float:
    """Median of a 1-D float array by a partial sort (``ndarray.partition``: the value of ``np.median``, less overhead)."""
    n = x.size
    h = n // 2
    # np.partition is a Python wrapper around this copy and in-place partition: ~0.5 us a call on the hot path
    p = x.copy()
    if n % 2:
        p.partition(h)
        return float(p[h])
    p.partition((h - 1, h))
    return 0.5 * (float(p[h - 1]) + float(p[h]))


def list_median(values: list[float]) -> float:
    """Median of a short Python list: for a handful of values on a hot path, without numpy's per-call cost."""
    a = sorted(values)
    h = len(a) // 2
    return a[h] if len(a) % 2 else 0.5 * (a[h - 1] + a[h])


def mad_sigma(x: np.ndarray) -> float:
    """Normal-consistent MAD: ``1.4826 * median(|x - median(x)|)`` (0.0 for fewer than 2 values)."""
    if x.size < 2:
        return 0.0
    med = fast_median(x)
    return float(MAD_TO_SIGMA * fast_median(np.abs(x - med)))


def median_var_factor(n: int) -> float:
    """``n * Var(median)/sigma^2`` for ``n`` iid normal values (1 for n <= 2, pi/2 asymptotically)."""
    if n <= 0:
        return math.inf
    if n <= len(_MEDIAN_VAR_FACTOR):
        return _MEDIAN_VAR_FACTOR[n - 1]
    return (math.pi / 2) * (1.0 - 0.6 / n)


TRIM = 0.2
#: n * Var(trimmed mean cutting ceil(0.2 n) at each end)/sigma^2 for normal data, n = 5..30 (simulated,
#: 1e5 replicates); 1.15 beyond.
_TRIMMED_VAR_FACTOR = (1.124, 1.284, 1.217, 1.179, 1.153, 1.137, 1.207, 1.17, 1.167, 1.159, 1.127, 1.177, 1.16,
                       1.157, 1.144, 1.126, 1.171, 1.17, 1.154, 1.134, 1.144, 1.168, 1.154, 1.149, 1.143, 1.145)


def robust_location(x: np.ndarray) -> tuple[float, float]:
    """Robust level of a segment and its variance factor ``n * Var/sigma^2`` under normal noise.

    Up to 4 values: the median (one flaky build of 3 cannot move it). From 5 values: the trimmed mean cutting
    ``ceil(0.2 n)`` values at each end (~87% efficient at the normal, unaffected by up to 20% outliers, e.g.
    two flaky builds among 7, or bimodal slow runs).
    """
    n = x.size
    if n <= 4:
        return fast_median(x), median_var_factor(n)
    g = math.ceil(TRIM * n)
    xs = x.copy()
    xs.sort()  # np.sort without its wrapper
    f = _TRIMMED_VAR_FACTOR[n - 5] if n - 5 < len(_TRIMMED_VAR_FACTOR) else 1.15
    kept = xs[g:n - g]
    # ndarray.mean's own overhead is ~1.3 us of ~2 on these short segments; the same sum and division
    return float(np.add.reduce(kept)) / kept.size, f


#: E[sample variance of the kept values] / sigma^2 for the ceil(0.2 n)-trimmed sample, n = 5..40 (simulated).
_TRIMMED_SAMPLE_VAR = (0.3595, 0.1448, 0.1861, 0.2257, 0.2607, 0.2935, 0.1734, 0.1982, 0.2239, 0.2462, 0.2677,
                       0.1852, 0.2038, 0.2221, 0.2382, 0.2542, 0.1914, 0.2063, 0.2209, 0.2334, 0.2463, 0.1962,
                       0.2079, 0.2193, 0.2308, 0.2407, 0.1989, 0.2088, 0.2189, 0.2284, 0.2382, 0.2016, 0.2097,
                       0.2186, 0.2265, 0.2346)


@lru_cache(maxsize=256)
def trimmed_mean_variance_factor(n: int) -> float:
    """Factor turning the sample variance of the kept runs into the variance of their trimmed mean.

    ``Var(trimmed mean) = s_kept^2 * f(n)`` with ``f(n) = t(n) / (n * c(n))``: ``t(n)`` the trimmed mean's
    variance factor and ``c(n)`` the expected variance of the kept values, both relative to sigma^2 of the
    runs (normal runs; simulated, 1e5 replicates). Cached: it is asked once per build with runs.
    """
    i = min(n, 40) - 5
    c = _TRIMMED_SAMPLE_VAR[i]
    t = _TRIMMED_VAR_FACTOR[i] if i < len(_TRIMMED_VAR_FACTOR) else 1.15
    return t / (n * c)


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

    sigma: marginal per-build standard deviation (between-build; includes the sampling noise of the build value)
    rho: AR(1) coefficient of the correlated part of the noise (clipped to [0, 0.8])
    ar_share: share of sigma^2 that is correlated from build to build (the runner effect); the rest is the
        independent sampling noise of the build value (known for time/memory from the runs' spread)
    df: effective degrees of freedom of ``sigma`` (for the Student t reference)
    phi: extra-Poisson variance of log rates (rate kind only, else 0)
    """

    sigma: float
    rho: float
    df: float
    phi: float = 0.0
    ar_share: float = 1.0


#: ``E[X^2 | |X| < z_.95]`` for a standard normal X: the mean square of the 90% smallest of its absolute values.
TRIM90_MEAN_SQUARE = 0.6230


def drop_largest_tenth(a: np.ndarray) -> np.ndarray:
    """The 90% smallest of the non-negative values ``a`` (at least one), in no particular order."""
    return _smallest(a, _ninety_percent(a.size))


def _ninety_percent(n: int) -> int:
    return max(1, int(n * 0.9))


def _smallest(a: np.ndarray, keep: int) -> np.ndarray:
    """The ``keep`` smallest of ``a`` (all of them if ``keep >= a.size``), in no particular order."""
    if keep >= a.size:
        return a
    p = a.copy()
    p.partition(keep - 1)  # np.partition without its wrapper
    return p[:keep]


def trimmed_scale(d: np.ndarray, n_all: int | None = None) -> float:
    """Normal-consistent scale of ``d``: RMS of the 90% of deviations from the median closest to it.

    Dropping the largest 10% makes it robust to level shifts and a few flaky builds (each touches a few
    differences) while keeping ~80% efficiency (MAD: 37%). Consistency: E[X^2 | |X| < z_.95] = 0.6230.
    ``n_all``: ``d`` is what is left of ``n_all`` values whose missing ones were its largest; the 90% kept are of
    those ``n_all`` (so fewer of ``d`` are dropped), unless more than 10% are missing (then of ``d``).
    """
    a = np.abs(d - fast_median(d))
    keep = _ninety_percent(a.size if n_all is None else n_all)
    a = _smallest(a, keep if keep <= a.size else _ninety_percent(a.size))
    return float(math.sqrt(float(np.dot(a, a)) / a.size / TRIM90_MEAN_SQUARE))


#: Half-width of the running median a flaky build is judged against: 7 builds, so that up to three flaky builds
#: among them (dense at 10-15% flaky builds) do not move it; with three builds (the scan's running median), the
#: ordinary build between two flaky ones read as a dip.
FLAKY_HALF_WIDTH = 3
#: A build is flaky when it lies this many build-to-build noise sd from that running median: far beyond what the
#: noise makes (flagged: 4e-5 of the builds of white noise, 2e-4 of AR(1) 0.8 noise), and flat from 4 to 6 on
#: generated flaky builds.
FLAKY_SD = 5.0
#: More flagged builds than this share of a window are a mode of the metric, not flaky builds (a second device type
#: in the pool, a cache warm on some builds): its window is left as it came, to the trim and the sustained rule's
#: history, as before the model (with the model, builds 30% slower on 20-50% of builds raised 0.2-0.3 false
#: alarms per 1000 builds, mostly where the first builds happened to be mostly slow).
FLAKY_MAX_SHARE = 0.15


def flaky_builds(y: np.ndarray) -> np.ndarray | None:
    """Builds of a window that are flaky (one slow runner, a cold cache: every run of the build moved together),
    as a mask, or None when there are none.

    Build ``i`` (not among the first or last ``FLAKY_HALF_WIDTH``, which lack a centred neighbourhood) is flaky
    when ``|y_i - m_i| > FLAKY_SD * s``, with ``m_i`` the median of the ``2 * FLAKY_HALF_WIDTH + 1`` builds
    centred on it and ``s = MAD(diff y) / sqrt(2)`` the build-to-build noise sd (the MAD: half the differences may
    be spoilt before it breaks, where the 10% trim of ``trimmed_scale`` gives way at 5% flaky builds, each
    spoiling two differences). A level step is not flaky: the running median follows it (the builds on each
    side of it are each their side's majority), nor is a run of more than ``FLAKY_HALF_WIDTH`` builds. None too
    when more than ``FLAKY_MAX_SHARE`` of the judged builds are far: a mode of the metric, not flaky builds.
    """
    h = FLAKY_HALF_WIDTH
    n = y.size
    if n < 2 * h + 3:
        return None
    s = mad_sigma(np.diff(y)) / math.sqrt(2.0)
    if not s > 0:
        return None
    y = np.ascontiguousarray(y)
    # the windows as a strided view (sliding_window_view's checks cost more than the partition)
    win = np.lib.stride_tricks.as_strided(y, shape=(n - 2 * h, 2 * h + 1), strides=(y.strides[0],) * 2,
                                          writeable=False)
    med = np.partition(win, h, axis=1)[:, h]
    far = np.abs(y[h:n - h] - med) > FLAKY_SD * s
    k = int(np.count_nonzero(far))
    if k == 0 or k > FLAKY_MAX_SHARE * far.size:
        return None
    mask = np.zeros(n, dtype=bool)
    mask[h:n - h] = far
    return mask


def without_flaky(y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``y`` with each flaky build (``mask``) replaced by the running median it was judged against."""
    h = FLAKY_HALF_WIDTH
    idx = np.flatnonzero(mask)
    out = y.copy()
    out[idx] = [fast_median(y[i - h:i + h + 1]) for i in idx]
    return out


def ar1_from_ratio(r: float) -> float:
    """Solve ``(1 + rho)(1 + rho^2) = 1 / r`` for rho in [0, 0.8] (r = Var(diff_1) / Var(diff_4)); r = 0 (a lag-4
    variance that overflowed, or a lag-1 part that underflowed: build values near float64's limit) is the limit of
    a vanishing r, the cap."""
    if r >= 1.0:
        return 0.0
    if r <= 0.0:
        return 0.8
    target = 1.0 / r
    if (1.8 * (1 + 0.64)) <= target:
        return 0.8
    rho = 0.4
    for _ in range(8):
        g = (1 + rho) * (1 + rho * rho) - target
        dg = 1 + 2 * rho + 3 * rho * rho
        rho = min(0.8, max(0.0, rho - g / dg))
    return rho


def estimate_noise(y: np.ndarray, within: float | None = None, cuts: Sequence[int] = (),
                   flaky: np.ndarray | None = None) -> Noise:
    """Robust noise of a level series that may contain a few level shifts and outliers.

    Model: ``e_k = r_k + w_k`` with ``w_k`` independent sampling noise of the build value (variance ``W``,
    known from the runs for time/memory, else 0) and ``r_k`` the runner effect, AR(1) with coefficient rho
    and variance tau^2. Then ``Var(y_k - y_{k-l}) = 2 (W + tau^2 (1 - rho^l))``. With robust (trimmed)
    scales ``s1``, ``s4`` of the lag-1 and lag-4 differences,
    ``(s1^2 - W) / (s4^2 - W) = 1 / ((1 + rho)(1 + rho^2))`` gives rho and ``tau^2 = (s4^2 - W)/(1 - rho^4)``.
    Differences are used (not deviations from a level) so that the level shifts we look for do not inflate
    the noise; the trimming makes it insensitive to flaky builds and bimodal slow runs. The within-build
    spread alone (``W``) understates the noise whenever tau^2 > 0, which is why both are modelled.

    A shift leaves one large lag-1 difference but four large lag-4 ones, which the 10% trim absorbs only in
    windows of 35+ builds: in a shorter one the shift inflates ``s4``, so rho (up to its 0.8 cap) and the
    variance of every contrast, and hides itself. ``cuts`` (window positions where a level may change) drop
    the differences that span them (``y[i + l] - y[i]`` with ``i < c <= i + l``, both lags, so that each
    scale trims ordinary differences only). ``flaky`` (a mask of flaky builds, ``flaky_builds``) drops every
    difference with a flaky end: with more flaky builds than the trim absorbs, the noise read high and hid
    timing changes (10% flaky builds: 28 of 36 missed changes never raised).
    """
    n = y.size
    if n < 3:
        return Noise(0.0, 0.0, 1.0)
    r1, r4 = _lag_scale(y, 1, cuts, flaky), _lag_scale(y, 4, cuts, flaky) if n >= 12 else None
    if r1 is None or (n >= 12 and r4 is None):  # too few differences left: cut neither lag
        r1, r4 = _lag_scale(y, 1, (), flaky), _lag_scale(y, 4, (), flaky) if n >= 12 else None
    if r1 is None or (n >= 12 and r4 is None):  # nor leave out the flaky builds' differences
        r1, r4 = _lag_scale(y, 1, ()), _lag_scale(y, 4, ()) if n >= 12 else None
    assert r1 is not None
    s1, size1 = r1
    s4 = r4[0] if r4 is not None else s1
    df = max(1.0, 0.8 * size1)
    v1, v4 = s1 * s1, s4 * s4
    w = min(within, v1) if within is not None and within > 0 else 0.0
    a1, a4 = v1 - w, v4 - w
    if a4 <= 0 or a1 <= 0:
        return Noise(math.sqrt(max(v1, v4)), 0.0, df, ar_share=0.0)
    rho = ar1_from_ratio(a1 / a4)
    tau2 = max(a1, a4 / (1 - rho**4))
    sigma2 = w + tau2
    return Noise(sigma=math.sqrt(sigma2), rho=rho, df=df, ar_share=tau2 / sigma2)


def _lag_diffs(y: np.ndarray, lag: int, cuts: Sequence[int], flaky: np.ndarray | None = None
               ) -> tuple[np.ndarray, int] | None:
    """``y[i + lag] - y[i]`` for every ``i`` whose pair does not span a cut (``i < c <= i + lag``) and has no
    flaky end, and how many the cuts alone leave; None when fewer than two would be left."""
    d = y[lag:] - y[:-lag]
    if not cuts and flaky is None:
        return d, d.size
    keep = np.ones(d.size, dtype=bool)
    for c in cuts:
        keep[max(0, c - lag):max(0, min(c, d.size))] = False
    n_cut = int(np.count_nonzero(keep))
    if flaky is not None:
        keep &= ~(flaky[lag:] | flaky[:-lag])
    return (d[keep], n_cut) if np.count_nonzero(keep) >= 2 else None


def _lag_scale(y: np.ndarray, lag: int, cuts: Sequence[int], flaky: np.ndarray | None = None
               ) -> tuple[float, int] | None:
    """(``trimmed_scale(d) / sqrt(2)``, ``d.size``) of the lag differences ``d`` (``_lag_diffs``); None when fewer
    than two are left.

    Differences with a flaky end are left out as the largest (``trimmed_scale``'s ``n_all``, the differences the
    cuts leave): when they are no more than the trim drops, it drops that many fewer of the rest (a few wild builds
    of runner noise are the differences the trim dropped anyway, and the noise must not read lower for their being
    known: it read 5% lower in heavy-tailed noise); when they are more, the rest are an ordinary sample and get the
    trim of their own."""
    r = _lag_diffs(y, lag, cuts, flaky)
    if r is None:
        return None
    d, n_cut = r
    return trimmed_scale(d, n_cut) / math.sqrt(2), d.size


#: Scale of a window without noise (every trimmed difference zero), relative to its values' magnitude.
NOISELESS_RELATIVE = 1e-9


def noiseless_scale(y: np.ndarray) -> float:
    """The scale that stands in for ``sigma`` in a window whose noise estimate is zero (a deterministic timing,
    memory or score series): ``NOISELESS_RELATIVE`` of its largest magnitude, so that every split's score is
    in z units (any real difference is then overwhelmingly significant and the policy gates, min_change first,
    decide) whatever the unit of the values; 1 for an all-zero window."""
    scale = NOISELESS_RELATIVE * float(np.maximum.reduce(np.abs(y))) if y.size else 0.0  # np.max, less overhead
    return scale if scale > 0 else 1.0  # 1 also where the product underflows (values under ~1e-314)


def trim_absorbs_shifts(n: int, shifts: int) -> bool:
    """Whether the trim of ``trimmed_scale`` on the lag-4 differences of an ``n``-build window drops at least
    the four that each of ``shifts`` level shifts spans (true from 35 builds for one shift, 75 for two)."""
    m = n - 4
    return m - max(1, int(m * 0.9)) >= 4 * shifts


def noise_contrast(noise: Noise, n_after: int, n_before: int) -> float:
    """Variance (units of sigma^2) of mean(after) - mean(before): independent part + AR(1) part."""
    iid = 1.0 / n_after + 1.0 / n_before
    share = noise.ar_share
    if share <= 0 or noise.rho <= 0:
        return iid
    return (1 - share) * iid + share * contrast_var(n_after, n_before, noise.rho)


#: Fewest non-zero build-to-build steps (below ``change_step``) in a window from which their own scale is the
#: creep's, with their own t reference (with fewer, they may be mostly the changes being looked for).
MIN_CREEP_STEPS = 10
#: Non-zero steps beyond this many times their median are changes, not creep (3.4 sd of a normal creep).
CREEP_OUTLIER_MEDIANS = 5.0


def estimate_step_noise(y: np.ndarray, change_step: float | None = None) -> Noise:
    """Noise of a deterministic metric (size): the typical build-to-build step of ordinary commits.

    Ordinary commits make a random walk of mostly-zero tiny steps (creep); changes are rare large steps. Most
    commits leave the artefact as it was, so the creep is sparse, and what a step is judged against is the size
    of an ordinary *non-zero* step: from ``MIN_CREEP_STEPS`` of them in the window, ``sigma`` is their
    normal-consistent RMS after dropping those beyond ``CREEP_OUTLIER_MEDIANS`` times their median and then the
    largest 10% (real jumps), with the trimmed RMS's degrees of freedom (80% of the steps kept, its efficiency
    under normal creep: with ten non-zero steps the critical z is near 8 at the default target). With fewer, the
    RMS of all steps (zeros included) after the 10% trim, with half their number as degrees of freedom, but at
    least the RMS of those non-zero ones: all steps alone understate an ordinary step about 4x when 30% of commits
    move the size (the trim then drops the largest third of the moving ones), and steps of ordinary commits twice
    the usual size read as changes (80 false alarms on 300 simulated series whose creep is 0.04% a commit, with
    every window so scaled; with only the first ~30 builds of a series so scaled, a creep of 0.1% a moving commit
    still raised 0.55 false alarms per 1000 builds, 41-43 false size alerts in 300 series; with that floor 0-1).

    Steps of ``change_step`` or more (on the log scale: the size kind's default ``min_change``, 0.5%) are changes
    by definition: they neither count towards those steps nor scale them (four 1% steps among a window's three
    creep steps would be the majority, their median no outlier threshold, and a floor of 1%).
    """
    if y.size < 3:
        return Noise(0.0, 0.0, 1.0)
    d = np.abs(np.diff(y))
    moved = d[d > 0]
    if change_step is not None:
        moved = moved[moved < change_step]
    if moved.size >= MIN_CREEP_STEPS:
        # the changes themselves first: a sparse creep leaves so few non-zero steps that the trim alone does not
        # drop several real steps in one window
        part = drop_largest_tenth(moved[moved <= CREEP_OUTLIER_MEDIANS * fast_median(moved)])
        return Noise(sigma=float(math.sqrt(np.mean(part * part) / TRIM90_MEAN_SQUARE)), rho=0.0,
                     df=max(1.0, 0.8 * part.size))
    part = drop_largest_tenth(d)
    sigma = float(math.sqrt(np.mean(part * part)))
    if moved.size:
        # a creep step's own size, however few there are: the steps of all commits alone read it 3x too small
        sigma = max(sigma, float(math.sqrt(np.mean(moved * moved))))
    return Noise(sigma=sigma, rho=0.0, df=max(1.0, 0.5 * part.size))


def estimate_rate_noise(y: np.ndarray, v: np.ndarray) -> Noise:
    """Dispersion of log rates: ``phi = max(0, s^2 - median(1/mu))`` with ``s = MAD(diff y)/sqrt(2)``.

    ``s^2`` estimates the total per-build variance ``1/mu + phi`` of ``log(count/total)``; subtracting the
    Poisson part leaves the over-dispersion (the quasi-likelihood / beta-binomial idea on the log scale).
    """
    base = estimate_noise(y)
    pois = fast_median(v) if v.size else 0.0
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


def shift_test(before: np.ndarray, after: np.ndarray, noise: Noise,
               raw: tuple[np.ndarray, np.ndarray] | None = None, *, sustained_from: float = 0.0) -> ShiftTest:
    """Robust two-segment test: level(after) - level(before) over its AR(1) standard error.

    Levels are :func:`robust_location` (median up to 4 builds, 20%-trimmed mean beyond).
    ``se^2 = sigma^2 * contrast_var(n_a, n_b, rho) * f``, where ``f`` is the variance inflation of the
    robust location over the mean (per segment), under normal noise.
    Sustained: see :func:`is_sustained`, judged only when ``|z| >= sustained_from`` and never when it is
    ``math.inf`` (else False: a caller that reads it only of a significant shift, or never, saves the
    judging), on ``raw`` (the segments with their flaky builds, when those were replaced in
    ``before``/``after``): how often the history went beyond the midpoint is judged on the builds
    as they came, or a run of flaky builds at the window's end (which no replacement reaches) reads as a new
    level against a history cleaned of its like.
    """
    nb, na = before.size, after.size
    mb, fb = robust_location(before)
    ma, fa = robust_location(after)
    delta = ma - mb
    s2 = noise.sigma * noise.sigma
    var_a_iid = s2 * fa / na
    var_b_iid = s2 * fb / nb
    cv = noise_contrast(noise, na, nb)
    iid = 1.0 / na + 1.0 / nb
    se = math.sqrt(max((var_a_iid + var_b_iid) * cv / iid, 0.0))
    if se > 0:
        z = delta / se
    else:
        z = 0.0 if delta == 0 else math.copysign(math.inf, delta)
    rb, ra = raw if raw is not None else (before, after)
    judged = sustained_from < math.inf and abs(z) >= sustained_from  # z is infinite where se is 0: inf is never
    sustained = judged and delta != 0 and is_sustained(ra, mb + delta / 2, delta > 0, rb)
    infl = math.sqrt(max(1.0, cv / iid))
    return ShiftTest(mb, ma, math.sqrt(var_b_iid) * infl, math.sqrt(var_a_iid) * infl, delta, se, z, nb, na,
                     sustained, "robust two-segment z-test (median / 20%-trimmed means), AR(1) between-build variance")


def is_sustained(after: np.ndarray, mid: float, up: bool, before: np.ndarray | None = None) -> bool:
    """Is the new level held, not a cluster of flaky builds or the series' other mode?

    Up to 4 builds after the culprit: all of them lie beyond the midpoint of the two levels (so one or two
    flaky builds, whatever their size, never make a shift). Longer: the medians of both the first and the
    second half of the post-culprit builds lie beyond the midpoint (the shift persists to the newest builds).

    With ``before``, also an exceedance test against the series' own history: if the level had not changed,
    each post-culprit build would lie beyond the midpoint with the probability ``q`` its builds before the
    culprit did, ``q = (k + 1) / (n_b + 2)`` (``k`` of ``n_b`` beyond; add-one so an empty count is not
    certainty). ``x`` of the ``n`` post-culprit builds beyond it must then be rarer than
    ``SUSTAIN_ALPHA``: ``P(Binomial(n, q) >= x) <= SUSTAIN_ALPHA``. Under Gaussian noise ``q`` at the
    midpoint of a shift of ``d`` noise sd is ``Phi(-d/2)`` plus the add-one term, so 3 of 3 pass from
    ``d ~ 3.6`` on (the level test alone needs ``d ~ 3.1`` on 3 builds) and a smaller shift needs a fourth
    build, as does any change with fewer than ~20 builds before it (the add-one share alone is then 5% or
    more: the history is too short to vouch for the run). A bimodal metric that takes its slow mode on 20% of
    builds (``q ~ 0.2``), or a heavy-tailed counter whose spikes come in clusters of 2-3 builds, no longer
    makes 3 or 4 outlying builds in a row a new level: the robust noise scale trims such builds as flaky and
    does not see them, the exceedance count does.
    """
    x = after if up else -after
    m = mid if up else -mid
    n = x.size
    beyond = x > m
    if n <= 4:
        held = bool(beyond.all())
    else:
        h = n // 2
        held = bool(fast_median(x[:h]) > m and fast_median(x[h:]) > m)
    if not held or before is None or before.size == 0:
        return held
    b = before if up else -before
    q = (float(np.count_nonzero(b > m)) + 1.0) / (b.size + 2.0)
    return float(special.bdtrc(int(np.count_nonzero(beyond)) - 1, n, q)) <= SUSTAIN_ALPHA


#: Level of the exceedance test in :func:`is_sustained`: the default per-build false-alarm level (0.1 per 1000
#: builds), so the history-exchangeable explanation of a run of builds is rejected as firmly as the level test
#: rejects noise. Fixed, not tied to a configured target: it only decides whether a run is a new level.
SUSTAIN_ALPHA = 1e-4


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
