"""Pre-merge check statistics: each property of alerts.detection.checks on simulated builds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from alerts.detection import checks as C
from alerts.detection.model import Point


def build(rng, level, runner, cv=0.03, runs=10, slow=0):
    r = level * math.exp(runner) * np.exp(rng.normal(0, cv, runs))
    r[:slow] *= 1.6
    return Point(float(np.median(r)), samples=r)


def history(rng, n=30, tau=0.01, rho=0.5, level=400.0, cv=0.03, shift_at=None, shift=0.0):
    e = np.zeros(n)
    e[0] = rng.normal(0, tau)
    for k in range(1, n):
        e[k] = rho * e[k - 1] + math.sqrt(1 - rho * rho) * rng.normal(0, tau)
    lv = [level * (1 + shift if shift_at is not None and k >= shift_at else 1) for k in range(n)]
    return [build(rng, lv[k], e[k], cv) for k in range(n)], lv[-1]


def a_check(rng, n_metrics=100, planted=None, factor=1.12, tau=0.01, slow_heads=0):
    inputs = []
    for j in range(n_metrics):
        hist, level = history(rng, tau=tau)
        f = factor if j == planted else 1.0
        head = build(rng, level * f, rng.normal(0, tau), slow=3 if j < slow_heads else 0)
        inputs.append(C.MetricInput(f"m{j:03d}", "time", head, hist))
    return C.run_check(inputs)


def test_it_holds_false_failures_near_the_rate_across_many_metrics():
    rng = np.random.default_rng(1)
    fails = sum(C.check_status(a_check(rng, n_metrics=60)) == "fail" for _ in range(12))
    assert fails <= 2  # 5% per check; 12 checks of 60 metrics each


def test_it_fails_far_fewer_innocent_builds_than_a_t_test_on_the_runs():
    """Two builds of the same code differ by their runner effects: between-build variance is in the test."""
    from scipy import stats

    rng = np.random.default_rng(2)
    naive = ours = 0
    for _ in range(30):
        hist, level = history(rng, tau=0.03)
        head = build(rng, level, rng.normal(0, 0.03))
        naive += stats.ttest_ind(np.log(head.samples), np.log(hist[-1].samples)).pvalue < 0.05
        ours += C.run_check([C.MetricInput("m", "time", head, hist)])[0].verdict == "regression"
    assert ours <= 4 < 10 <= naive


def test_it_catches_a_planted_regression_and_names_it():
    rng = np.random.default_rng(3)
    rows = a_check(rng, planted=7, factor=1.15)
    assert C.check_status(rows) == "fail"
    assert [r.metric for r in rows if r.verdict == "regression"] == ["m007"]
    r = rows[7]
    assert 0.05 < r.rel_change < 0.3 and r.ci[0] < r.rel_change < r.ci[1] and r.p_value <= 0.05
    assert (r.runs_head, r.runs_base) == (10, 10) and "Holm over 100" in r.test


def test_it_calls_an_improvement_but_does_not_fail_on_it():
    rng = np.random.default_rng(4)
    rows = a_check(rng, n_metrics=20, planted=3, factor=0.85)
    assert rows[3].verdict == "improvement" and C.check_status(rows) != "fail"


def test_it_is_not_failed_by_a_few_slow_runs():
    rng = np.random.default_rng(5)
    rows = a_check(rng, n_metrics=30, slow_heads=30)  # every head has 3 of 10 runs on a 1.6x slow path
    assert not [r for r in rows if r.verdict == "regression"]
    # two modes in every head, but the usual build value would not fail either: nothing to be unsure about
    assert sum("two modes" in r.test for r in rows) >= 20 and C.check_status(rows) == "pass"


def test_it_is_not_failed_by_most_of_a_few_runs_on_a_slow_path():
    """4 of 6 runs on a 1.5x slow path (a slow path that 10% of runs take, in a build of 6 runs: 1 in 800
    metrics): the trimmed mean of the 2 middle runs is a slow value; the faster mode decides, and the check
    says it cannot decide rather than failing. A build whose runs all got 15% slower still fails."""
    rng = np.random.default_rng(11)
    hist, level = history(rng, n=30)
    runs = level * np.exp(rng.normal(0, 0.03, 6))
    runs[2:] *= 1.5
    v = C.run_check([C.MetricInput("m", "time", Point(float(np.median(runs)), samples=runs), hist)])[0]
    assert v.verdict == "inconclusive" and "4 of 6 runs" in v.note and "two modes" in v.test
    assert v.runs_head == 6 and abs(v.rel_change) < 0.06
    slower = level * 1.15 * np.exp(rng.normal(0, 0.03, 6))
    w = C.run_check([C.MetricInput("m", "time", Point(float(np.median(slower)), samples=slower), hist)])[0]
    assert w.verdict == "regression" and "two modes" not in w.test


def test_a_base_build_with_most_runs_on_a_slow_path_is_not_a_jump():
    """Base builds are summarised as heads are: 4 of 6 runs on a 1.5x path leave the build at its fast
    mode, so the history shows no jump for the heavy-tail rule to take for the noise of the metric."""
    rng = np.random.default_rng(14)
    hist = []
    for k in range(30):
        r = 400.0 * np.exp(rng.normal(0, 0.01) + rng.normal(0, 0.03, 6))
        if k in (5, 17, 26):
            r[2:] *= 1.5
        hist.append(Point(float(np.median(r)), samples=r))
    prep = C._prepare_level(C.MetricInput("m", "time", hist[-1], hist), True)
    assert abs(prep.resid).max() < C.TAIL_Z and max(abs(prep.y[[5, 17, 26]] - np.median(prep.y))) < 0.08


def spiky_check(rng, n_metrics=40, n=40, spike_at=None, spike=8.0):
    """One value per build (no runs) with heavy-tailed build noise: t(2), as real Perfherder series have."""
    inputs = []
    for j in range(n_metrics):
        y = 0.02 * rng.standard_t(2, n + 1)
        if j == spike_at:
            y[-1] = 0.02 * spike
        vals = 400.0 * np.exp(y)
        inputs.append(C.MetricInput(f"m{j:03d}", "time", Point(float(vals[-1])), [Point(float(v)) for v in vals[:-1]]))
    return C.run_check(inputs)


def test_it_does_not_fail_a_check_on_one_build_of_a_heavy_tailed_metric():
    """Real series (one value per push) jump far now and then: on 62 real Mozilla series the normal model
    failed 75% of A/A checks (bench/eval_checks_real.py). The check's base builds show the tail; one build
    far out is then inconclusive, not a regression."""
    rng = np.random.default_rng(13)
    fails = sum(C.check_status(spiky_check(rng)) == "fail" for _ in range(10))
    assert fails <= 1
    rows = spiky_check(rng, spike_at=3, spike=12.0)
    assert rows[3].verdict == "inconclusive" and "re-run the build" in rows[3].note


def test_it_leaves_checks_of_normal_noise_to_the_t_tests():
    rng = np.random.default_rng(3)
    rows = a_check(rng, planted=7, factor=1.15)
    assert rows[7].verdict == "regression" and not any("sds from their level" in r.note for r in rows)


def test_tail_df_matches_the_share_beyond_the_threshold():
    from scipy import stats

    for beyond, total in ((30, 4000), (100, 4000), (5, 5000)):
        nu, c = C.tail_df(beyond, total)
        assert 2 * stats.t.sf(C.TAIL_Z * c, nu) == pytest.approx((beyond + 0.5) / (total + 1), rel=0.05)
    assert C.tail_df(0, 10**9)[0] == math.inf and C.tail_df(2000, 4000)[0] == 1.5  # the grid's ends


def test_it_estimates_history_variance_from_residuals_cut_at_a_shift():
    """Residuals about the median give ~0.74 degrees of freedom per build; a level shift in the history cuts
    it into two segments instead of counting as noise."""
    rng = np.random.default_rng(12)
    ests = [C.history_variance(rng.normal(0, 1, 40)) for _ in range(400)]
    v = np.array([e[0] for e in ests])
    assert ests[0][1] == pytest.approx(0.74 * 39)
    assert 0.9 < v.mean() < 1.1 and 20 < 2 / np.var(np.log(v)) < 40
    y = rng.normal(0, 1, 40)
    y[25:] += 8.0
    v_shift, df_shift = C.history_variance(y)
    assert v_shift < 2.0 and df_shift == pytest.approx(0.74 * 38)


def test_ar1_df_factor_is_bartletts():
    assert C.ar1_df_factor(0.0, 0.8) == 1.0 and C.ar1_df_factor(0.5, 0.0) == 1.0
    rho, share = 0.5, 0.8
    c = [share * rho**k for k in range(1, 200)]
    assert C.ar1_df_factor(rho, share) == pytest.approx(1 / (1 + 2 * sum(x * x for x in c)))


def test_it_compares_with_the_level_at_the_merge_base_not_before_a_shift_on_main():
    rng = np.random.default_rng(6)
    hist, level = history(rng, n=30, shift_at=27, shift=0.10)  # main got 10% slower 3 builds before the base
    head = build(rng, level, rng.normal(0, 0.01))
    v = C.run_check([C.MetricInput("m", "time", head, hist)])[0]
    assert v.verdict == "same" and abs(v.rel_change) < 0.05
    assert abs(v.before / level - 1) < 0.03  # the shifted level, not the older one 10% below


def test_it_compares_sizes_exactly_with_the_floor():
    h = [Point(30_000_000.0)] * 5
    same = C.compare_metric(C.MetricInput("s", "size", Point(30_000_000.0 + 50_000), h))
    floor = C.compare_metric(C.MetricInput("s", "size", Point(30_000_000.0 + 100_000), h))
    rel = C.compare_metric(C.MetricInput("s", "size", Point(201_000.0), [Point(200_000.0)]))
    custom = C.compare_metric(C.MetricInput("s", "size", Point(30_000_000.0 + 60_000), h, abs_floor=50_000))
    assert (same.verdict, floor.verdict, rel.verdict, custom.verdict) == ("same", "regression", "regression", "regression")
    assert C.check_status(C.decide([same])) == "pass"


def test_it_tests_rates_on_counts_with_over_dispersion():
    rng = np.random.default_rng(7)
    hist = [Point(0.0, count=int(rng.poisson(400 * rng.gamma(50, 1 / 50))), total=200_000) for _ in range(30)]
    same = C.run_check([C.MetricInput("r", "rate", Point(0.0, count=430, total=200_000), hist)])[0]
    worse = C.run_check([C.MetricInput("r", "rate", Point(0.0, count=1000, total=200_000), hist)])[0]
    assert same.verdict == "same" and worse.verdict == "regression"
    assert "over-dispersed" in worse.test


def test_it_has_no_baseline_without_history_and_never_fails_on_it():
    rows = C.run_check([C.MetricInput("m", "time", Point(5.0, samples=[5.0, 5.1, 4.9]), [])])
    assert rows[0].verdict == "no_baseline" and C.check_status(rows) == "no_baseline"


def test_it_says_how_many_more_runs_would_decide_an_inconclusive_metric():
    raw = C._Raw(delta=0.05, se=0.03, df=100, before=1, after=1.05, p=0.1, test="", runs_head=5, runs_base=5,
                 log=True, fixed_var=1e-5, per_run_var=5 * 0.03 ** 2)
    n = C.more_runs_needed(raw, 0.05 / 100)
    assert n is not None and n > 5
    raw.fixed_var = 0.05 ** 2  # the between-build part alone is too large: no number of runs decides
    assert C.more_runs_needed(raw, 0.05 / 100) is None


def test_it_adjusts_p_values_as_holm_does():
    assert C.holm_adjust([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])


def test_it_rejects_a_false_fail_rate_outside_zero_one():
    with pytest.raises(ValueError):
        C.run_check([], false_fail_rate=1.5)


def test_it_appends_extra_rows_such_as_budgets():
    extra = C.MetricVerdict("budget:size.module.*", "", "size", "bytes", "regression", None, 6e6, None, None, None,
                            "size budget maps: 5000000 bytes", 1, 0)
    rows = C.run_check([], extra=[extra])
    assert C.check_status(rows) == "fail"


def test_it_fits_the_variance_prior_of_many_metrics():
    """Variances drawn from s0^2 d0 / chi^2_d0, each estimated with df degrees of freedom: the moment fit
    recovers s0^2 and d0; metrics sharing one variance give an (effectively) infinite d0."""
    rng = np.random.default_rng(8)
    true = 2e-4 * 12 / rng.chisquare(12, 4000)
    est = [(float(t * rng.chisquare(10) / 10), 10.0) for t in true]
    prior = C.variance_prior(est)
    assert 9 < prior.d0 < 16 and abs(prior.s0 / 2e-4 - 1) < 0.1
    same = C.variance_prior([(float(2e-4 * rng.chisquare(10) / 10), 10.0) for _ in range(4000)])
    assert same.d0 > 100 and abs(same.s0 / 2e-4 - 1) < 0.05
    assert C.variance_prior(est[:C.PRIOR_MIN_METRICS - 1]) is None
    v, df = same.moderate(4e-4, 10.0)
    assert df == 10.0 + C.PRIOR_MAX_DF and 2e-4 < v < 3e-4  # pulled towards the shared scale, never all the way


def test_it_catches_more_planted_regressions_with_moderated_variances_at_the_same_false_failure_rate():
    """Short base histories (16 builds): the other metrics' variances decide more changes; A/A stays near 5%."""
    rng = np.random.default_rng(9)

    def one(planted):
        inputs = []
        for j in range(80):
            tau = rng.uniform(0.005, 0.015)
            hist, level = history(rng, n=16, tau=tau, cv=rng.uniform(0.02, 0.05))
            head = build(rng, level * (1.12 if j == planted else 1.0), rng.normal(0, tau))
            inputs.append(C.MetricInput(f"m{j:03d}", "time", head, hist))
        return inputs

    scenarios = [(one(j % 80 if j % 2 else None), j % 80 if j % 2 else None) for j in range(40)]
    pooled = {"caught": 0, "aa": 0}
    alone = {"caught": 0, "aa": 0}
    for inputs, planted in scenarios:
        for out, rows in ((pooled, C.run_check(inputs)),
                          (alone, C.decide([C.compare_metric(i) for i in inputs]))):
            flagged = {r.metric for r in rows if r.verdict == "regression"}
            if planted is None:
                out["aa"] += bool(flagged)
            else:
                out["caught"] += f"m{planted:03d}" in flagged
    assert pooled["caught"] > alone["caught"] + 2, (pooled, alone)
    assert pooled["aa"] <= 3, pooled  # 20 A/A checks at a 5% rate


