"""Decisions shared by the online and hindsight paths: test one segment for a shift, re-test an open one.

A :class:`Series` is a window of builds on the analysis scale with absolute build indices. The functions here
are pure: the same window, segment bounds and open change point always give the same answer, which is what
lets the stateless worker replay a window (see :meth:`OnlineDetector.resume`).
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import reduce

import numpy as np

from .model import DEFAULT_MIN_CHANGE, LOG_KINDS, SAMPLED_KINDS, ChangePoint, DetectorConfig, Point
from .scan import LR_DROP, best_split, plausible_range, rate_split_loglik, rate_split_scores, split_scores
from .statistics import (
    Noise,
    ShiftTest,
    critical_z,
    estimate_noise,
    estimate_rate_noise,
    estimate_step_noise,
    fast_median,
    flaky_builds,
    list_median,
    noiseless_scale,
    p_value,
    rate_shift_test,
    shift_test,
    step_test,
    trim_absorbs_shifts,
    trimmed_mean_variance_factor,
    without_flaky,
)

Z95 = 1.959963984540054
#: One-sided 5% z: an open alert whose evidence drops below this is withdrawn.
Z_WITHDRAW = 1.6448536269514722
#: Tolerance, in creep standard deviations, on the min_change of deterministic metrics (the creep of the commits
#: around a change moves its measured step; with the creep scaled by the commits that move the size, 3 let a 0.4%
#: step through a 0.5% min_change on a series creeping 0.04% a commit).
STEP_TOLERANCE = 2.0
#: Builds that must arrive after an alert before it can be confirmed (time to refine its culprit); a late
#: alert (detected long after its culprit) waits half its delay.
CONFIRM_HOLD = 3
#: A level change backed out at most this many builds after its culprit was an excursion (``backed_out``):
#: "backed out 1-5 builds later". With the ``min_after`` builds that show the return, the last such backout
#: is seen by build ``c + 7``, where an open alert can first be confirmed (``confirm_after`` = 8), so the
#: online path sees every one it is asked to. A fixed number, as hindsight relaxes ``confirm_after``.
BACKOUT_WITHIN = 5
#: Builds from the first of a return run on (``_excursion_return``) by which ``backed_out`` judges whether the
#: old level is back, where the backout alone was not significant; an open change is not confirmed while they
#: arrive (``backout_pending``). A fixed number, as hindsight relaxes ``confirm_after``; fewer (the run's own
#: three builds) withdrew, for good, real steps whose next builds dipped.
LASTING_BUILDS = 8
#: The old level is back when those builds lie within this share of the excursion from it (and do not hold the
#: change): a partial revert that leaves more is a smaller lasting change, not a backout (with half, 50 of 256
#: steps reverted by half to 70% within 5 builds in AR(1) noise were no longer found; with a quarter, 37).
OLD_LEVEL_SHARE = 0.25
#: Builds back at the old level that make a return between an excursion and a later step on their own; a shorter
#: return needs the excursion off the later level as well (``_return_before_step``).
RETURN_MIN = 2
#: One-sided z by which the step after such a return must exceed the return (``_return_before_step``).
Z_RETURN = 3.090232306167813
#: Builds a size alert must hold before it is confirmed.
STEP_CONFIRM = 3
#: Builds of history (the step included) before a size step can alert at all.
MIN_STEP_HISTORY = 4


@dataclass(slots=True)
class Series:
    """Window of one series on the analysis scale; ``index0`` is the absolute index of element 0.

    mode: ``"level"`` (robust level test), ``"step"`` (deterministic size metric) or ``"rate"`` (counts).
    log: whether ``y`` is the log of the values.
    raw, flaky: for a level window of builds with runs that has flaky builds (``statistics.flaky_builds``), the
    values as they came and the mask of the flaky ones; ``y`` then has each replaced by its running median.
    """

    y: np.ndarray
    counts: np.ndarray | None
    totals: np.ndarray | None
    index0: int
    mode: str
    log: bool
    within: np.ndarray | None = None
    raw: np.ndarray | None = None
    flaky: np.ndarray | None = None

    @property
    def end(self) -> int:
        """Absolute index of the last build."""
        return self.index0 + self.y.size - 1

    def to_unit(self, level: float) -> float:
        return math.exp(level) if (self.log or self.mode == "rate") else level


def build_series(values: Sequence[float], counts: Sequence[float] | None, totals: Sequence[float] | None,
                 index0: int, kind: str, within: Sequence[float] | None = None) -> Series:
    """Choose the analysis scale for a window of raw values (deterministic in the window's content).

    In a level window of builds with runs (time, memory: ``within`` known), flaky builds are replaced by their
    running median (``statistics.flaky_builds``): a flaky build moves every run of the build, which the trimmed
    build value cannot undo, and with 5-15% of them the scan's location and the levels were dragged and the
    noise read high. Values without runs (Mozilla's per-push values, TCPD) are left as they are: there one
    outlying value is the metric's own tail as often as a flaky build, and replacing those cost real alerts
    (91 real series: 267 -> 272 alerts, no label more; TCPD's 21 stored datasets: hindsight F1 0.654 -> 0.640).
    """
    v = np.asarray(values, dtype=float)
    if kind == "rate" and counts is not None and totals is not None:
        c = np.asarray(counts, dtype=float)
        t = np.asarray(totals, dtype=float)
        if not np.isnan(c).any():
            y = np.log((c + 0.5) / np.maximum(t, 1.0))
            return Series(y, c, t, index0, "rate", True)
    # the ufuncs' reductions: ndarray.min and .all are Python wrappers around them (~0.5 us a window)
    if kind in LOG_KINDS and v.size and float(np.minimum.reduce(v)) > 0:
        y = np.log(v)
        mode = "step" if kind == "size" and is_deterministic(y) else "level"
        w = np.asarray(within, dtype=float) if within is not None and kind in SAMPLED_KINDS else None
        if mode == "level" and w is not None and not np.logical_and.reduce(np.isnan(w)):
            flaky = flaky_builds(y)
            if flaky is not None:
                return Series(without_flaky(y, flaky), None, None, index0, mode, True, w, y, flaky)
        return Series(y, None, None, index0, mode, True, w)
    return Series(v, None, None, index0, "step" if kind == "size" else "level", False)


#: Median relative build-to-build change below which a size window is deterministic (step mode): 0.1%,
#: a fifth of the size kind's default min_change.
DETERMINISTIC_JITTER = 0.001


def is_deterministic(log_values: np.ndarray) -> bool:
    """Whether a window behaves like one build artefact's size: the typical commit moves it by (almost) nothing.

    Real installer sizes are sometimes averages over several uploads or builders and jitter by +-1% with
    one-push dips of -9% (Mozilla's installer-size series): the one-build step test alerted on nearly every
    dip, so such windows use the robust level test like timings. Short windows (under 8 builds) keep the step test.
    """
    if log_values.size < 8:
        return True
    return fast_median(np.abs(np.diff(log_values))) < DETERMINISTIC_JITTER


def point_fields(p: Point, kind: str = "other") -> tuple[float, float, float, float]:
    """(build value, count, total, within-build variance of log(build value)) of a point; NaN when absent.

    For time/memory with at least 5 runs the build value is the trimmed mean of the runs (``ceil(0.2 n)`` cut
    at each end): robust to the bimodal slow runs like the median, but ~1.4x more efficient, so the
    per-build sampling noise is smaller. Its sampling variance on the log scale is estimated from the spread
    of the kept runs (see ``statistics.trimmed_mean_variance_factor``). Otherwise the point's own value.
    """
    if p.count is not None:
        return float(p.value), float(p.count), float(p.total), math.nan
    smp = p.samples
    if smp is not None and kind in SAMPLED_KINDS and len(smp) >= 5:
        xs = sorted(map(float, smp))  # float64 whatever the runs' type, as bulk_point_fields reads them
        n = len(xs)
        g = -(-n // 5)  # ceil(0.2 n)
        mid = xs[g:n - g]
        k = n - 2 * g
        mean = reduce(operator.add, mid) / k  # left to right (Python 3.12's sum compensates)
        if mean <= 0 or not mean * mean > 0:  # non-positive, or its square underflows: no relative spread
            return mean, math.nan, math.nan, math.nan
        var = max(0.0, (reduce(operator.add, map(operator.mul, mid, mid)) - k * mean * mean) / (k - 1))
        return mean, math.nan, math.nan, var * trimmed_mean_variance_factor(n) / (mean * mean)
    return float(p.value), math.nan, math.nan, math.nan


def bulk_point_fields(points: Sequence[Point], kind: str = "other") -> list[tuple[float, float, float, float]]:
    """``[point_fields(p, kind) for p in points]``, bit for bit, with the trimmed means of runs computed with
    numpy per group of builds with the same number of runs (resuming a detector reads ~100 stored builds,
    usually all with one number of runs, or none).

    Bit-identical, so a resumed detector takes exactly the streaming one's decisions: both read the runs as
    float64, their sorts agree bit for bit (stable where a zero could be -0.0), and ``cumsum`` adds left to
    right as ``point_fields``' ``reduce`` does (numpy's ``sum`` may add in another order)."""
    nan = math.nan
    sizes = ({len(p.samples) if p.samples is not None and p.count is None else 0 for p in points}
             if kind in SAMPLED_KINDS else {0})
    if max(sizes, default=0) < 5:  # no runs to trim: point_fields inline (a call per build costs more here)
        return [(float(p.value), nan, nan, nan) if p.count is None
                else (float(p.value), float(p.count), float(p.total), nan) for p in points]
    if len(sizes) == 1 and len(points) >= 4:  # every build with the same number of runs
        mean, w = _trimmed_means([p.samples for p in points], sizes.pop())
        return list(zip(mean, itertools.repeat(nan), itertools.repeat(nan), w, strict=False))
    out = [point_fields(p, kind) if p.count is not None or p.samples is None or len(p.samples) < 5
           else None for p in points]
    groups: dict[int, list[int]] = {}
    for i, f in enumerate(out):
        if f is None:
            groups.setdefault(len(points[i].samples), []).append(i)
    for n, idx in groups.items():
        if len(idx) < 4:  # numpy's fixed cost is not worth it
            for i in idx:
                out[i] = point_fields(points[i], kind)
            continue
        mean, w = _trimmed_means([points[i].samples for i in idx], n)
        for i, m, wi in zip(idx, mean, w, strict=True):
            out[i] = (m, nan, nan, wi)
    return out  # type: ignore[return-value]


def _trimmed_means(runs: Sequence[Sequence[float]], n: int) -> tuple[list[float], list[float]]:
    """Trimmed means and log-scale variances (``point_fields``' last field) of builds with ``n`` runs each."""
    g = -(-n // 5)
    k = n - 2 * g
    # one flat pass over the runs (every build has n): np.array over a list of tuples costs half as much again
    arr = np.fromiter(itertools.chain.from_iterable(runs), dtype=float, count=len(runs) * n).reshape(len(runs), n)
    # Equal floats have equal bits, except 0.0 and -0.0: with a zero among the runs, sort stably as Python's
    # sorted does, so the two keep their order in both (the default sort is faster and may swap them).
    mid = np.sort(arr, axis=1, kind="stable" if (arr == 0).any() else None)[:, g:n - g]
    with np.errstate(all="ignore"):  # runs of ~1e200 overflow as in point_fields; NaN/inf handled below
        mean = np.cumsum(mid, axis=1)[:, -1] / k
        ss = np.cumsum(mid * mid, axis=1)[:, -1]
        mm = mean * mean
        # the same IEEE operations in the same order as point_fields; max(0.0, x) is x only when x > 0.0 (a NaN
        # or -0.0 gives 0.0), which np.fmax is not (it keeps -0.0)
        v = (ss - k * mean * mean) / (k - 1)
        w = np.where(v > 0.0, v, 0.0) * trimmed_mean_variance_factor(n) / mm
    w[(mean <= 0) | ~(mm > 0)] = math.nan
    return mean.tolist(), w.tolist()


def short_window_noise(s: Series, noise: Noise, cuts: Sequence[int | None]) -> Noise:
    """``noise``, or, in a level window too short for the trim to absorb the lag-4 differences of the shifts in
    it (``statistics.trim_absorbs_shifts``), the window's noise estimated without the differences that span
    ``cuts`` (absolute indices: the segment's start, the located culprit, the end of the tested builds): there
    the shift being tested inflates the estimate and hides itself.

    Under 35 builds the trim absorbs no shift: every cut is left out. From 35 to 74 builds it absorbs one,
    the segment start's (the last confirmed change), and only the culprit's differences (and the end's) are
    left out; longer windows keep their estimate. Cutting the segment start there too found the extents of a
    slow drift faster than its later builds settled them, and left its tail to a late alert."""
    n = s.y.size
    if s.mode != "level" or trim_absorbs_shifts(n, 2):
        return noise
    if trim_absorbs_shifts(n, 1):
        cuts = cuts[1:]
    return series_noise(s, [c for c in cuts if c is not None])


#: Builds of a segment (from the last confirmed change to the end of the window) from which its own noise is read.
SEGMENT_NOISE_MIN = 24
#: A segment whose own noise sigma is at most this share of the window's is judged on its own noise.
SEGMENT_NOISE_SHARE = 0.5


def segment_noise(s: Series, noise: Noise, seg_start: int) -> Noise:
    """``noise`` (the window's), or, in a level window whose segment from ``seg_start`` (the culprit of the last
    confirmed change, absolute) holds ``SEGMENT_NOISE_MIN`` builds or more, that segment's own noise when its sigma
    is at most ``SEGMENT_NOISE_SHARE`` of the window's.

    A confirmed change may change the noise as well as the level: a pdfpaint timing with ~2% build-to-build noise
    stepped -4% and then varied by ~0.4% (autoland1/5095353). The window's estimate leaves out only the differences
    that span the change, and pools the two regimes' others, so the quiet segment was judged on the older, larger
    noise: a +5% step 37 builds into it was raised 9 builds after its culprit, and otava's tigerbeetle's third
    labelled change 17. Read from the segment alone (``series_noise``; its lag-4 differences come from 20 or more
    builds, where a new shift inside it inflates the estimate and so keeps the window's), both are raised 2-3 builds
    on. Only the quieter case: judging a noisier segment on its own noise as well cost TCPD's stored datasets 0.010-
    0.014 of F1 in each mode and raised one alert more on the real corpus (measured 2026-12-07). The online detector
    sets it aside while the newest builds are louder than it (``OnlineDetector._noise_returned``): the estimate
    stops at the block boundary, and noise that came back after it was judged quiet."""
    a = seg_start - s.index0
    if s.mode != "level" or a <= 0 or s.y.size - a < SEGMENT_NOISE_MIN or not noise.sigma > 0:
        return noise
    tail = Series(s.y[a:], None, None, seg_start, s.mode, s.log,
                  None if s.within is None else s.within[a:], None if s.raw is None else s.raw[a:],
                  None if s.flaky is None else s.flaky[a:])
    own = series_noise(tail)
    return own if 0 < own.sigma <= SEGMENT_NOISE_SHARE * noise.sigma else noise


def series_noise(s: Series, cuts: Sequence[int] = ()) -> Noise:
    """Noise of the window ``s``; ``cuts`` (absolute indices of builds where the level may change) inside the
    window are passed to ``estimate_noise`` for level windows, and so are its flaky builds (``Series.flaky``).
    A step window's creep leaves out steps of the size kind's default ``min_change`` or more (log scale)."""
    if s.mode == "rate":
        return estimate_rate_noise(s.y, 1.0 / (s.counts + 0.5))
    if s.mode == "step":
        return estimate_step_noise(s.y, math.log1p(DEFAULT_MIN_CHANGE["size"]) if s.log else None)
    within = None
    if s.within is not None:
        w = s.within[~np.isnan(s.within)]
        if w.size >= max(3, s.y.size // 2):
            within = fast_median(w)
    rel = [c - s.index0 for c in cuts if s.index0 < c <= s.end]
    if s.raw is not None:
        return estimate_noise(s.raw, within, rel, s.flaky)
    return estimate_noise(s.y, within, rel)


@dataclass(slots=True)
class Candidate:
    """A tested culprit (absolute indices) with the scan's plausible range."""

    index: int
    first: int
    last: int
    test: ShiftTest
    z_crit: float
    n_candidates: int
    noise: Noise


def _test_at(s: Series, seg_lo: int, j: int, noise: Noise, hi_excl: int | None = None, *,
             sustained_from: float = math.inf) -> ShiftTest:
    """Test the split at absolute index ``j`` of the segment ``seg_lo..end`` (or ``..hi_excl-1``). A level test's
    ``sustained`` is judged only from ``|z| >= sustained_from`` (``shift_test``); by default never: only the scan's
    candidates read it, and only of a significant shift (judging every test took 7% of the online detector's
    CPU on the real corpus)."""
    a0 = seg_lo - s.index0
    aj = j - s.index0
    a1 = s.y.size if hi_excl is None else hi_excl - s.index0
    if s.mode == "rate":
        return rate_shift_test(s.counts[a0:aj], s.totals[a0:aj], s.counts[aj:a1], s.totals[aj:a1], noise)
    if s.mode == "step":
        return step_test(float(s.y[aj - 1]), fast_median(s.y[aj:a1]), noise)
    raw = (s.raw[a0:aj], s.raw[aj:a1]) if s.raw is not None else None
    return shift_test(s.y[a0:aj], s.y[aj:a1], noise, raw, sustained_from=sustained_from)


def locate(s: Series, seg_lo: int, lo: int, hi: int, noise: Noise, sign: int = 0,
           hi_excl: int | None = None) -> tuple[int, float, np.ndarray]:
    """Best culprit among absolute indices ``lo..hi`` of the segment ``seg_lo..``: (best, z score, scores)."""
    a0 = seg_lo - s.index0
    a1 = s.y.size if hi_excl is None else hi_excl - s.index0
    jl, jh = lo - seg_lo, hi - seg_lo
    if s.mode == "rate":
        scores = rate_split_scores(s.counts[a0:a1], s.totals[a0:a1], jl, jh, noise.phi)
    else:
        seg = s.y[a0:a1]
        scores = split_scores(seg, jl, jh, noise.sigma)
        # z units either way: the raw scores are in the units of the analysis scale (log units of a timing,
        # counts of a counter), which the critical z must not be compared with
        scores = scores / (noise.sigma if noise.sigma > 0 else noiseless_scale(seg))
    b = best_split(scores, sign)
    return lo + b, float(scores[b]), scores


def _candidate(lo: int, best: int, scores: np.ndarray, test: ShiftTest, zc: float, n_cand: int,
               noise: Noise) -> Candidate:
    f, la = plausible_range(scores, best - lo)
    return Candidate(best, lo + f, lo + la, test, zc, n_cand, noise)


def passes_gates(test: ShiftTest, s: Series, kind: str, config: DetectorConfig, noise: Noise) -> bool:
    """Policy gates on top of significance: min_change (relative, waived for an absolute change of at least
    abs_floor) and abs_threshold (metric unit)."""
    mc = config.min_change_for(kind)
    d = abs(test.delta)
    if d == 0:
        return False
    if s.mode == "step":
        need = math.log1p(mc) - STEP_TOLERANCE * noise.sigma if s.log else mc * abs(test.before)
    elif s.log or s.mode == "rate":
        need = math.log1p(mc)
    else:
        need = mc * abs(test.before)
    floor, minimum = config.abs_floor, config.abs_threshold
    absd = abs(s.to_unit(test.after) - s.to_unit(test.before)) if floor is not None or minimum is not None else 0.0
    if d < need and (floor is None or absd < floor):
        return False
    return minimum is None or absd >= minimum


def scan_new(s: Series, seg_start: int, kind: str, config: DetectorConfig,
             noise: Noise | None = None, opened_from: float | None = None) -> Candidate | None:
    """Look for a new shift in the current segment ``max(seg_start, index0)..end`` of the window.

    ``noise`` is the window's (the online detector's per-block estimate). In a level window of under 35 builds
    the noise is estimated again without the differences that span the located culprit and the segment's start
    (``short_window_noise``) and the culprit located again with it; in one of 35-74 builds a shift that fails
    on the window's estimate is tested again without the culprit's differences (``_second_look``). Culprits
    need ``min_before`` builds of the segment before them; with ``opened_from``, the level (analysis scale) before
    the confirmed change at ``seg_start``, a change part of the way back from that one, or further the same way, is
    looked for closer to it while the segment is young (``early_change``, on its own noise estimate)."""
    found = _scan_segment(s, seg_start, kind, config, noise)
    if found is None and opened_from is not None:
        found = early_change(s, seg_start, kind, config, noise, opened_from, same_way=True)
    return found


def _scan_segment(s: Series, seg_start: int, kind: str, config: DetectorConfig,
                  noise: Noise | None = None) -> Candidate | None:
    """``scan_new`` among the culprits with ``min_before`` builds of the segment before them."""
    k = s.end
    seg_lo = max(seg_start, s.index0)
    n = k - seg_lo + 1
    if s.mode == "step":
        # the step noise needs a few build-to-build steps: with fewer, any step would be infinitely significant
        if n < 2 or s.y.size < MIN_STEP_HISTORY:
            return None
        noise = noise or series_noise(s)
        test = _test_at(s, seg_lo, k, noise)
        zc = critical_z(config.alpha, 1, noise.df, config.sensitivity)
        if abs(test.z) < zc or not passes_gates(test, s, kind, config, noise):
            return None
        return Candidate(k, k, k, test, zc, 1, noise)
    lo = seg_lo + max(config.min_before, n - config.max_after)
    hi = k - config.min_after + 1
    if hi < lo:
        return None
    noise = noise or series_noise(s)
    n_cand = hi - lo + 1
    zc = critical_z(config.alpha, n_cand, noise.df, config.sensitivity)
    best, score, scores = locate(s, seg_lo, lo, hi, noise)
    if not trim_absorbs_shifts(s.y.size, 1) and s.mode == "level":
        noise = short_window_noise(s, noise, (seg_lo, best))
        zc = critical_z(config.alpha, n_cand, noise.df, config.sensitivity)
        best, score, scores = locate(s, seg_lo, lo, hi, noise)
    if abs(score) < 0.6 * zc:
        return None
    test = _test_at(s, seg_lo, best, noise, sustained_from=zc)
    back = backed_out(s, best, k, test, noise, zc, config, seg_lo) if s.mode == "level" else None
    if back is not None:
        # The best culprit started an excursion (a change backed out a few builds later): a lasting change,
        # if any, comes after the backout (back <= k - min_after + 1 = hi); look for it there, at the same
        # critical value (the candidates examined were all of lo..hi).
        lo = back
        best, score, scores = locate(s, seg_lo, lo, hi, noise)
        if abs(score) < 0.6 * zc:
            return None
        test = _test_at(s, seg_lo, best, noise, sustained_from=zc)
    if not confirmable(k - best + 1, config):
        return None
    if abs(test.z) < zc:
        second = _second_look(s, seg_lo, best, noise, n_cand, config)
        if second is None:
            return None
        test, noise, zc = second
    if not test.sustained or not passes_gates(test, s, kind, config, noise):
        return None
    cand = _candidate(lo, best, scores, test, zc, n_cand, noise)
    if s.mode == "rate" and best < k - 1:
        return _rate_culprit_past_edge(s, seg_lo, cand, noise, zc, config)
    return cand


#: Half the chi-square(1) 95% quantile: culprits whose log-likelihood is within this of the best are plausible.
LL_DROP = LR_DROP / 2


def _rate_culprit_past_edge(s: Series, seg_lo: int, cand: Candidate, noise: Noise, zc: float,
                            config: DetectorConfig) -> Candidate:
    """The culprit of a rate change the scan raised, by likelihood: the scan's z statistics favour splits with
    more builds after them, and its culprits stop ``min_after`` builds before the end, while pooled counts make a
    large rate change significant with old-level builds counted after it. So a doubled crash rate was raised a
    build after the change with the culprit one or two builds early (every rate step of a soak run; refined
    only on the next build, after the bisection had started on the wrong range). The culprit is the
    maximum-likelihood split of the pooled counts (``rate_split_loglik``) from the scan's plausible range to
    ``min_after - 1`` builds past it, never the newest build alone (one flaky build there would win), taken
    when the change tested there is significant on its own and the same way, with the splits within
    ``LL_DROP`` of it as the plausible range; the decision to raise is the scan's, unchanged."""
    k = s.end
    a0 = seg_lo - s.index0
    first = cand.first
    upto = min(k - 1, cand.last + config.min_after - 1)
    ll = rate_split_loglik(s.counts[a0:], s.totals[a0:], first - seg_lo, upto - seg_lo)
    j = first + int(ll.argmax())
    if j <= cand.index:
        return cand
    test = _test_at(s, seg_lo, j, noise)
    if test.delta * cand.test.delta <= 0 or abs(test.z) < zc:
        return cand
    near = np.flatnonzero(ll >= ll.max() - LL_DROP)
    f = la = j - first
    while f - 1 in near:
        f -= 1
    while la + 1 in near:
        la += 1
    return Candidate(j, first + f, first + la, test, zc, cand.n_candidates, noise)


def young_segment(seg_start: int, k: int, config: DetectorConfig) -> bool:
    """Whether build ``k`` is one on which ``early_change`` looks for a change in the segment opened at
    ``seg_start``: from the first build that leaves ``min_after`` builds after a culprit ``min_after`` builds into
    the segment, up to ``seg_start + min_before + confirm_after`` (excluded)."""
    return seg_start + 2 * config.min_after - 1 <= k < seg_start + config.min_before + config.confirm_after


def early_change(s: Series, seg_lo: int, kind: str, config: DetectorConfig, noise: Noise | None,
                 opened_from: float, same_way: bool = False, sustained: bool = True) -> Candidate | None:
    """A change at a culprit too close to the one that opened the segment ``seg_lo..end`` for the scan
    (``seg_lo + min_after`` to ``seg_lo + min_before - 1``): part of the way back from the opening change, else,
    with ``same_way``, further the same way; None if neither.

    The shapes: a revert and its reland a few builds later (+20% held twelve builds, its revert, +10% five builds
    on), and a second change the same way a few builds after the first (the revert, then a further -10% five
    builds on). Confirmed on all its builds, the first change was reported as the net of the two and the second
    was raised late or never (no culprit of the segment before ``min_before``, and a window noise the three shifts
    inflate). Planted 5 builds after a revert into 145-150 real excerpts (``bench/eval_planted.py
    --excursion=0.2:12:5``), 22 relands and 37 further -10% steps were found at their culprit without this.

    ``opened_from`` is the level (analysis scale) the segment opened from, and the opening change's sign that of
    the segment's first ``min_after`` builds from it. The split with the largest score in the way looked for among
    every culprit from ``seg_lo + min_after`` leaving ``min_after`` builds after it (``locate`` on the window's
    ``noise``) is a candidate when it lies before ``seg_lo + min_before`` (later, it is the scan's own). It is
    tested on the noise estimated without the differences that span the segment's start and the candidate (two
    known shifts, which in a window holding a third read as correlated noise: a 2% page load read 4.5% with rho
    0.8), at the critical z of a scan over those culprits, and it is a change when it holds there, it is not
    backed out itself, it is ``sustained`` (the review that only asks where the opening change's builds end
    passes False), it passes the gates, and:

    * back the other way: its level after lies beyond ``OLD_LEVEL_SHARE`` of the opening change from
      ``opened_from`` (nearer, it is the opening change backed out: an excursion, which ``backed_out`` and the
      review judge);
    * the same way: every build between the two culprits lies nearer their own level than either neighbour's
      (``_one_level_between``). A same-way split is also what one change whose culprit was located a build or
      two early makes, or one spread over builds, or a flaky build before it. The scan always asks for it; the
      review of an open change only when that change is not a drift (``online``).

    Looked for only while the segment is young (``young_segment``): by then a change with its ``min_after``
    builds is in, and later the scan's own culprits take over."""
    k = s.end
    r = config.min_after
    a = seg_lo - s.index0
    if s.mode != "level" or a < 0 or not young_segment(seg_lo, k, config):
        return None
    opened = fast_median(s.y[a:a + r]) - opened_from
    if opened == 0:
        return None
    sign = 1 if opened > 0 else -1
    lo, hi = seg_lo + r, k - r + 1
    noise = noise or series_noise(s)
    _, _, scores = locate(s, seg_lo, lo, hi, noise)
    for way in (-1, 1) if same_way else (-1,):
        found = _early_change(s, seg_lo, kind, config, noise, opened_from, sign, way, lo, scores, sustained)
        if found is not None:
            return found
    return None


def _early_change(s: Series, seg_lo: int, kind: str, config: DetectorConfig, noise: Noise, opened_from: float,
                  sign: int, way: int, lo: int, scores: np.ndarray, sustained: bool) -> Candidate | None:
    """``early_change`` back from the opening change of sign ``sign`` (``way`` -1) or further (1), among the
    culprits from ``lo`` with split ``scores`` on the window's ``noise``."""
    b = best_split(scores, way * sign)
    best = lo + b
    if best >= seg_lo + config.min_before:
        return None
    n_cand = scores.size
    if scores[b] * sign * way < 0.6 * critical_z(config.alpha, n_cand, noise.df, config.sensitivity):
        return None  # the scan's own screen, on the window's noise (which the two shifts inflate, if anything)
    noise = series_noise(s, (seg_lo, best))
    zc = critical_z(config.alpha, n_cand, noise.df, config.sensitivity)
    test = _test_at(s, seg_lo, best, noise, sustained_from=zc)
    if test.delta * sign * way <= 0 or abs(test.z) < zc:
        return None
    if way < 0:
        near = opened_from + OLD_LEVEL_SHARE * (test.before - opened_from)
        if (test.after - near) * sign <= 0:
            return None
    elif not _one_level_between(s, seg_lo, best, opened_from, test):
        return None
    k = s.end
    if backed_out(s, best, k, test, noise, zc, config, seg_lo) is not None:
        return None
    if (sustained and not test.sustained) or not passes_gates(test, s, kind, config, noise):
        return None
    return _candidate(lo, best, scores, test, zc, n_cand, noise)


def _one_level_between(s: Series, seg_lo: int, best: int, opened_from: float, test: ShiftTest) -> bool:
    """Whether every build ``seg_lo..best-1`` lies nearer the level they make (``test.before``) than the level
    before ``seg_lo`` (``opened_from``) or the one from ``best`` (``test.after``): a level of their own between
    two changes the same way, not one change whose culprit was located a build or two early, spread over builds,
    or a flaky build before it (their mean lies between the two levels as well)."""
    y = s.y[seg_lo - s.index0:best - s.index0]
    lo, hi = sorted(((opened_from + test.before) / 2, (test.before + test.after) / 2))
    return bool(np.all((y > lo) & (y < hi)))


def _second_look(s: Series, seg_lo: int, best: int, noise: Noise, n_cand: int,
                 config: DetectorConfig) -> tuple[ShiftTest, Noise, float] | None:
    """The test at ``best`` with the noise estimated without the differences spanning it, in a level window of
    35-74 builds (``short_window_noise``), when that passes where the window's own estimate did not: (test,
    noise, critical z), else None.

    A moderate shift does not make the extreme differences the trim drops: its four lag-4 differences raise the
    spread of the rest and read as autocorrelation (a real -5% step at build 28 with white noise before it:
    rho 0.2 -> 0.55 once it is in the window, alerted 36 builds late). The culprit is located, and an excursion
    told from a step, on the window's own estimate as before; only the verdict takes the second estimate. A
    culprit whose next builds went back for ``min_after`` builds (``_return_run``), even where the window's
    estimate found that return not significant, gets no second look: the estimate keeps the other shifts, and
    an excursion withdrawn as such was raised again on it, stayed open and hid the step after it."""
    if not trim_absorbs_shifts(s.y.size, 1):
        return None
    own = short_window_noise(s, noise, (seg_lo, best))
    if own is noise:
        return None
    zc = critical_z(config.alpha, n_cand, own.df, config.sensitivity)
    test = _test_at(s, seg_lo, best, own, sustained_from=zc)
    if abs(test.z) < zc or _return_run(s, best, s.end, test, config) is not None:
        return None
    return test, own, zc


def backed_out(s: Series, c: int, k: int, test: ShiftTest, noise: Noise, zc: float,
               config: DetectorConfig, seg_lo: int) -> int | None:
    """First build of the backout when the change at ``c`` was backed out within ``BACKOUT_WITHIN`` builds,
    else None.

    Backed out, any of three ways:

    * significantly: the first ``R = min_after`` consecutive builds ``j..j+R-1`` (``c < j <= c + BACKOUT_WITHIN``,
      all up to build ``k``) on the before side of the midpoint of the test's two levels (``_return_run``) differ
      from the excursion ``c..j-1`` by at least the critical z, back towards the level before ``c``
      (``shift_test`` of the excursion against the run, with the series' AR(1) noise). Under a lasting shift such
      a run is a ``zc``-sd event, as rare as any false alarm;
    * by a return before a later step the same way (``_return_before_step``): builds back at the old level (2+,
      or one with the excursion off the later level), then ``min_after`` or more builds beyond them by
      ``Z_RETURN``; until those are in, an open change is not confirmed (``backout_pending``);
    * by the old level's return, in a window where the noise estimate's trim absorbs two shifts
      (``trim_absorbs_shifts(n, 2)``, 75+ builds: the excursion's own two do not inflate it): a run of ``R``
      builds on the before side of the midpoint between the level before ``c`` and the excursion's median
      (``_excursion_return``), and the ``LASTING_BUILDS`` builds from it neither hold the change against the
      segment before ``c`` (``seg_lo..c-1``) even one-sidedly at ``Z_WITHDRAW`` nor lie, as one level, further
      than ``OLD_LEVEL_SHARE`` of the excursion from the level before it. Until those builds are in, an open
      change is not confirmed (``backout_pending``). Taken as a lasting change instead, an excursion whose
      backout was too short or too small to be significant was confirmed on its own builds plus the first few
      after it, and a real step that followed was then tested against those few builds only and missed
      (mozilla-beta/4975432: a 4-build -14% excursion at 133, a confirmed -11% step at 149).

    A change landed and backed out a few builds later is an excursion, not a new level; taking the whole
    post-culprit segment as one level put a real step right after the backout on the excursion's culprit (or
    lost it).
    """
    sign = 1.0 if test.after > test.before else -1.0
    side = _before_side(s, c, k, test, config)
    at = _return_run(s, c, k, test, config, side)
    if at is not None and _test_at(s, c, at, noise, hi_excl=at + config.min_after).z * sign <= -zc:
        return at
    at = _return_before_step(s, c, k, test, noise, config, seg_lo, side)
    if at is not None:
        return at
    if not trim_absorbs_shifts(s.y.size, 2):
        return None
    run = _excursion_return(s, c, k, test.before, sign, config)
    if run is None or run[0] + LASTING_BUILDS - 1 > k:
        return None
    j, excursion = run
    lasting = shift_test(s.y[seg_lo - s.index0:c - s.index0], s.y[j - s.index0:j + LASTING_BUILDS - s.index0], noise,
                         sustained_from=math.inf)
    near = test.before + OLD_LEVEL_SHARE * (excursion - test.before)
    return j if lasting.z * sign < Z_WITHDRAW and (lasting.after - near) * sign < 0 else None


def backout_at(s: Series, seg_lo: int, c: int, config: DetectorConfig,
               reviewed: ShiftTest | None = None) -> int | None:
    """First build of the backout of a level change at ``c`` (``backed_out``, all builds of ``s`` in, the segment
    from ``seg_lo``), else None.

    The sides of the levels' midpoint are read twice: with the levels of the whole window, where a step after the
    return, the same way, lies on the change's side (``_return_before_step``), and with ``reviewed``, the levels
    a review on fewer builds found, where a later change the other way continues the return (``_return_run``).
    For hindsight (``hindsight._backed_out_before``), whose review of a proposal ends at the next change."""
    if s.mode != "level":
        return None
    noise = series_noise(s)
    zc = critical_z(config.alpha, _review_candidates(s.end, seg_lo, config), noise.df, config.sensitivity)
    for test in (_test_at(s, seg_lo, c, noise), reviewed):
        at = None if test is None else backed_out(s, c, s.end, test, noise, zc, config, seg_lo)
        if at is not None:
            return at
    return None


def _return_before_step(s: Series, c: int, k: int, test: ShiftTest, noise: Noise, config: DetectorConfig,
                        seg_lo: int, side: list[bool]) -> int | None:
    """First build ``j`` of a return to the old level between an excursion and a later step the same way, else None.

    The builds ``c..j-1`` (``c < j <= c + BACKOUT_WITHIN``) are the excursion, ending on the change's side of the
    midpoint of the test's two levels; the return ``j..c2-1`` holds one or more builds on the before side of it
    (``_returns``); the builds from ``c2`` on (``min_after`` or more, up to ``k``) are the lasting change. It is a
    return when the lasting change differs from the return by ``Z_RETURN`` or more, in the change's direction
    (``shift_test`` of the return against it, AR(1) noise), and the return is not partway to the lasting change: its
    median lies no further than ``OLD_LEVEL_SHARE`` of the lasting change beyond the level before ``c`` towards it,
    or it is not above that level in the change's direction by z ``Z95`` (against the segment before ``c``; a memory
    series whose builds repeat to 0.1% tells every return from the old level by z). One-sided: builds back beyond
    the old level, away from the change, are a return too (a real page load's two builds back 1-2% under its level,
    z -2.5, left the culprit on the excursion). A return of fewer than ``RETURN_MIN`` builds counts only after an
    excursion wholly on the change's side that differs from the lasting change by ``Z_RETURN`` too: one build back
    inside a change that held the excursion's level is a dip, not a backout (heavy-tailed real builds dip often).
    The later step is then the change, not the excursion's culprit. A one-sided choice between two places of a
    change already found, not a detection, so not at the scan's critical z: the mean of a step scan drew the culprit
    onto an excursion of 2-5 builds at the step's side when only one to four builds of the old level separated them
    (planted into real series of 170 builds, +20% for 2-5 builds, 1-2 builds back, then +10%: the culprit on the
    excursion 99-102 times in 138, on the step 4-10), and the backout test of the excursion against a return run of
    ``min_after`` builds at the scan's critical z (``_return_run``) needs three builds back and rarely holds for
    two.
    """
    r = config.min_after
    sign = 1.0 if test.after > test.before else -1.0
    y, i0 = s.y, s.index0
    for j, c2 in _returns(side, c, k):
        if k - c2 + 1 < r:
            continue
        ret, after = y[j - i0:c2 - i0], y[c2 - i0:k + 1 - i0]
        # cheapest refusals first: this runs on every scan and review whose builds dip once
        if (c2 - j < RETURN_MIN
                and abs(shift_test(y[c - i0:j - i0], after, noise, sustained_from=math.inf).z) < Z_RETURN):
            continue
        step = shift_test(ret, after, noise, sustained_from=math.inf)
        if step.z * sign < Z_RETURN:
            continue
        if ((list_median(ret.tolist()) - test.before) * sign > OLD_LEVEL_SHARE * abs(step.after - test.before)
                and shift_test(y[seg_lo - i0:c - i0], ret, noise, sustained_from=math.inf).z * sign >= Z95):
            continue
        return j
    return None


def _returns(side: list[bool], c: int, k: int) -> Iterator[tuple[int, int]]:
    """``(j, c2)`` for each ``j`` (``c < j <= c + BACKOUT_WITHIN``) that starts ``RETURN_MIN`` or more builds on the
    before side of the midpoint of the test's two levels after a build on the change's side, or one such build
    after an excursion wholly on the change's side; ``c2`` is the first build after them on the change's side
    again, within ``side`` (``k + 1`` while there is none; a longer return is a backout the other rules judge).
    ``side``: ``_before_side``'s."""
    end = c + len(side) - 1
    for j in range(1, min(BACKOUT_WITHIN, len(side) - 1) + 1):
        if side[j - 1] or not side[j]:
            continue
        c2 = j + 1
        while c2 < len(side) and side[c2]:
            c2 += 1
        if c2 == len(side) and end < k:
            return  # back to the end of ``side``: a backout, which the other rules judge
        if c2 - j >= RETURN_MIN or not any(side[:j]):  # one build back: only the excursion's first return
            yield c + j, c + c2


def _excursion_return(s: Series, c: int, k: int, before: float, sign: float,
                      config: DetectorConfig) -> tuple[int, float] | None:
    """``(j, level)``: the first ``j`` (``c < j <= c + BACKOUT_WITHIN``) whose ``min_after`` builds ``j..`` (all up
    to ``k``) lie on the before side of the midpoint between ``before`` and ``level``, the median of the excursion
    ``c..j-1``, which lies on the change's side of ``before``; else None. Unlike ``_return_run``'s, this midpoint
    is fixed once the run is in: builds arriving later do not move it, so the judgement waits for them steadily."""
    r = config.min_after
    last = min(c + BACKOUT_WITHIN, k - r + 1)
    if last <= c:
        return None
    # a handful of builds, on every scan and review: plain Python avoids numpy's per-call cost on so few values
    seg = s.y[c - s.index0:last + r - s.index0].tolist()
    for n in range(1, last - c + 1):
        exc = list_median(seg[:n])
        if (exc - before) * sign <= 0:
            continue
        mid = 0.5 * (before + exc)
        if all((v - mid) * sign < 0 for v in seg[n:n + r]):
            return c + n, exc
    return None


def backout_pending(s: Series, c: int, k: int, test: ShiftTest, config: DetectorConfig) -> bool:
    """Whether the builds after ``c`` have the shape of a backout (``_excursion_return``) that ``backed_out``
    will judge by the old level's return once ``LASTING_BUILDS`` builds from the run on are in (windows of 75+
    builds), or of a return followed by fewer than ``min_after`` builds back on the change's side (``_returns``),
    which ``_return_before_step`` judges once they are in."""
    if s.mode != "level":
        return False
    if any(c2 <= k < c2 + config.min_after - 1 for _, c2 in _returns(_before_side(s, c, k, test, config), c, k)):
        return True  # a step after a return: ``_return_before_step`` judges it once ``min_after`` builds are in
    if not trim_absorbs_shifts(s.y.size, 2):
        return False
    run = _excursion_return(s, c, k, test.before, 1.0 if test.after > test.before else -1.0, config)
    return run is not None and k < run[0] + LASTING_BUILDS - 1


def _return_run(s: Series, c: int, k: int, test: ShiftTest, config: DetectorConfig,
                side: list[bool] | None = None) -> int | None:
    """First build of the first ``min_after`` consecutive builds ``j..`` (``c < j <= c + BACKOUT_WITHIN``, all
    up to build ``k``) on the before side of the midpoint of the test's two levels, else None: the shape of a
    backout, before its significance is tested. ``side``: ``_before_side``'s, when the caller has it."""
    r = config.min_after
    last = min(k - r + 1, c + BACKOUT_WITHIN)
    if last <= c:
        return None
    side = _before_side(s, c, k, test, config) if side is None else side
    # builds c+1 .. last+r-1 (the only ones a run can use): side[1..]
    for j in range(1, last - c + 1):
        if all(side[j:j + r]):
            return c + j
    return None


def _before_side(s: Series, c: int, k: int, test: ShiftTest, config: DetectorConfig) -> list[bool]:
    """Whether each build ``c..min(k, c + BACKOUT_WITHIN + max(BACKOUT_WITHIN, min_after))`` lies on the before
    side of the midpoint of the test's two levels: the builds the backout rules read (``_return_run``,
    ``_returns``)."""
    sign = 1.0 if test.after > test.before else -1.0
    mid = 0.5 * (test.before + test.after)
    end = min(k, c + BACKOUT_WITHIN + max(BACKOUT_WITHIN, config.min_after))
    # a handful of builds, on every scan and review: plain Python avoids numpy's per-call cost on so few values
    return [(v - mid) * sign < 0 for v in s.y[c - s.index0:end + 1 - s.index0].tolist()]


def confirm_hold(m: int) -> int:
    """Builds an alert raised ``m`` builds after its culprit must wait before it can be confirmed."""
    return max(CONFIRM_HOLD, m // 2)


def confirmable(m: int, config: DetectorConfig) -> bool:
    """Whether an alert raised ``m`` builds after its culprit can still be confirmed before its post-change
    segment reaches ``max_after`` builds (where an unconfirmed alert is withdrawn). A later one would be
    raised only to be withdrawn a few builds on: noise for its owners, and no finding kept."""
    return m + confirm_hold(m) <= config.max_after


def _review_candidates(k: int, seg_lo: int, config: DetectorConfig, early: bool = False) -> int:
    """Culprits an open change's review (its segment from ``seg_lo``, builds up to ``k``) is tested among, for its
    critical z: those the scan could have raised it at (``early``: those of ``early_change``)."""
    first = 2 * config.min_after - 1 if early else config.min_before
    return max(1, min(config.max_after, k - seg_lo + 1 - first))


def review_open(s: Series, prev_start: int, cp: ChangePoint, kind: str, config: DetectorConfig,
                hi_excl: int | None = None, noise: Noise | None = None, min_hold: int | None = None,
                same_way: bool = False) -> tuple[str, Candidate | None]:
    """Re-test an open (unconfirmed) change point with the builds that arrived since.

    Returns ``("withdraw", None)`` when the evidence vanished, ``("confirm", cand)`` once enough builds
    (``min_hold``, default ``confirm_after``) hold the new level (also when they hold it up to a later change of
    their own, ``min_after`` of them before an ``early_change``: the same way only with ``same_way``), else
    ``("keep", cand)`` with the refined culprit.
    """
    k = s.end if hi_excl is None else hi_excl - 1
    seg_lo = max(prev_start, s.index0)
    # A change within min_before builds of the confirmed one before it (an early change) is judged as it was
    # raised: on the noise without the differences spanning both, among the culprits from min_after builds in.
    # On the window's own estimate, which the shifts inflate, a raised reland sat open for dozens of builds.
    early = s.mode == "level" and 0 < prev_start and s.index0 <= prev_start and cp.index < seg_lo + config.min_before
    noise = series_noise(s, (seg_lo, cp.index)) if early else noise or series_noise(s)
    sign = 1 if cp.after > cp.before else -1
    if s.mode == "step":
        return _review_step(s, seg_lo, cp, kind, config, k, hi_excl, noise, sign)
    r = config.refine_radius
    lo = max(cp.index - r, seg_lo + 2)
    hi = min(cp.index + r, k - config.min_after + 1)
    if hi < lo:
        return "keep", None
    n_cand = _review_candidates(k, seg_lo, config, early)
    zc = critical_z(config.alpha, n_cand, noise.df, config.sensitivity)
    best, _, scores = locate(s, seg_lo, lo, hi, noise, sign, hi_excl)
    test = _test_at(s, seg_lo, best, noise, hi_excl)
    back = backed_out(s, best, k, test, noise, zc, config, seg_lo) if s.mode == "level" else None
    if back is not None:
        # The culprit is looked for after the backout. An alert raised after it keeps its place there; one whose
        # own culprit started the excursion is withdrawn unless a lasting change after the backout holds at the
        # critical z (withdrawn regardless, an alert raised at such a step and refined back onto the excursion
        # was raised, refined and withdrawn again build after build, or the step never alerted).
        excursion = cp.index < back
        lo = max(lo, back)
        if hi < lo:  # hindsight: a window that ends at the next change leaves no admissible culprit there
            return ("withdraw" if excursion else "keep"), None
        best, _, scores = locate(s, seg_lo, lo, hi, noise, sign, hi_excl)
        test = _test_at(s, seg_lo, best, noise, hi_excl)
        if excursion and test.z * sign < zc:
            return "withdraw", None
    cand = _candidate(lo, best, scores, test, zc, n_cand, noise)
    if test.z * sign < Z_WITHDRAW and not _held_without_span(s, seg_lo, best, noise, sign, hi_excl):
        return "withdraw", None
    m = k - best + 1
    hold = confirm_hold(cp.detected_at - cp.index + 1)
    held = k - cp.detected_at >= hold or hi_excl is not None
    if m >= (config.confirm_after if min_hold is None else min_hold) and held:
        if hi_excl is None and young_segment(best, k, config) and not backout_pending(s, best, k, test, config):
            # A change part of the way back a few builds on (a reland after its revert), or further the same way
            # (``same_way``: not for an open drift), ends the open change's builds there: confirmed on all of them
            # it was reported as the net of the two. Where those few builds do not confirm it on their own, it is
            # confirmed below on all its builds, at the net size: confirmed at the few builds' size instead, it
            # carried their z and p-value (as low as 2.2 and 0.23) into a confirmed alert.
            nxt = early_change(s, best, kind, config, noise, test.before, same_way, sustained=False)
            if nxt is not None:
                verdict, before_next = review_open(s, prev_start, cp, kind, config, hi_excl=nxt.index,
                                                   noise=noise, min_hold=config.min_after)
                if verdict == "confirm":
                    return verdict, before_next
        if (abs(test.z) >= zc and passes_gates(test, s, kind, config, noise)
                and (hi_excl is not None or not backout_pending(s, best, k, test, config))):
            return "confirm", cand
    if m >= config.confirm_after and held and hi_excl is None:
        # A second change after the culprit (often its revert) blurs the post-change level, so the open
        # change neither confirms nor withdraws, and no new change is scanned while it is open. When the
        # builds after it hold a change of their own, judge the open one on the builds before that. A change
        # the other way only pulls the mean of the builds after the open one back towards the old level, so
        # what does not confirm on the builds before it never will: it is withdrawn, and the next change
        # raised. Left open it held the next one back until its own evidence had drained away (a real page
        # load's labelled -4% step, raised 43 builds after its culprit behind a +3.6% alert never confirmed).
        # A change the same way adds to the open one's evidence, which then confirms on all the builds. In a
        # window too short for the trim, one that confirms without the two shifts' differences stays open.
        nxt = scan_new(s, best, kind, config, noise)
        if nxt is not None and nxt.index - best >= config.confirm_after:
            verdict, before_next = review_open(s, prev_start, cp, kind, config, hi_excl=nxt.index, noise=noise)
            if verdict == "confirm":
                return verdict, before_next
            if (nxt.test.delta > 0) != (sign > 0) and not _confirms_without_span(s, seg_lo, best, sign, nxt.index,
                                                                                 noise, config):
                return "withdraw", None
    if m >= config.max_after:
        return "withdraw", None
    return "keep", cand


def _without_span(s: Series, seg_lo: int, best: int, noise: Noise, hi_excl: int | None) -> tuple[Noise, float] | None:
    """The noise estimated without the differences spanning the culprit ``best`` (and ``hi_excl``, the end of the
    tested builds), in a window too short for the trim to absorb them (``short_window_noise``), and the z of the
    test at ``best`` with it; None where the window keeps its own estimate."""
    own = short_window_noise(s, noise, (seg_lo, best, hi_excl))
    return None if own is noise else (own, _test_at(s, seg_lo, best, own, hi_excl).z)


def _held_without_span(s: Series, seg_lo: int, best: int, noise: Noise, sign: int, hi_excl: int | None) -> bool:
    """Whether an open level change still holds (one-sided z >= ``Z_WITHDRAW``) with the noise estimated
    without the differences spanning it (``_without_span``): an estimate ``scan_new`` may have raised it with.
    The window's own estimate, which the change inflates there, confirms it (the stricter judgement); it must
    not withdraw what the change itself hid (a raise, a withdrawal and the same raise again a few builds on)."""
    own = _without_span(s, seg_lo, best, noise, hi_excl)
    return own is not None and own[1] * sign >= Z_WITHDRAW


def _confirms_without_span(s: Series, seg_lo: int, best: int, sign: int, end_excl: int, noise: Noise,
                           config: DetectorConfig) -> bool:
    """Whether an open level change confirms on its builds before ``end_excl`` (a later change) with the noise
    estimated without the differences that span it and that change (``_without_span``). There the two shifts
    inflate the window's own estimate, which may then fail a large change it would confirm once the window is
    longer (a real -26% memory step, a +36% one 33 builds on, in a window of 43 builds): such a change stays open
    rather than be withdrawn for the next one."""
    own = _without_span(s, seg_lo, best, noise, end_excl)
    if own is None:
        return False
    zc = critical_z(config.alpha, _review_candidates(end_excl - 1, seg_lo, config), own[0].df, config.sensitivity)
    return own[1] * sign >= zc


def _review_step(s: Series, seg_lo: int, cp: ChangePoint, kind: str, config: DetectorConfig, k: int,
                 hi_excl: int | None, noise: Noise, sign: int) -> tuple[str, Candidate | None]:
    """Review of an open size step (deterministic window).

    A change backed out a few builds later (a build back at the pre-change level) is withdrawn: it was an
    excursion. A new significant step on the newest build while the alert is open confirms the open one on
    the builds before it (it held until the next change), so that the new step can be raised on the same
    build; before this, a real step right after an excursion was absorbed into the excursion's alert.
    """
    c = cp.index
    a = c - s.index0
    if a - 1 < 0:
        return "keep", None
    zc = critical_z(config.alpha, 1, noise.df, config.sensitivity)
    y = s.y
    end = k - s.index0
    if end > a:
        # back at the pre-change level: within the creep, or a quarter of the step (a backout restores the
        # old artefact up to the commits that landed meanwhile)
        tol = max(STEP_TOLERANCE * noise.sigma, 0.25 * abs(float(y[a] - y[a - 1])))
        if bool(np.any(np.abs(y[a + 1:end + 1] - y[a - 1]) <= tol)):
            return "withdraw", None
    hi = hi_excl
    if hi_excl is None and end > a:
        newest = step_test(float(y[end - 1]), float(y[end]), noise)
        if abs(newest.z) >= zc and passes_gates(newest, s, kind, config, noise):
            hi = k  # levels of the open alert from the builds before the new step
    test = _test_at(s, seg_lo, c, noise, hi)
    held = test.delta * sign > 0 and abs(test.z) >= zc and passes_gates(test, s, kind, config, noise)
    if not held:
        return "withdraw", None
    cand = Candidate(c, c, c, test, zc, 1, noise)
    return ("confirm" if k - c + 1 >= STEP_CONFIRM or hi != hi_excl else "keep"), cand


def to_change_point(cand: Candidate, s: Series, lower_is_better: bool, detected_at: int) -> ChangePoint:
    t = cand.test
    before, after = s.to_unit(t.before), s.to_unit(t.after)
    if s.log or s.mode == "rate":
        rel = math.expm1(t.delta)
        bci = (s.to_unit(t.before - Z95 * t.se_before), s.to_unit(t.before + Z95 * t.se_before))
        aci = (s.to_unit(t.after - Z95 * t.se_after), s.to_unit(t.after + Z95 * t.se_after))
    else:
        rel = t.delta / abs(t.before) if t.before != 0 else math.copysign(1.0, t.delta)
        bci = (t.before - Z95 * t.se_before, t.before + Z95 * t.se_before)
        aci = (t.after - Z95 * t.se_after, t.after + Z95 * t.se_after)
    up = t.delta > 0
    direction = "regression" if up == lower_is_better else "improvement"
    z = t.z if math.isfinite(t.z) else math.copysign(1e12, t.z)
    return ChangePoint(
        index=cand.index, first_index=cand.first, last_index=cand.last, direction=direction,
        rel_change=float(rel), abs_change=float(after - before), before=float(before), after=float(after),
        before_ci=(float(bci[0]), float(bci[1])), after_ci=(float(aci[0]), float(aci[1])),
        p_value=p_value(t.z, cand.noise.df, cand.n_candidates), test=t.test, detected_at=detected_at,
        z=float(z),
    )
