"""Behaviour of the detector: kinds, noise that must not alert, online life cycle, resume, overrides."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from alerts.detection import (
    DEFAULT,
    ChangePoint,
    OnlineDetector,
    Point,
    detect_hindsight,
    detect_online,
    online,
    sensitivity,
)
from alerts.detection.online import NOISE_EVERY

from .helpers import rate_series, size_series, time_series


def test_it_alerts_on_a_size_jump_on_the_culprit_build_itself():
    rng = np.random.default_rng(1)
    pts = size_series(rng, 150, shifts={80: 0.006})
    det = OnlineDetector("size")
    raised = []
    for i, p in enumerate(pts):
        raised += [(i, e.change_point) for e in det.step(p) if e.type == "raised"]
    assert [(i, cp.index) for i, cp in raised] == [(80, 80)]
    cp = raised[0][1]
    assert cp.direction == "regression" and cp.rel_change == pytest.approx(0.006, abs=5e-4)
    assert cp.first_index == cp.last_index == 80


def test_it_ignores_size_creep():
    rng = np.random.default_rng(2)
    assert detect_online(size_series(rng, 400, creep=2e-4), kind="size") == []


def test_it_ignores_the_larger_steps_of_a_sparse_creep():
    # 30% of commits move a 150 MB artefact, by 0.04% (60 kB) typically. Judged against the RMS of all steps,
    # zeros included (4x smaller than an ordinary non-zero step), a commit's 120 kB cleared the 100 kB floor and
    # read as a change: 274 alerts after build 60 on these 40 series. Against the non-zero steps, about the
    # target rate (0.1 per 1000 builds: one expected in these ~9,600). Before build 60 a window holds few
    # non-zero steps and their scale is uncertain.
    config = DEFAULT.with_overrides(abs_floor=100_000.0)
    late = []
    for seed in range(40):
        pts = size_series(np.random.default_rng(100 + seed), 300, base=1.5e8, creep=4e-4)
        late += [cp.index for cp in detect_online(pts, kind="size", config=config) if cp.index >= 60]
    assert len(late) <= 2


def test_it_keeps_the_min_change_of_a_size_series_whose_creep_is_large():
    # creep 0.04% on 30% of commits, a count-unit artefact (no byte floor): the tolerance on min_change is two
    # creep sd of the commits that move the size; three let 4 in 40 of these 0.35% steps through a 0.5% minimum
    for seed in range(40):
        pts = size_series(np.random.default_rng(seed), 300, base=7.5e5, creep=4e-4, shifts={200: 0.0035})
        assert 200 not in [cp.index for cp in detect_online(pts, kind="size")]


def test_it_finds_each_of_several_size_steps_among_a_sparse_creep():
    # 10% of commits move the size by 0.01%; four 1% steps 30 builds apart. The 10% trim of the ~10 non-zero
    # steps in a window does not drop the earlier steps, which inflated the creep scale: 70 of these 160 were
    # missed until the steps beyond 5 times the median non-zero step were dropped first.
    config = DEFAULT.with_overrides(abs_floor=100_000.0)
    shifts = {100: 0.01, 130: 0.01, 160: 0.01, 190: 0.01}
    for seed in range(40):
        rng = np.random.default_rng(seed)
        level = np.full(300, 1.5e8)
        for i, rel in shifts.items():
            level[i:] *= 1 + rel
        level *= np.exp(np.cumsum(np.where(rng.random(300) < 0.1, rng.normal(0, 1e-4, 300), 0.0)))
        pts = [Point(float(round(v))) for v in level]
        live = [cp.index for cp in detect_online(pts, kind="size", config=config) if not cp.withdrawn]
        assert set(shifts) <= set(live)


def test_a_large_creep_does_not_alert_in_a_series_first_builds_and_a_real_step_there_still_does():
    # 30% of commits move a 150 MB artefact by 0.1% (150 kB, above the 100 kB floor): with too few moving commits in
    # the window for their own scale, the steps of all commits (mostly zero) read an ordinary one 3x too small,
    # and 118 false size alerts were kept in 60 such series of 120 builds; the creep steps' own RMS is the floor.
    config = DEFAULT.with_overrides(abs_floor=100_000.0)
    for seed in range(10):
        pts = size_series(np.random.default_rng(500 + seed), 120, base=1.5e8, creep=1e-3)
        assert [cp.index for cp in detect_online(pts, kind="size", config=config) if not cp.withdrawn] == []
        step = size_series(np.random.default_rng(500 + seed), 120, base=1.5e8, creep=1e-3, shifts={30: 0.02})
        assert 30 in [cp.index for cp in detect_online(step, kind="size", config=config) if not cp.withdrawn]


def test_it_still_alerts_on_a_half_percent_size_step_among_a_sparse_creep():
    config = DEFAULT.with_overrides(abs_floor=100_000.0)
    for seed in range(10):
        pts = size_series(np.random.default_rng(500 + seed), 300, base=1.5e8, creep=4e-4, shifts={200: 0.005})
        cps = detect_online(pts, kind="size", config=config)
        assert [(cp.index, cp.withdrawn) for cp in cps if cp.index >= 60] == [(200, False)]
        assert [cp.index for cp in detect_hindsight(pts, kind="size", config=config) if cp.index >= 60] == [200]


def test_it_detects_a_time_regression_within_a_few_builds_with_a_full_result():
    rng = np.random.default_rng(3)
    pts = time_series(rng, 150, shifts={90: 0.08})
    cps = detect_online(pts, kind="time")
    assert len(cps) == 1
    cp = cps[0]
    assert abs(cp.index - 90) <= 1 and cp.detected_at - 90 <= 4
    assert cp.direction == "regression" and cp.confirmed and not cp.withdrawn
    assert cp.rel_change == pytest.approx(0.08, abs=0.02)
    assert cp.abs_change == pytest.approx(cp.after - cp.before)
    assert cp.before_ci[0] < cp.before < cp.before_ci[1] and cp.after_ci[0] < cp.after < cp.after_ci[1]
    assert 0 <= cp.p_value < 1e-3 and "z-test" in cp.test
    assert cp.first_index <= cp.index <= cp.last_index
    assert cp.sensitivity is not None and 0 < cp.sensitivity < 0.08


def test_it_reports_an_improvement_given_the_direction():
    rng = np.random.default_rng(4)
    pts = time_series(rng, 150, shifts={90: 0.08})
    assert [c.direction for c in detect_online(pts, kind="time", lower_is_better=False)] == ["improvement"]


@pytest.mark.parametrize("seed", range(5))
def test_it_never_alerts_on_one_flaky_build_or_two_in_a_row(seed):
    rng = np.random.default_rng(10 + seed)
    flaky = {40: 0.4, 90: 0.25, 91: 0.3, 150: 0.15}
    pts = time_series(rng, 200, flaky=flaky, cv=0.03)
    assert detect_online(pts, kind="time") == []


def _flaky(seed: int, n: int, share: float) -> dict[int, float]:
    """Flaky builds as the eval kit makes them: every run of the build 8-40% slower."""
    rng = np.random.default_rng(seed)
    return {i: float(rng.uniform(0.08, 0.4)) for i in range(n) if rng.random() < share}


@pytest.mark.parametrize("seed", range(4))
def test_it_finds_a_small_timing_step_among_many_flaky_builds(seed):
    # 10% flaky builds spoil a fifth of the build-to-build differences: the noise read 2-4x too high and a 4%
    # step in 3% run noise was found in 2 of 8 such series before flaky_builds (seeds 0-7), now in all 8.
    pts = time_series(np.random.default_rng(100 + seed), 260, shifts={170: 0.04}, flaky=_flaky(200 + seed, 260, 0.1),
                      cv=0.03)
    kept = [cp for cp in detect_online(pts, kind="time") if not cp.withdrawn]
    assert len(kept) == 1 and abs(kept[0].index - 170) <= 1 and kept[0].direction == "regression"
    assert [abs(cp.index - 170) <= 1 for cp in detect_hindsight(pts, kind="time")] == [True]


@pytest.mark.parametrize("seed", range(4))
def test_three_flaky_builds_in_a_row_are_not_a_new_level_where_flaky_builds_are_common(seed):
    # The flaky builds of the history are replaced, but a run at the window's end is not (it has no builds after
    # it yet): whether such a run is rare is judged on the history as it came (is_sustained on the raw values).
    flaky = _flaky(300 + seed, 260, 0.1) | {150: 0.2, 151: 0.25, 152: 0.2}
    pts = time_series(np.random.default_rng(400 + seed), 260, flaky=flaky, cv=0.03)
    assert [cp.index for cp in detect_online(pts, kind="time") if 140 <= cp.index <= 160] == []
    assert [cp.index for cp in detect_hindsight(pts, kind="time") if 140 <= cp.index <= 160] == []


@pytest.mark.parametrize(("share", "seed"), [(0.2, 1), (0.2, 4), (0.3, 4), (0.3, 12), (0.5, 18)])
def test_a_slow_mode_of_whole_builds_is_not_taken_for_flaky_builds(share, seed):
    # A second device type in the pool: every run of 20-50% of the builds 30% slower. Replaced as flaky builds,
    # the mixture's chance swings (the first builds mostly slow, a stretch with fewer slow ones) became level
    # shifts; a window with more than 15% flagged builds is left as it came (FLAKY_MAX_SHARE).
    rng = np.random.default_rng(1000 + seed)
    slow = {i: 0.3 for i in range(300) if rng.random() < share}
    pts = time_series(np.random.default_rng(2000 + seed), 300, flaky=slow, cv=0.03)
    assert [cp.index for cp in detect_online(pts, kind="time") if not cp.withdrawn] == []
    assert detect_hindsight(pts, kind="time") == []


def test_it_replaces_flaky_builds_only_where_builds_have_runs():
    from alerts.detection.evaluate import build_series

    rng = np.random.default_rng(25)
    y = np.exp(rng.normal(6, 0.01, 96))
    y[[30, 60]] *= 1.3
    with_runs = build_series(y.tolist(), None, None, 0, "time", [1e-4] * 96)
    assert with_runs.flaky is not None and np.flatnonzero(with_runs.flaky).tolist() == [30, 60]
    assert with_runs.raw is not None and np.array_equal(with_runs.raw, np.log(y))
    assert abs(with_runs.y[30] - 6) < 0.05
    # one value per push (Mozilla's, TCPD's): an outlying value is as often the metric's own tail; replacing
    # those cost real alerts, so the values stay as they came
    without = build_series(y.tolist(), None, None, 0, "time")
    assert without.flaky is None and without.raw is None and np.array_equal(without.y, np.log(y))


def test_it_ignores_bimodal_slow_runs():
    rng = np.random.default_rng(5)
    pts = []
    for _ in range(200):
        s = 300 * np.exp(rng.normal(0, 0.04, 15))
        s = np.where(rng.random(15) < 0.12, s * 1.8, s)
        pts.append(Point(float(np.median(s)), tuple(s)))
    assert detect_online(pts, kind="time") == []


@pytest.mark.parametrize("shape", ["weekly cycle", "heavy tails", "single outliers"])
def test_it_does_not_alert_on_a_weekly_cycle_heavy_tails_or_single_outliers(shape):
    # One value per build, no runs (as most real series): 10 series x 300 builds of each, no change in level.
    # At most one alert in 3000 builds per mode (the limit is 0.5 per 1000): with outliers on 3% of
    # builds, a history whose first 8 builds hold 3 of them (about 1 in 700 series) has no clean level to
    # start from, and one such series here gives one late alert near its start in each mode.
    rng = np.random.default_rng(21)
    online = hindsight = 0
    for _ in range(10):
        k = np.arange(300)
        if shape == "weekly cycle":
            v = 100 * (1 + 0.05 * np.sin(2 * np.pi * k / 7)) * np.exp(rng.normal(0, 0.01, 300))
        elif shape == "heavy tails":
            v = 100 * np.exp(0.01 * rng.standard_t(2, 300))
        else:
            v = 100 * np.exp(rng.normal(0, 0.01, 300)) * np.where(rng.random(300) < 0.03, 1.5, 1.0)
        pts = [Point(float(x)) for x in v]
        online += len(detect_online(pts, kind="time"))
        hindsight += len(detect_hindsight(pts, kind="time"))
    assert online <= 1 and hindsight <= 1


def test_it_does_not_over_alert_on_over_dispersed_rates():
    alarms = 0
    for seed in range(10):
        alarms += len(detect_online(rate_series(np.random.default_rng(seed), 300, dispersion=15), kind="rate"))
    assert alarms <= 1


def test_it_detects_a_rate_regression():
    pts = rate_series(np.random.default_rng(6), 200, crashes=200, shifts={100: 1.0})
    cps = detect_online(pts, kind="rate")
    assert [(abs(c.index - 100) <= 2, c.direction) for c in cps] == [(True, "regression")]
    assert "Poisson" in cps[0].test


def test_it_raises_a_rate_change_at_its_own_culprit_not_a_build_early():
    # A doubled crash rate is significant with the old level's last build counted after the split: the scan,
    # whose culprits stop min_after builds before the end, raised it a build after the change with the culprit
    # a build early (7 of these 12 seeds), and moved it on the next build. Located by likelihood now; when it
    # is raised is the scan's decision, unchanged (one or two builds after the change).
    exact = 0
    for seed in range(12):
        det = OnlineDetector("rate")
        pts = rate_series(np.random.default_rng(seed), 100, crashes=400, shifts={60: 1.0})
        first = next(e for p in pts for e in det.step(p) if e.type == "raised")
        assert 1 <= first.at - 60 <= 2 and abs(first.change_point.index - 60) <= 1
        exact += first.change_point.index == 60
    assert exact >= 11


def test_it_never_puts_a_rate_culprit_on_a_flaky_newest_build():
    # The likelihood search stops a build short of the newest: a doubled build two builds after a 50% rise,
    # the build that raised it, had pulled the culprit onto itself in 27 of 28 such raises.
    on_spike = at_change = 0
    for seed in range(30):
        rng = np.random.default_rng(seed)
        det = OnlineDetector("rate")
        for i in range(90):
            total = int(1e5 * rng.lognormal(0, 0.2))
            count = int(rng.poisson(0.002 * (1.5 if i >= 60 else 1) * (2 if i == 62 else 1) * total))
            raised = [e for e in det.step(Point(count / total, count=count, total=total)) if e.type == "raised"]
            if raised:
                on_spike += raised[0].change_point.index == 62
                at_change += raised[0].change_point.index == 60
                break
    assert on_spike == 0 and at_change >= 24


def test_it_locates_a_rate_change_by_the_pooled_poisson_likelihood():
    from alerts.detection.scan import rate_split_loglik

    counts = np.array([10.0, 12, 9, 11, 30, 28, 0])
    totals = np.array([1e4, 1.1e4, 0.9e4, 1e4, 1e4, 1e4, 1e3])
    got = rate_split_loglik(counts, totals, 1, 6)

    def direct(j):
        cb, tb, ca, ta = counts[:j].sum(), totals[:j].sum(), counts[j:].sum(), totals[j:].sum()
        return sum(c * np.log(c / t) for c, t in ((cb, tb), (ca, ta)) if c > 0)

    assert np.allclose(got, [direct(j) for j in range(1, 7)]) and int(got.argmax()) + 1 == 4


def test_it_withdraws_an_alert_that_does_not_hold():
    pts = [Point(1000.0)] * 50 + [Point(1100.0)] + [Point(1000.0)] * 10
    det = OnlineDetector("size")
    types = [e.type for p in pts for e in det.step(p)]
    assert types == ["raised", "withdrawn"]
    assert det.history[0].withdrawn and not det.history[0].confirmed
    assert [c.withdrawn for c in detect_online(pts, kind="size")] == [True]
    assert detect_hindsight(pts, kind="size") == []


@pytest.mark.parametrize("shift", [0.015, 0.02])
def test_it_does_not_take_a_small_lasting_shift_for_a_backed_out_change(shift):
    # 1.5-2 noise sd: three builds in a row back below the midpoint happen under such a shift, but their level
    # is not significantly below the post-change builds before them, so the change stays one live alert.
    withdrawn = near = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        y = 100 * np.exp(rng.normal(0, 0.01, 160))
        y[80:] *= 1 + shift
        cps = detect_online([Point(float(v)) for v in y], kind="time")
        withdrawn += sum(c.withdrawn for c in cps)
        near += sum(not c.withdrawn and abs(c.index - 80) <= 3 for c in cps)
    assert withdrawn == 0
    assert near >= 50


@pytest.mark.parametrize("length", [4, 5])
def test_an_excursion_whose_old_level_is_back_is_not_a_change_the_step_after_it_hides_in(length):
    # White 1% noise, 100 builds of history, a 3-sd excursion backed out after 4-5 builds and a 3% step 8 builds
    # after it (40 seeds). The backout alone (3 builds against 4-5) is rarely significant, so the excursion was
    # confirmed as a lasting change and the step was tested against the few builds since: found 27-33 times,
    # the excursion left as a live change 20-26 times. The 8 builds after the return, back at the old level,
    # make it an excursion (36 and 34 found; 6 and 10 excursions left).
    live_excursions = steps = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        y = 100 * np.exp(rng.normal(0, 0.01, 180))
        y[100:100 + length] *= 0.97
        step = 100 + length + 8
        y[step:] *= 0.97
        cps = detect_online([Point(float(v)) for v in y], kind="time")
        live_excursions += sum(not c.withdrawn and abs(c.index - 100) <= 2 for c in cps)
        steps += any(not c.withdrawn and abs(c.index - step) <= 3 for c in cps)
    assert live_excursions <= 14
    assert steps >= 32


def test_it_confirms_and_refines_an_alert_as_builds_arrive():
    rng = np.random.default_rng(7)
    pts = time_series(rng, 140, shifts={70: 0.06}, cv=0.06)
    det = OnlineDetector("time")
    events = [e for p in pts for e in det.step(p)]
    types = [e.type for e in events]
    assert types[0] == "raised" and "confirmed" in types and "withdrawn" not in types
    assert events[-1].change_point.confirmed


def test_it_resumes_from_a_stored_window_with_the_same_decisions():
    rng = np.random.default_rng(8)
    pts = time_series(rng, 260, shifts={60: 0.07, 140: -0.05, 200: 0.1}, flaky={100: 0.3}, cv=0.06)
    _assert_resumes_as_it_streams(pts, range(30, 259, 7))


def test_it_resumes_with_the_same_decisions_among_many_flaky_builds():
    pts = time_series(np.random.default_rng(26), 240, shifts={120: 0.05, 180: -0.06}, flaky=_flaky(27, 240, 0.1),
                      cv=0.04)
    _assert_resumes_as_it_streams(pts, range(20, 239, 3))


def test_resumed_detectors_of_one_block_share_its_estimates_and_decide_as_with_none_shared():
    # The worker resumes a detector for every build; the builds of a block look its window's noise and quick-screen
    # summary up (online._window, online._cached_block) instead of estimating them again. Looked up from the
    # resumes of the builds before, or estimated afresh (caches cleared before each resume), the decisions are
    # streaming's.
    pts = time_series(np.random.default_rng(31), 230, shifts={150: 0.06, 190: -0.05}, flaky=_flaky(32, 230, 0.05),
                      cv=0.05)
    ref_events = _streamed_events(pts)
    keep = DEFAULT.window + NOISE_EVERY
    stream = OnlineDetector("time")
    for p in pts[:130]:
        stream.step(p)
    stored_before, streamed = {}, {}
    for k in range(130, 229):
        stored_before[k] = [dataclasses.replace(cp) for cp in stream.history]
        stream.step(pts[k])
        streamed[k] = (stream._block, stream._noise, stream._noise_at)

    def resumed(k: int) -> list[tuple]:
        det = OnlineDetector.resume(pts[k - keep:k], stored_before[k], start_index=k - keep, kind="time")
        events = [(e.type, e.change_point.index, e.change_point.rel_change) for e in det.step(pts[k])]
        block, noise, noise_at = streamed[k]
        if noise_at == det._noise_at:
            assert det._noise == noise, k  # the same estimate, to the last bit
        if block is not None and det._block is not None and (block.at, block.seg_start) == (det._block.at,
                                                                                           det._block.seg_start):
            assert det._block == block, k
            compared.append(k)
        return events

    compared: list[int] = []
    online._window.cache_clear()
    online._cached_block.cache_clear()
    for k in stored_before:
        assert resumed(k) == ref_events[k], k
    assert online._cached_block.cache_info().hits >= len(stored_before) // 2
    assert len(compared) >= len(stored_before) // 2
    for k in stored_before:
        online._window.cache_clear()
        online._cached_block.cache_clear()
        assert resumed(k) == ref_events[k], k


def _streamed_events(pts: list[Point]) -> list[list[tuple]]:
    ref = OnlineDetector("time")
    return [[(e.type, e.change_point.index, e.change_point.rel_change) for e in ref.step(p)] for p in pts]


def _assert_resumes_as_it_streams(pts: list[Point], builds: range) -> None:
    """A detector resumed from the stored window and alerts before build k takes streaming's decisions at k."""
    ref_events = _streamed_events(pts)
    keep = DEFAULT.window + NOISE_EVERY
    for k in builds:
        stream = OnlineDetector("time")
        for p in pts[:k]:
            stream.step(p)
        stored = [dataclasses.replace(cp) for cp in stream.history]
        start = max(0, k - keep)
        det = OnlineDetector.resume(pts[start:k], stored, start_index=start, kind="time")
        got = [(e.type, e.change_point.index, e.change_point.rel_change) for e in det.step(pts[k])]
        assert got == ref_events[k], k


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_window_on_another_scale_than_its_block_is_judged_on_its_own_noise(seed):
    # A zero value (a broken build's timing: any finite value is accepted) at 115 takes the window off the log scale
    # from there, mid-block; the block's noise (at 112) is in log units. Streaming kept it for the block and gave the
    # +8% step at 120 a p-value of 1e-149 (its level's CI +-0.005 ms); a detector resumed at those builds, like the
    # worker, reads the window's own noise (p ~1e-8). Both now read it.
    rng = np.random.default_rng(seed)
    y = 100 * np.exp(rng.normal(0, 0.02, 200))
    y[120:] *= 1.08
    y[115] = 0.0
    pts = [Point(float(v)) for v in y]
    _assert_resumes_as_it_streams(pts, range(113, 130))
    step = next(c for c in detect_online(pts, kind="time") if c.index == 120)
    assert step.p_value > 1e-20


