"""``evaluate.early_reversal``: a change part of the way back, too soon after the one that opened the segment for
the scan's ``min_before``.

White 1% noise on the log scale, a +20% change at ``C`` (the segment's opening change, confirmed), and from ``C +
gap`` another level; the window is the last 96 builds, as the online detector's.
"""

import math

import numpy as np
import pytest

from alerts.detection import DEFAULT
from alerts.detection.evaluate import build_series, early_reversal, scan_new, young_segment

C = 100


def _window(back_to: float, gap: int, k: int, seed: int = 3):
    """The window ending at build ``k`` of +20% from ``C`` and ``1 + back_to`` of the old level from ``C + gap``."""
    rng = np.random.default_rng(seed)
    y = 100 * np.exp(rng.normal(0, 0.01, k + 1))
    y[C:C + gap] *= 1.20
    y[C + gap:] *= 1 + back_to
    lo = k + 1 - DEFAULT.window
    return build_series(y[lo:], None, None, lo, "time")


def _reversal(back_to: float, gap: int, k: int, seed: int = 3, sustained: bool = True):
    s = _window(back_to, gap, k, seed)
    return early_reversal(s, C, "time", DEFAULT, None, math.log(100), sustained)


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