def _shift_at_the_base_build(rng, head_factor):
    """Main got 3.5% slower on the base commit itself (only the base build measures it, too little to cut the
    baseline window there); the head runs at ``head_factor`` times the new level."""
    hist, level = history(rng, n=30, shift_at=29, shift=0.035, tau=0.005)
    return C.MetricInput("m", "time", build(rng, level * head_factor, rng.normal(0, 0.005)), hist)


def test_it_calls_a_head_level_with_a_departing_base_build_inconclusive():
    # Worse than the branch's level, level with the base build: the base commit's change, or the PR's
    rows = [C.run_check([_shift_at_the_base_build(np.random.default_rng(seed), 1.0)])[0] for seed in range(20)]
    second = [r for r in rows if "base build alone" in r.test]
    assert second and all(r.verdict in ("same", "inconclusive") for r in second)
    # against the branch level alone these would have failed (one metric: one-sided p <= 5%)
    blocked = [r for r in second if r.raw.p_branch / 2 <= 0.05]
    assert len(blocked) >= 5
    assert all(r.verdict == "inconclusive" and "base commit" in r.note and r.rel_change > 0 for r in blocked)


def test_it_never_fails_a_head_between_the_branch_level_and_a_departing_base_build():
    # worse than the branch level, better than the base build: it differs from neither
    for seed in range(20):
        r = C.run_check([_shift_at_the_base_build(np.random.default_rng(100 + seed), 1 / 1.02)])[0]
        if "base build alone" in r.test:
            assert r.verdict not in ("regression", "improvement"), (seed, r)


