"""Each statistic against scipy or a textbook value."""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from alerts.detection import Point, detect_online
from alerts.detection.statistics import (
    Noise,
    ar1_from_ratio,
    block_sum_corr,
    contrast_var,
    critical_z,
    effective_candidates,
    estimate_noise,
    estimate_rate_noise,
    estimate_step_noise,
    fast_median,
    flaky_builds,
    is_sustained,
    mad_sigma,
    median_var_factor,
    noise_contrast,
    p_value,
    rate_shift_test,
    robust_location,
    shift_test,
    trimmed_mean_variance_factor,
    trimmed_scale,
    without_flaky,
)


def _ar1_cov(n: int, rho: float) -> np.ndarray:
    i = np.arange(n)
    return rho ** np.abs(i[:, None] - i[None, :])


@given(arrays(np.float64, st.integers(1, 60), elements=st.floats(-1e6, 1e6)))
def test_it_computes_the_same_median_as_numpy(x):
    kept = x.copy()
    x.flags.writeable = False  # stored runs reach the detector as read-only views
    assert fast_median(x) == pytest.approx(float(np.median(x)), rel=1e-12, abs=1e-9)
    assert np.array_equal(x, kept)  # partitions a copy, never the caller's array


def test_it_matches_scipys_normal_consistent_mad():
    x = np.random.default_rng(0).normal(3, 2, 501)
    assert mad_sigma(x) == pytest.approx(stats.median_abs_deviation(x, scale="normal"), rel=1e-9)


def test_it_knows_the_variance_of_small_medians():
    assert median_var_factor(1) == 1.0 and median_var_factor(2) == 1.0
    assert median_var_factor(3) == pytest.approx(1.346, abs=0.01)  # 3 * 0.4487 (textbook)
    assert median_var_factor(10_001) == pytest.approx(math.pi / 2, rel=1e-3)


@pytest.mark.parametrize("rho", [0.0, 0.3, 0.7])
@pytest.mark.parametrize("a,b", [(1, 1), (3, 20), (8, 60)])
def test_it_computes_ar1_contrast_variance_like_the_covariance_matrix(rho, a, b):
    n = a + b
    w = np.concatenate([np.full(b, -1.0 / b), np.full(a, 1.0 / a)])
    assert contrast_var(a, b, rho) == pytest.approx(float(w @ _ar1_cov(n, rho) @ w), rel=1e-9)
    assert block_sum_corr(a, rho) == pytest.approx(float(_ar1_cov(a, rho).sum()), rel=1e-9)


def test_it_reduces_to_the_textbook_two_sample_variance_without_correlation():
    assert contrast_var(5, 20, 0.0) == pytest.approx(1 / 5 + 1 / 20)
    assert noise_contrast(Noise(1.0, 0.5, 50, ar_share=0.0), 5, 20) == pytest.approx(1 / 5 + 1 / 20)


def test_it_takes_critical_values_and_p_values_from_student_t():
    n_eff = effective_candidates(64)
    assert n_eff == pytest.approx(7.0)
    z = critical_z(1e-4, 64, 40.0)
    assert z == pytest.approx(stats.t.isf(1e-4 / (2 * n_eff), 40), rel=1e-6)
    assert critical_z(1e-4, 1, 1e12) == pytest.approx(stats.norm.isf(0.5e-4), rel=1e-6)
    assert p_value(3.0, 40.0) == pytest.approx(2 * stats.t.sf(3.0, 40), rel=1e-9)
    assert critical_z(1e-4, 1, 40.0, sensitivity=2.0) == pytest.approx(critical_z(1e-4, 1, 40.0) / 2)


def test_it_estimates_iid_noise_without_autocorrelation():
    rng = np.random.default_rng(1)
    est = [estimate_noise(rng.normal(0, 0.02, 96)) for _ in range(200)]
    assert np.median([e.sigma for e in est]) == pytest.approx(0.02, rel=0.08)
    assert np.median([e.rho for e in est]) < 0.1


def test_it_estimates_ar1_correlation_of_the_runner_effect():
    rng = np.random.default_rng(2)
    rhos, sigmas = [], []
    for _ in range(200):
        e = np.zeros(96)
        x = 0.0
        for i in range(96):
            x = 0.6 * x + rng.normal(0, math.sqrt(1 - 0.36))
            e[i] = x
        n = estimate_noise(e)
        rhos.append(n.rho)
        sigmas.append(n.sigma)
    assert np.median(rhos) == pytest.approx(0.6, abs=0.12)
    assert np.median(sigmas) == pytest.approx(1.0, rel=0.15)


