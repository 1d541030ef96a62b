"""``evaluate.early_change``: a change part of the way back, or (``same_way``) further the same way, too soon after
the one that opened the segment for the scan's ``min_before``.

White 1% noise on the log scale, a +20% change at ``C`` (the segment's opening change, confirmed), and from ``C +
gap`` another level; the window is the last 96 builds, as the online detector's.
"""

import math

import numpy as np
import pytest

from alerts.detection import DEFAULT, Point, detect_online
from alerts.detection.evaluate import build_series, early_change, scan_new, young_segment
from alerts.detection.online import OnlineDetector

C = 100


def _window(back_to: float, gap: int, k: int, seed: int = 3, first: float = 1.20, late: int = 0):
    """The window ending at build ``k`` of ``first`` times the old level from ``C + late`` (the opening change,
    located ``late`` builds early) and ``1 + back_to`` of it from ``C + gap``."""
    rng = np.random.default_rng(seed)
    y = 100 * np.exp(rng.normal(0, 0.01, k + 1))
    y[C + late:C + gap] *= first
    y[C + gap:] *= 1 + back_to
    lo = k + 1 - DEFAULT.window
    return build_series(y[lo:], None, None, lo, "time")


def _reversal(back_to: float, gap: int, k: int, seed: int = 3, sustained: bool = True):
    s = _window(back_to, gap, k, seed)
    return early_change(s, C, "time", DEFAULT, None, math.log(100), sustained=sustained)


def _same_way(s, sustained: bool = True):
    return early_change(s, C, "time", DEFAULT, None, math.log(100), same_way=True, sustained=sustained)


@pytest.mark.parametrize("gap", [3, 5, 7])
def test_it_finds_a_change_half_way_back_at_its_culprit(gap):
    # +20% then +10%: the reland of half the change, say, or a partial fix
    found = _reversal(0.10, gap, C + gap + 6)
    assert found is not None and found.index == C + gap
    assert found.test.delta == pytest.approx(math.log(1.1 / 1.2), abs=0.02)


def test_the_old_level_back_is_left_to_the_backout_rules():
    # back within a quarter of the change: the opening change backed out (an excursion), not a change of its own
    assert _reversal(0.0, 5, C + 12) is None
    assert _reversal(0.10, 5, C + 12) is not None


def test_only_a_change_the_other_way_is_one():
    # a second step the same way, or none at all
    assert _reversal(0.30, 5, C + 12) is None
    assert _reversal(0.20, 5, C + 12) is None


def test_a_change_the_scan_admits_is_left_to_the_scan():
    # min_before builds into the segment or later, the scan's own culprits judge it (and its own noise estimate)
    assert _reversal(0.10, DEFAULT.min_before, C + DEFAULT.min_before + 6) is None
    assert _reversal(0.10, DEFAULT.min_before - 1, C + DEFAULT.min_before + 5) is not None


def test_it_is_looked_for_only_while_the_segment_is_young():
    young = C + DEFAULT.min_before + DEFAULT.confirm_after - 1
    assert young_segment(C, young, DEFAULT) and not young_segment(C, young + 1, DEFAULT)
    assert not young_segment(C, C + 2 * DEFAULT.min_after - 2, DEFAULT)
    assert _reversal(0.10, 5, young) is not None
    assert _reversal(0.10, 5, young + 1) is None


def test_the_run_after_it_must_be_held_unless_the_caller_only_asks_where_the_change_ends():
    # three builds after the culprit, five before it: too short a history for the exceedance test to vouch for the
    # run (``is_sustained``); the review, which only asks where the opening change's builds end, does not need it
    k = C + 5 + DEFAULT.min_after - 1
    assert _reversal(0.10, 5, k) is None
    found = _reversal(0.10, 5, k, sustained=False)
    assert found is not None and found.index == C + 5


def test_the_scan_looks_for_it_only_given_the_level_the_segment_opened_from():
    s = _window(0.10, 5, C + 12)
    found = scan_new(s, C, "time", DEFAULT, None, math.log(100))
    assert found is not None and found.index == C + 5
    assert scan_new(s, C, "time", DEFAULT) is None