def test_a_base_build_at_its_fast_mode_counts_with_that_modes_spread():
    """A base build with half of its runs slow counts at its fast mode, and its sampling variance is that
    mode's: the spread of all its runs would inflate the base's within-build noise and so every head's
    uncertainty."""
    rng = np.random.default_rng(21)
    inputs = []
    for j in range(60):
        hist, level = history(rng, n=30, tau=0.008)
        for k in (3, 9, 14, 20, 27):
            r = np.array(hist[k].samples)
            r[5:] *= rng.uniform(1.3, 1.8, 5)
            hist[k] = Point(float(np.median(r)), samples=r)
        head = build(rng, level * (1.10 if j == 0 else 1.0), rng.normal(0, 0.008))
        inputs.append(C.MetricInput(f"m{j:03d}", "time", head, hist))
    prep = C._prepare_level(inputs[0], True)
    ws = np.array([h.w for h in prep.hist])
    assert ws[[3, 9, 14, 20, 27]].max() < 4 * np.median(ws)
    rows = C.run_check(inputs)
    assert [r.metric for r in rows if r.verdict == "regression"] == ["m000"]


def test_it_takes_the_cluster_of_runs_nearest_the_base_level():
    """Slow runs each slow by their own amount form clusters above the usual runs; the widest gap can lie
    between two slow clusters, and a split there would leave half the slow runs in the compared mode."""
    usual = [0.0, 0.01, 0.015, 0.02, 0.03, 0.04]
    runs = np.exp(np.array(usual + [0.27, 0.28, 0.58, 0.59]))
    mean, near, other, other_mean, var = C._two_modes(runs, True, 0.02, 0.02)
    assert (near, other) == (6, 4) and mean == pytest.approx(np.mean(usual))
    assert other_mean == pytest.approx(np.mean([0.27, 0.28, 0.58, 0.59]))
    assert var == pytest.approx(np.var(usual, ddof=1) / 6)
    assert C._two_modes(np.exp(np.array(usual + [0.3])), True, 0.02, 0.02) is None  # one slow run: no mode
    # a lone run nearer the level than any cluster of two or more: the runs are spread, not in two modes
    assert C._two_modes(np.exp(np.array([0.0, 0.25, 0.45, 0.47, 0.5])), True, 0.02, 0.0) is None


def test_rate_dispersion_is_unbiased_and_tighter_than_lag_one_differences():
    """The extra-Poisson variance of negative-binomial histories (phi 0.03, ~200 counts per build, 19-40
    builds), as the check estimates it and as lag-1 differences (the detector's dispersion) do."""
    from alerts.detection.statistics import RATE_OFFSET, estimate_rate_noise

    rng = np.random.default_rng(3)
    ours, diffs = [], []
    for _ in range(600):
        n = int(rng.integers(19, 41))
        c = rng.poisson(200 * rng.gamma(1 / 0.03, 0.03, n)).astype(float)
        y = np.log((c + RATE_OFFSET) / 200_000)
        ours.append(C.rate_dispersion(y, 1 / (c + RATE_OFFSET))[0])
        diffs.append(estimate_rate_noise(y, 1 / (c + RATE_OFFSET)).phi)
    assert abs(np.mean(ours) / 0.03 - 1) < 0.12
    assert np.mean(diffs) / 0.03 - 1 > 0.12 and np.std(ours) < 0.85 * np.std(diffs)