def test_it_separates_within_build_sampling_noise_from_the_runner_effect():
    rng = np.random.default_rng(3)
    shares = []
    for _ in range(100):
        runner = np.zeros(96)
        x = 0.0
        for i in range(96):
            x = 0.5 * x + rng.normal(0, 0.01 * math.sqrt(0.75))
            runner[i] = x
        y = runner + rng.normal(0, 0.01, 96)  # equal within and between variance
        shares.append(estimate_noise(y, within=1e-4).ar_share)
    assert np.median(shares) == pytest.approx(0.5, abs=0.15)


def test_it_is_robust_to_level_shifts_and_flaky_builds():
    rng = np.random.default_rng(4)
    y = rng.normal(0, 0.01, 96)
    y[50:] += 0.2
    y[[10, 30, 70]] += 0.3
    assert 0.008 < estimate_noise(y).sigma < 0.015  # the plain standard deviation is ~0.1
    assert np.std(y) > 0.09
    assert trimmed_scale(rng.normal(0, 1, 2000)) == pytest.approx(1.0, rel=0.05)


def test_it_estimates_rate_over_dispersion():
    rng = np.random.default_rng(5)
    phis = []
    for _ in range(200):
        total = (100 / 1e-3 * rng.lognormal(0, 0.3, 96)).astype(int)
        c = rng.poisson(1e-3 * rng.gamma(20, 1 / 20, 96) * total).astype(float)
        phis.append(estimate_rate_noise(np.log((c + 0.5) / total), 1 / (c + 0.5)).phi)
    assert np.median(phis) == pytest.approx(stats.gamma(20, scale=1 / 20).var(), rel=0.3)  # 1/20


def test_it_tests_rates_like_the_textbook_poisson_log_ratio_without_dispersion():
    cb, tb = np.array([100.0] * 10), np.array([1e5] * 10)
    ca, ta = np.array([130.0] * 3), np.array([1e5] * 3)
    t = rate_shift_test(cb, tb, ca, ta, Noise(0.0, 0.0, 1e9, phi=0.0))
    expected = math.log(390.5 / 3e5) - math.log(1000.5 / 1e6)
    assert t.delta == pytest.approx(expected)
    assert t.z == pytest.approx(expected / math.sqrt(1 / 390.5 + 1 / 1000.5))
    assert t.sustained


def test_it_uses_robust_levels_that_ignore_a_flaky_build():
    before = np.zeros(40)
    after = np.array([0.0, 0.0, 0.5])  # one flaky build of three
    t = shift_test(before, after, Noise(0.01, 0.0, 40))
    assert t.delta == 0.0 and not t.sustained
    loc, f = robust_location(np.array([0.0, 0.0, 0.0, 9.0, 0.0, 0.0, 0.0]))
    assert loc == 0.0 and f > 1


@pytest.mark.parametrize("shift", [0.1, -0.1])
def test_it_judges_a_shift_sustained_only_from_the_z_asked(shift):
    rng = np.random.default_rng(8)
    before, after = rng.normal(0.0, 0.01, 40), rng.normal(shift, 0.01, 6)  # a held shift of 10 noise sd
    noise = Noise(0.01, 0.0, 40)
    judged = shift_test(before, after, noise)
    assert judged.sustained and abs(judged.z) > 10
    # judged where sustained_from <= |z|; above it (or at math.inf) not judged, so False, with the same levels and z
    assert shift_test(before, after, noise, sustained_from=abs(judged.z)) == judged
    for unjudged in (shift_test(before, after, noise, sustained_from=abs(judged.z) + 1),
                     shift_test(before, after, noise, sustained_from=math.inf)):
        assert not unjudged.sustained
        assert (unjudged.before, unjudged.after, unjudged.z, unjudged.se) == (judged.before, judged.after, judged.z,
                                                                              judged.se)


def test_it_never_judges_sustained_at_math_inf_though_a_noiseless_z_is_infinite():
    before, after = np.full(20, 100.0), np.full(5, 103.0)
    judged = shift_test(before, after, Noise(0.0, 0.0, 20))
    assert judged.z == math.inf and judged.sustained
    assert not shift_test(before, after, Noise(0.0, 0.0, 20), sustained_from=math.inf).sustained


