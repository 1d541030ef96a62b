"""``evaluate.backed_out`` and ``backout_pending``: an excursion told by the old level's return.

White 1% noise on the log scale, 100 builds before a change at ``C``; the window is the last 96 builds, as the
online detector's. A 3-build excursion of 3 noise sd: its backout, three builds against three, is not significant
at the critical z, so only the return of the old level can tell it from a lasting change.
"""

import numpy as np

from alerts.detection import DEFAULT
from alerts.detection.evaluate import (
    LASTING_BUILDS,
    _test_at,
    backed_out,
    backout_pending,
    build_series,
    series_noise,
)
from alerts.detection.statistics import critical_z

C = 100


def _judge(after_return: float, k: int, step_at: int | None = None, seed: int = 4):
    """``(backed_out, pending)`` at build ``k`` for a -3% excursion at ``C..C+2``, then ``after_return``, and a
    -3% step from ``step_at``."""
    rng = np.random.default_rng(seed)
    y = 100 * np.exp(rng.normal(0, 0.01, k + 1))
    y[C:C + 3] *= 0.97
    y[C + 3:] *= 1 + after_return
    if step_at is not None:
        y[step_at:] *= 0.97
    lo = k + 1 - DEFAULT.window
    s = build_series(y[lo:], None, None, lo, "time")
    noise = series_noise(s)
    seg_lo = s.index0
    test = _test_at(s, seg_lo, C, noise)
    zc = critical_z(DEFAULT.alpha, 40, noise.df, DEFAULT.sensitivity)
    assert _test_at(s, C, C + 3, noise, hi_excl=C + 6).z < zc  # the backout alone is not significant
    return backed_out(s, C, k, test, noise, zc, DEFAULT, seg_lo), backout_pending(s, C, k, test, DEFAULT)


def test_the_old_level_back_for_the_lasting_builds_is_a_backout():
    last = C + 3 + LASTING_BUILDS - 1
    assert _judge(0.0, last) == (C + 3, False)
    # one build fewer: not judged yet, and an open change waits for it
    assert _judge(0.0, last - 1) == (None, True)


def test_a_partial_revert_that_still_holds_the_change_is_not_a_backout():
    # back to -1.5% after the -3% excursion: half of it remains, beyond a quarter of it and holding against the old
    # level over the lasting builds (one-sided z about 1.9), a smaller lasting change; back to -0.5% it is a backout
    last = C + 3 + LASTING_BUILDS - 1
    assert _judge(-0.015, last)[0] is None
    assert _judge(-0.005, last)[0] == C + 3


def test_a_later_step_does_not_make_the_excursion_look_lasting():
    # the old level for the lasting builds, then a -3% step for good: judged on the lasting builds alone, still
    # the excursion's backout
    step = C + 3 + LASTING_BUILDS + 2
    assert _judge(0.0, step + 8, step_at=step)[0] == C + 3