def test_it_agrees_online_and_in_hindsight_on_clear_shifts():
    rng = np.random.default_rng(9)
    pts = time_series(rng, 300, shifts={80: 0.1, 180: -0.08}, cv=0.05)
    on = [(c.index, c.direction) for c in detect_online(pts, kind="time") if not c.withdrawn]
    hs = [(c.index, c.direction) for c in detect_hindsight(pts, kind="time")]
    assert len(on) == len(hs) == 2
    assert all(abs(a[0] - b[0]) <= 1 and a[1] == b[1] for a, b in zip(on, hs, strict=True))
    assert all(isinstance(c, ChangePoint) and c.confirmed for c in detect_hindsight(pts, kind="time"))


def test_it_applies_per_metric_overrides():
    rng = np.random.default_rng(10)
    pts = time_series(rng, 150, shifts={90: 0.05}, cv=0.03)
    assert len(detect_online(pts, kind="time")) == 1
    assert detect_online(pts, kind="time", config=DEFAULT.with_overrides(min_change=0.1)) == []
    assert detect_online(pts, kind="time", config=DEFAULT.with_overrides(abs_threshold=100.0)) == []
    assert DEFAULT.with_overrides(min_change=None) == DEFAULT
    size = size_series(np.random.default_rng(11), 100, shifts={50: 0.003})
    assert detect_online(size, kind="size") == []
    assert [c.index for c in detect_online(size, kind="size", config=DEFAULT.with_overrides(min_change=0.002))] \
        == [50]