def test_it_gives_a_trimmed_mean_variance_factor_that_matches_simulation():
    rng = np.random.default_rng(6)
    x = np.sort(rng.normal(0, 1, (20000, 10)), axis=1)[:, 2:8]
    predicted = np.mean(np.var(x, axis=1, ddof=1)) * trimmed_mean_variance_factor(10)
    assert predicted == pytest.approx(np.var(x.mean(axis=1)), rel=0.05)


def test_it_scales_size_creep_from_ordinary_non_zero_steps():
    rng = np.random.default_rng(7)
    steps = np.where(rng.random(300) < 0.3, rng.normal(0, 1e-4, 300), 0.0)
    steps[150] = 0.02
    n = estimate_step_noise(np.cumsum(steps))
    # the scale of a commit that moves the size (sd 1e-4), not the RMS of all steps (~0.25e-4 after the trim)
    assert 0.8e-4 < n.sigma < 1.25e-4


def test_it_takes_the_creep_of_a_window_with_few_non_zero_steps_from_all_its_steps():
    steps = np.zeros(60)
    steps[20] = 0.01  # a real step
    steps[[30, 36, 44, 50]] = 1e-5  # and four commits' creep
    n = estimate_step_noise(np.cumsum(steps), math.log1p(0.005))
    # four creep steps are too few to scale ordinary commits by with their own t reference: the RMS of all 59
    # after the 10% trim (53 kept: the real step and the four creep steps dropped, so zero), with its degrees of
    # freedom, but at least the creep steps' own RMS; the real step (beyond change_step) is not one of them
    assert n.sigma == pytest.approx(1e-5)
    assert n.df == pytest.approx(0.5 * 53)
    steps[[33, 40, 47, 53, 56, 58]] = 1e-5  # ten: their own scale and t reference
    n = estimate_step_noise(np.cumsum(steps), math.log1p(0.005))
    assert n.sigma == pytest.approx(1e-5 / math.sqrt(0.623), rel=1e-3) and n.df == pytest.approx(0.8 * 9)


def test_steps_of_the_min_change_are_not_creep_even_where_they_outnumber_it():
    # A window of a sparse creep (test_it_finds_each_of_several_size_steps_among_a_sparse_creep, seed 9): four 1%
    # steps and three creep steps; taken for creep, the 1% steps would set the floor of the creep's scale
    steps = np.zeros(96)
    steps[[5, 35, 65, 90]] = 0.00995
    steps[[12, 40, 70]] = [3.6e-5, 5.7e-5, 1.58e-4]
    y = np.cumsum(steps)
    assert estimate_step_noise(y).sigma > 1e-3  # a 1% step then reads as 10 sd of "creep"
    assert estimate_step_noise(y, math.log1p(0.005)).sigma < 2e-4


@settings(max_examples=50)
@given(st.floats(1e-6, 1e6))
def test_it_is_scale_free_on_the_log_scale(scale):
    rng = np.random.default_rng(8)
    y = rng.normal(0, 0.01, 96)
    a = estimate_noise(y)
    b = estimate_noise(y + math.log(scale))
    assert a.sigma == pytest.approx(b.sigma, rel=1e-6, abs=1e-12)


def test_it_computes_the_running_median_of_three_like_numpy():
    from alerts.detection.scan import running_median3

    rng = np.random.default_rng(4)
    for n in (3, 4, 9, 120):
        x = rng.normal(size=n)
        padded = np.concatenate(([x[1]], x, [x[-2]]))
        expected = np.median(np.stack((padded[:-2], padded[1:-1], padded[2:])), axis=0)
        assert np.array_equal(running_median3(x), expected)
    step = np.array([1.0, 1.0, 1.0, 2.0, 2.0, 2.0])
    assert running_median3(step).tolist() == step.tolist()  # a step is followed exactly
    spike = np.array([1.0, 1.0, 9.0, 1.0, 1.0])
    assert running_median3(spike).tolist() == [1.0] * 5  # a one-build spike is removed


def test_sustained_needs_the_run_to_be_rarer_than_the_history_makes_it():
    after = np.array([1.0, 1.0, 1.0])
    quiet = np.zeros(96)
    quiet[:2] = 1.0  # 2 of 96 builds beyond the midpoint 0.5: q = 3/98, q^3 = 2.9e-5
    assert is_sustained(after, 0.5, True, quiet)
    bimodal = np.zeros(96)
    bimodal[::5] = 1.0  # a slow mode on 20% of builds: q = 21/98, q^3 = 9.8e-3
    assert not is_sustained(after, 0.5, True, bimodal)
    assert is_sustained(np.ones(7), 0.5, True, bimodal)  # seven of seven: 2.1e-5
    assert is_sustained(after, 0.5, True)  # without a history: the all-beyond rule alone
    assert not is_sustained(-after, -0.5, False, -bimodal)  # the same, downwards


