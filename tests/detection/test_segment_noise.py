"""evaluate.segment_noise: a segment after a confirmed change that is much quieter than the window is judged on its
own noise, by the scan, the review and the quick screen alike, and a resumed detector does the same; the online
detector sets it aside once the newest builds are louder than it (``OnlineDetector._noise_returned``)."""

from __future__ import annotations

import numpy as np
import pytest

from alerts.detection import DEFAULT, Point, detect_online
from alerts.detection.evaluate import SEGMENT_NOISE_MIN, build_series, segment_noise, series_noise
from tests.bench_scripts import load_bench_script


def _values(seed: int, *, before: float = 0.02, after: float = 0.004, at: int = 60, n: int = 96,
            step: float = -0.04) -> list[float]:
    """Log-normal noise of sd ``before`` up to ``at``, then ``step`` and noise of sd ``after``."""
    rng = np.random.default_rng(seed)
    e = np.where(np.arange(n) < at, rng.normal(0, before, n), rng.normal(0, after, n))
    level = np.where(np.arange(n) < at, 0.0, np.log1p(step))
    return list(200 * np.exp(level + e))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_quiet_segment_of_enough_builds_is_judged_on_its_own_noise(seed):
    at = 96 - SEGMENT_NOISE_MIN
    s = build_series(_values(seed, at=at), None, None, 0, "time")
    window = series_noise(s)
    own = segment_noise(s, window, at)
    assert own is not window
    assert own.sigma < 0.5 * window.sigma and own.sigma == pytest.approx(0.004, rel=0.5)
    # one build fewer in the segment: the window's
    assert segment_noise(s, window, at + 1) is window


@pytest.mark.parametrize("before,after", [(0.02, 0.02), (0.01, 0.03), (0.02, 0.013)])
def test_a_segment_as_noisy_or_noisier_than_the_window_keeps_the_windows(before, after):
    s = build_series(_values(4, before=before, after=after), None, None, 0, "time")
    window = series_noise(s)
    assert segment_noise(s, window, 60) is window


def test_only_level_windows_after_a_change_inside_them():
    s = build_series(_values(5), None, None, 100, "time")
    window = series_noise(s)
    assert segment_noise(s, window, 100) is window  # the segment is the whole window
    assert segment_noise(s, window, 80) is window  # a change before the window
    size = build_series([5e7] * 60 + [5.1e7] * 36, None, None, 0, "size")
    assert size.mode == "step" and segment_noise(size, series_noise(size), 60).sigma == series_noise(size).sigma


@pytest.mark.parametrize("seed", [6, 7, 8, 9])
def test_a_step_in_the_quiet_segment_is_raised_at_once_where_the_windows_noise_raised_it_late(seed):
    # A -4% change in 2% noise, then 0.4% noise and a +2% step 48 builds later: 1 sd of the window's noise, 5 sd of
    # the segment's (judged on the window's, it was raised 9-28 builds after its culprit).
    values = _values(seed, at=100, n=200)
    values[148:] = [v * 1.02 for v in values[148:]]
    found = [(c.index, c.detected_at - c.index) for c in detect_online([Point(v) for v in values], kind="time")
             if not c.withdrawn]
    assert (148, found[-1][1]) == found[-1] and found[-1][1] <= DEFAULT.min_after


@pytest.mark.parametrize("seed", [6, 7, 8])
def test_a_resumed_detector_uses_the_same_noise_as_the_streaming_one(seed):
    # with an alert open in the quiet segment (streaming moves its segment start onto the open alert's culprit,
    # a resumed detector does not: the noise must be read from the same segment either way)
    er = load_bench_script("eval_resume")
    values = _values(seed, at=100, n=220)
    values[148:] = [v * 1.03 for v in values[148:]]
    values[180:184] = [v * 0.97 for v in values[180:184]]
    rec = {"id": f"quiet-{seed}", "kind": "time", "points": [{"value": float(v)} for v in values]}
    assert er.differences(rec) == []


def _noise_coming_back(seed: int) -> list[float]:
    """2% noise, a -4% change at 100 with 0.4% noise for 40 builds, then 2% again (a helper's review built it)."""
    rng = np.random.default_rng(seed)
    i = np.arange(240)
    quiet = (i >= 100) & (i < 140)
    e = np.where(quiet, rng.normal(0, 0.004, i.size), rng.normal(0, 0.02, i.size))
    return list(200 * np.exp(np.where(i < 100, 0.0, np.log(0.96)) + e))


@pytest.mark.parametrize("seed", [5, 14, 19, 27])
def test_noise_coming_back_after_the_quiet_segment_is_not_judged_on_the_quiet_noise(seed, monkeypatch):
    # The segment's estimate stops at the block boundary and trims its largest differences: builds as loud as before
    # the change, arriving after it, were judged on the quiet noise and raised a change that stayed (13 of seeds 0-59;
    # 1 on the window's noise alone). Once the newest builds are that loud, the window's noise is read.
    from alerts.detection import online

    def spurious() -> list[tuple[int, bool]]:
        cps = detect_online([Point(v) for v in _noise_coming_back(seed)], kind="time")
        return [(c.index, c.confirmed) for c in cps
                if not c.withdrawn and c.merged_into is None and abs(c.index - 100) > DEFAULT.refine_radius]

    assert spurious() == []
    monkeypatch.setattr(online, "NOISE_RETURN_RATIO", float("inf"))  # no guard: the quiet noise throughout
    assert spurious() != []


def test_a_step_in_the_quiet_segment_trips_no_guard_but_loud_builds_do():
    from alerts.detection import online

    det = online.OnlineDetector("time")
    quiet = online.Noise(sigma=0.004, rho=0.0, df=30.0)
    # eight quiet builds with a +5% step among them: one large difference, left out
    for v in [190.0, 190.6, 189.5, 190.3, 199.6, 200.4, 199.2, 200.1]:
        det.step(Point(v))
    assert not det._noise_returned(quiet, log=True)
    det.step(Point(208.0))  # then a build off the new level: a second large difference
    assert det._noise_returned(quiet, log=True)