def test_it_is_more_sensitive_with_a_higher_sensitivity_multiplier():
    rng = np.random.default_rng(12)
    pts = time_series(rng, 160, shifts={100: 0.035}, cv=0.08, runs=5)
    plain = detect_online(pts, kind="time")
    keen = detect_online(pts, kind="time", config=DEFAULT.with_overrides(sensitivity=3.0))
    assert len(keen) >= len(plain)
    assert min(c.detected_at for c in keen) <= min((c.detected_at for c in plain), default=10**9)


def test_it_reports_a_sensitivity_that_improves_with_builds_and_runs():
    rng = np.random.default_rng(13)
    pts = time_series(rng, 120, runs=5, cv=0.1, build_sd=0.002)
    s3 = sensitivity(pts, kind="time", within_builds=3)
    s20 = sensitivity(pts, kind="time", within_builds=20)
    assert s3 is not None and s20 is not None and s20 < s3
    more_runs = sensitivity(pts, kind="time", within_builds=10, runs=30)
    assert more_runs < sensitivity(pts, kind="time", within_builds=10)
    assert sensitivity(size_series(rng, 60), kind="size") == pytest.approx(0.005, rel=0.2)
    assert sensitivity(rate_series(rng, 60), kind="rate") > 0.1


def test_it_does_not_withdraw_an_early_step_that_hid_in_its_own_noise_estimate():
    # Steps of 3-6 noise sd at builds 12-24 of AR(1) 0.3 noise. In windows under 35 builds the step is raised
    # with the noise estimated without the differences spanning it (statistics.trim_absorbs_shifts); reviewed
    # with the window's own estimate, which the step inflates, 4 of 300 were withdrawn a build later and raised
    # again (a notification, a withdrawal and the same notification). The review confirms with the window's
    # estimate but withdraws only when the change fails under both.
    from alerts.detection.online import OnlineDetector

    withdrawn = confirmed = 0
    for seed in range(300):
        rng = np.random.default_rng(seed)
        at, size = int(rng.integers(12, 25)), float(rng.choice([3.0, 4.0, 6.0]))
        e = np.zeros(80)
        for i in range(1, 80):
            e[i] = 0.3 * e[i - 1] + rng.normal(0, 1)
        y = 100 + e + np.where(np.arange(80) >= at, size, 0.0)
        det = OnlineDetector("score", lower_is_better=False)
        for v in y:
            for ev in det.step(Point(float(v))):
                if abs(ev.change_point.index - at) <= 3:
                    withdrawn += ev.type == "withdrawn"
                    confirmed += ev.type == "confirmed"
    assert withdrawn <= 1
    assert confirmed >= 260