def test_it_cuts_both_lags_or_neither():
    # Cuts that leave fewer than two lag-4 differences (12 builds cut at 4 and 8) fall back to every
    # difference of both lags: cutting lag 1 alone would bias rho upwards, more than no cut at all.
    from alerts.detection.statistics import estimate_noise

    rng = np.random.default_rng(3)
    y = rng.normal(0, 1, 12)
    assert estimate_noise(y, cuts=[4, 8]) == estimate_noise(y)
    assert estimate_noise(y[:10], cuts=[5]) != estimate_noise(y[:10])  # short windows cut lag 1 only
    assert estimate_noise(np.arange(20.0) % 3, cuts=[100, -5]) == estimate_noise(np.arange(20.0) % 3)


def test_it_flags_flaky_builds_against_the_running_median_of_seven():
    rng = np.random.default_rng(21)
    y = rng.normal(0, 0.01, 96)
    # dense, as at 10-15% flaky builds: the ordinary build 41 between flaky 40 and 42 is not a dip
    wild = [10, 40, 42, 43, 70]
    y[wild] += 0.2
    mask = flaky_builds(y)
    assert mask is not None and np.flatnonzero(mask).tolist() == wild
    cleaned = without_flaky(y, mask)
    assert np.abs(cleaned[wild]).max() < 0.03 and np.array_equal(cleaned[~mask], y[~mask])
    assert flaky_builds(rng.normal(0, 0.01, 96)) is None


def test_a_level_step_or_a_window_edge_is_not_a_flaky_build():
    rng = np.random.default_rng(22)
    y = rng.normal(0, 0.01, 96)
    y[50:] += 0.3  # a step of 30 sd: the running median follows it
    assert flaky_builds(y) is None
    y[[1, 94]] += 0.3  # the first and last three builds have no centred neighbourhood
    assert flaky_builds(y) is None
    y[[20, 21, 22, 23]] -= 0.3  # a run of four is a level of its own, not flaky builds
    assert flaky_builds(y) is None


def test_it_leaves_flaky_builds_out_of_the_noise():
    rng = np.random.default_rng(23)
    plain, known = [], []
    for _ in range(100):
        y = rng.normal(0, 0.01, 96)
        wild = rng.random(96) < 0.1
        y[wild] += rng.uniform(0.08, 0.4, int(wild.sum()))  # each spoils two differences: 20% of them
        plain.append(estimate_noise(y).sigma)
        known.append(estimate_noise(y, flaky=flaky_builds(y)).sigma)
    assert np.median(plain) > 0.02  # the 10% trim gives way
    assert np.median(known) == pytest.approx(0.01, rel=0.1)


def test_a_few_known_flaky_builds_do_not_make_the_noise_read_low():
    # Flagged builds take the place of the differences the trim would have dropped, not of ordinary ones.
    rng = np.random.default_rng(24)
    ratios = []
    for _ in range(200):
        y = rng.standard_t(3, 96) * 0.01  # heavy tails: a few builds are flagged without being flaky
        mask = flaky_builds(y)
        if mask is not None:
            ratios.append(estimate_noise(y, flaky=mask).sigma / estimate_noise(y).sigma)
    assert len(ratios) > 20
    assert np.median(ratios) > 0.97


def test_a_vanishing_lag_variance_ratio_gives_the_capped_coefficient_not_a_division_by_zero():
    # Runs near float64's limit (a reviewer's adversarial series): build values that overflow make the ratio of the
    # lag-1 and lag-4 AR parts 0, and the solve divided by it.
    assert ar1_from_ratio(0.0) == 0.8
    assert ar1_from_ratio(1e-300) == 0.8
    assert ar1_from_ratio(1.0) == 0.0
    rng = random.Random(5)
    failures = 0
    for _ in range(60):
        n = rng.randint(30, 250)
        points = []
        for i in range(n):
            runs = ([rng.choice([1e308, 1.7e308, 1e300]) for _ in range(rng.randint(5, 12))] if rng.random() < 0.3
                    else [1e307 * (1 + rng.gauss(0, 0.01)) * (2 if i > n // 2 else 1) for _ in range(rng.randint(5, 12))])
            points.append(Point(1.0, samples=tuple(runs)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the overflow of such runs' squares, expected
            try:
                detect_online(points, kind="time")
            except ZeroDivisionError:
                failures += 1
    assert failures == 0
