"""Search strategy: where, inside a segment, is the most likely single level shift?

A scan computes, for every admissible split ``j`` of a segment (before = ``seg[:j]``, after = ``seg[j:]``),
the standardized difference of the two means (the Gaussian GLR statistic for one mean shift, as in binary
segmentation, CUSUM and Perfherder's t-test), in O(n) with cumulative sums. It only *locates* the shift; the
decision uses the robust tests of :mod:`.statistics`. To keep one flaky build from dragging the location,
values are winsorized at ``running median of 3 +- 3 sigma`` before scanning.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .statistics import RATE_OFFSET

WINSOR = 3.0
LR_DROP = 3.84  # chi^2_1 95% quantile: culprits whose squared statistic is within this of the best


def running_median3(x: np.ndarray) -> np.ndarray:
    """Median of each value and its two neighbours (ends use their one neighbour twice).

    A running median of 3 removes a one-build spike but follows a level step exactly, so clipping
    around it tames flaky builds without flattening the shift being located (clipping around the
    segment's median would clip every post-shift value and blur the culprit).
    """
    padded = np.concatenate(([x[1]], x, [x[-2]]))
    a, b, c = padded[:-2], padded[1:-1], padded[2:]
    # median(a, b, c) = max(min(a, b), min(max(a, b), c)): elementwise, no sort.
    return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))


def split_scores(seg: np.ndarray, lo: int, hi: int, sigma: float) -> np.ndarray:
    """``T[j - lo] = (mean(seg[j:]) - mean(seg[:j])) / sqrt(1/(n-j) + 1/j)`` for ``j`` in ``lo..hi``.

    Units are those of ``seg`` (divide by sigma for a z value). ``1 <= lo <= hi <= n - 1``.
    """
    n = seg.size
    if sigma > 0 and n >= 3:
        center = running_median3(seg)
        x = np.minimum(np.maximum(seg, center - WINSOR * sigma), center + WINSOR * sigma)
    else:
        x = seg
    cs = x.cumsum()  # np.cumsum without its wrapper
    total = cs[-1]
    n_b, n_a, scale = _split_weights(n, lo, hi)
    sum_b = cs[lo - 1:hi]
    mean_b = sum_b / n_b
    mean_a = (total - sum_b) / n_a
    return (mean_a - mean_b) / scale


@lru_cache(maxsize=4096)
def _split_weights(n: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(j, n - j, sqrt(1/(n - j) + 1/j))`` for ``j`` in ``lo..hi`` as floats: a window's scans repeat the same few
    (n, lo, hi), and building these took a third of a scan's time (the same values, so the same scores)."""
    j = np.arange(lo, hi + 1)
    out = j.astype(float), (n - j).astype(float), np.sqrt(1.0 / (n - j) + 1.0 / j)
    for a in out:
        a.flags.writeable = False  # shared by every caller of the cache
    return out


def rate_split_scores(counts: np.ndarray, totals: np.ndarray, lo: int, hi: int, phi: float) -> np.ndarray:
    """Log rate-ratio z statistics of pooled counts for splits ``lo..hi`` (see ``rate_shift_test``)."""
    n = counts.size
    cc = np.cumsum(counts)
    ct = np.cumsum(totals)
    j = np.arange(lo, hi + 1)
    cb, tb = cc[j - 1], ct[j - 1]
    ca, ta = cc[-1] - cb, ct[-1] - tb
    lb = np.log((cb + RATE_OFFSET) / np.maximum(tb, 1.0))
    la = np.log((ca + RATE_OFFSET) / np.maximum(ta, 1.0))
    var = 1.0 / (cb + RATE_OFFSET) + 1.0 / (ca + RATE_OFFSET) + phi * (1.0 / j + 1.0 / (n - j))
    return (la - lb) / np.sqrt(var)


def rate_split_loglik(counts: np.ndarray, totals: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Poisson profile log-likelihood of one rate change at each split ``j`` in ``lo..hi`` (``1 <= lo``,
    ``hi <= n - 1``), up to a constant: ``L(j) = C_b log(C_b / T_b) + C_a log(C_a / T_a)`` with pooled counts
    ``C`` and exposures ``T`` before and after ``j`` (``0 log 0 = 0``).

    Its argmax is the maximum-likelihood culprit of a single rate change. Over-dispersion between builds scales
    a quasi-likelihood by a constant, which leaves the argmax where it is; the z statistics of
    ``rate_split_scores`` do not locate: their variance falls as a split pools more builds, which favours a
    split with more builds after it over the change itself."""
    cc = np.cumsum(counts)
    ct = np.cumsum(totals)
    j = np.arange(lo, hi + 1)
    cb, tb = cc[j - 1], np.maximum(ct[j - 1], 1.0)
    ca, ta = cc[-1] - cb, np.maximum(ct[-1] - ct[j - 1], 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        part_b = np.where(cb > 0, cb * np.log(cb / tb), 0.0)
        part_a = np.where(ca > 0, ca * np.log(ca / ta), 0.0)
    return part_b + part_a


def best_split(scores: np.ndarray, sign: int = 0) -> int:
    """Offset of the strongest split (of the given sign if ``sign`` is +1/-1)."""
    # the array methods: np.argmax/np.argmin are Python wrappers around them
    if sign > 0:
        return int(scores.argmax())
    if sign < 0:
        return int(scores.argmin())
    return int(np.abs(scores).argmax())


def plausible_range(scores: np.ndarray, best: int) -> tuple[int, int]:
    """Contiguous offsets around ``best`` whose squared statistic is within ``LR_DROP`` of the maximum."""
    s2 = scores * scores
    floor = s2[best] - LR_DROP
    sign = np.sign(scores[best])
    lo = best
    while lo > 0 and s2[lo - 1] >= floor and np.sign(scores[lo - 1]) == sign:
        lo -= 1
    hi = best
    while hi < scores.size - 1 and s2[hi + 1] >= floor and np.sign(scores[hi + 1]) == sign:
        hi += 1
    return lo, hi