def test_it_never_reports_a_change_before_it_happened():
    # A small step and, 3-8 builds later, a large one in the same direction. The small one is raised; the review
    # refined its culprit onto the large step, so the alert claimed to have seen, at the build it was raised, a
    # change that came later (about half of these series). Refined onto a build later than the one it was raised
    # on, the alert is withdrawn and the large step raised at its own culprit. (A culprit on the raising build
    # itself was seen: the large step's first build raised the alert.)
    delays = []
    for seed in range(60):
        rng = np.random.default_rng(seed)
        at, gap = int(rng.integers(30, 70)), int(rng.integers(3, 9))
        i = np.arange(110)
        y = 100 * np.exp(rng.normal(0, 0.01, 110) + np.where(i >= at, np.log1p(rng.uniform(0.02, 0.05)), 0.0)
                         + np.where(i >= at + gap, np.log1p(rng.uniform(0.08, 0.2)), 0.0))
        pts = [Point(float(v)) for v in y]
        cps = detect_online(pts, kind="time")
        assert all(c.index <= c.detected_at for c in cps), (seed, cps)
        # hindsight took the withdrawn small step and the large one for one shift and reported the large one
        # with the small one's detection (29 of these 60 series)
        assert all(c.index <= c.detected_at for c in detect_hindsight(pts, kind="time")), seed
        large = [c for c in cps if not c.withdrawn and abs(c.index - (at + gap)) <= 1]
        assert len(large) == 1, (seed, at, gap, cps)
        delays.append(large[0].detected_at - (at + gap))
    assert np.median(delays) <= 3, delays


def test_it_resumes_after_withdrawing_an_alert_refined_onto_a_later_change():
    # Seed 0 of the test above: a small step at 64 raised on 67, a +20% step at 70; the alert at 64 is withdrawn
    # on the build that would have moved it onto 70, and the step raised. A worker resuming from the stored alerts
    # at any of these builds must take the same decisions.
    rng = np.random.default_rng(0)
    at, gap = int(rng.integers(30, 70)), int(rng.integers(3, 9))
    i = np.arange(110)
    y = 100 * np.exp(rng.normal(0, 0.01, 110) + np.where(i >= at, np.log1p(rng.uniform(0.02, 0.05)), 0.0)
                     + np.where(i >= at + gap, np.log1p(rng.uniform(0.08, 0.2)), 0.0))
    pts = [Point(float(v)) for v in y]
    assert ("withdrawn", at) in [(t, c) for evs in _streamed_events(pts) for t, c, _ in evs]
    _assert_resumes_as_it_streams(pts, range(at, at + gap + 12))