@pytest.mark.parametrize("gap", [4, 5, 7])
@pytest.mark.parametrize("seed", [3, 4, 5])
def test_with_same_way_it_finds_a_further_change_the_same_way_at_its_culprit(gap, seed):
    # +20%, then +30% of the old level: a second regression a few builds after the first
    s = _window(0.30, gap, C + gap + 6, seed)
    found = _same_way(s)
    assert found is not None and found.index == C + gap
    assert found.test.delta == pytest.approx(math.log(1.3 / 1.2), abs=0.02)
    assert _reversal(0.30, gap, C + gap + 6, seed) is None  # not without same_way


def test_a_same_way_change_needs_a_level_of_its_own_between_the_two():
    # As the review asks (sustained=False: where do the opening change's builds end?), which would otherwise
    # confirm the opening change on the builds before the split and leave a second alert after it.
    # One +30% change at C + 2 whose culprit was located two builds early (the segment opened at C): the builds
    # before the split at C + 3 are two at the old level and one at the new, not a level of their own.
    assert _same_way(_window(0.30, 5, C + 12, first=1.30, late=2), sustained=False) is None
    # A flaky build at C (+12%), one back at the old level, the lasting +22% from C + 2 (an eval-kit series).
    rng = np.random.default_rng(3)
    k = C + 10
    y = 100 * np.exp(rng.normal(0, 0.01, k + 1))
    y[C] *= 1.12
    y[C + 2:] *= 1.22
    s = build_series(y[k + 1 - DEFAULT.window:], None, None, k + 1 - DEFAULT.window, "time")
    assert _same_way(s, sustained=False) is None
    # the same builds with C + 1 and C + 2 at the flaky build's +12%, the +22% from C + 3: a second change there
    y[C + 1] *= 1.12
    y[C + 2] *= 1.12 / 1.22
    s = build_series(y[k + 1 - DEFAULT.window:], None, None, k + 1 - DEFAULT.window, "time")
    found = _same_way(s, sustained=False)
    assert found is not None and found.index == C + 3


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_second_step_the_same_way_continues_a_train_of_them_as_a_drift_at_once(seed):
    # +8% at 40 and 55 (two confirmed shifts), a third +8% five builds after the second: raised as the drift that
    # continues them four builds on (before, no culprit of the segment from 55 came before 63: raised 36 builds
    # late, or never)
    rng = np.random.default_rng(seed)
    y = 100 * np.exp(rng.normal(0, 0.01, 110))
    for at in (40, 55, 60):
        y[at:] *= 1.08
    live = [c for c in detect_online([Point(float(v)) for v in y], kind="time") if not c.withdrawn]
    assert [(c.index, c.shape) for c in live] == [(60, "drift")]
    assert live[0].detected_at - 60 <= 2 * DEFAULT.min_after + 1
    assert live[0].rel_change == pytest.approx(1.08**3 - 1, abs=0.05)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_step_a_few_builds_after_a_drift_continues_it(seed):
    # +8% at 40, 55, 60 (a drift, confirmed at 60) and a fourth +8% five builds on: raised as the drift's next step.
    # Not looking the same way after a drift left it unreported (the drift stayed at +28%, the series at +36%).
    rng = np.random.default_rng(seed)
    y = 100 * np.exp(rng.normal(0, 0.01, 130))
    for at in (40, 55, 60, 65):
        y[at:] *= 1.08
    live = [c for c in detect_online([Point(float(v)) for v in y], kind="time") if not c.withdrawn]
    assert [(c.index, c.shape) for c in live] == [(65, "drift")]
    assert live[0].rel_change == pytest.approx(1.08**4 - 1, abs=0.05)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_open_drift_is_confirmed_on_all_its_builds(seed):
    # An accelerating trend: a drift, re-raised as it goes on. Its review does not cut it at a same-way change a few
    # builds on (the scan raises that as the drift's next step anyway): cut there, a confirmation moved the drift's
    # culprit back onto builds it had left and re-raised it sooner (19 such trends: 233 alerts raised against 227).
    rng = np.random.default_rng(seed)
    t = np.arange(150)
    y = 100 * np.exp(0.004 * np.maximum(t - 40, 0) ** 1.3 / 3 + rng.normal(0, 0.005, 150))
    det = OnlineDetector("other")
    confirmed = []
    last = None
    for v in y:
        for e in det.step(Point(float(v))):
            if e.type in ("raised", "refined"):
                last = e.change_point.index
            elif e.type == "confirmed" and e.change_point.shape == "drift":
                confirmed.append((e.change_point.index, last))
    assert len(confirmed) >= 3
    assert all(index >= was for index, was in confirmed)
