"""Slow drift is one finding, not a train of level shifts (issue 9).

Built from a real excerpt: 120 quiet pushes of a Mozilla pdfpaint timing series (no labelled change), on
which a gradual 40% slowdown over 60 builds is superimposed, as a leak or a creeping dependency would do.
"""

import json
from pathlib import Path

import pytest

from alerts.detection import Point, detect_hindsight
from alerts.detection.drift import collapse_drift
from alerts.detection.model import ChangePoint

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "detection" / "pdfpaint_quiet_120.json"


def _real() -> list[float]:
    return json.loads(FIXTURE.read_text())["values"]


def _ramp(values: list[float], start: int, length: int, total: float) -> list[float]:
    return [v * (1 + total * min(max(i - start, 0), length) / length) for i, v in enumerate(values)]


def test_it_reports_a_slow_real_drift_as_one_drift_with_its_slope_and_window():
    values = _ramp(_real(), 40, 60, 0.4)
    cps = detect_hindsight([Point(v) for v in values], kind="time")
    assert len(cps) == 1, [(c.index, c.shape) for c in cps]
    d = cps[0]
    assert d.shape == "drift" and d.direction == "regression"
    assert 40 <= d.index <= 60 and 20 <= d.window_builds <= 70
    assert d.slope_per_build == pytest.approx(d.abs_change / d.window_builds)
    assert 0.2 < d.rel_change < 0.6


def test_it_leaves_the_real_quiet_excerpt_without_alerts():
    assert detect_hindsight([Point(v) for v in _real()], kind="time") == []


def _cp(index: int, before: float, after: float, direction: str = "regression") -> ChangePoint:
    return ChangePoint(index=index, first_index=index, last_index=index, direction=direction,
                       rel_change=after / before - 1, abs_change=after - before, before=before, after=after,
                       before_ci=(before, before), after_ci=(after, after), p_value=1e-6, test="t",
                       detected_at=index + 3)


def test_it_keeps_two_steps_and_far_apart_or_opposite_steps_as_shifts():
    two = [_cp(10, 100, 110), _cp(20, 110, 120)]
    assert [c.shape for c in collapse_drift(two, max_gap=24)] == ["shift", "shift"]
    far = [_cp(10, 100, 110), _cp(40, 110, 120), _cp(70, 120, 130)]
    assert [c.shape for c in collapse_drift(far, max_gap=24)] == ["shift"] * 3
    flip = [_cp(10, 100, 110), _cp(20, 110, 100, "improvement"), _cp(30, 100, 110)]
    assert [c.shape for c in collapse_drift(flip, max_gap=24)] == ["shift"] * 3


def test_it_merges_a_train_into_one_drift_spanning_first_to_last_level():
    train = [_cp(10, 100, 110), _cp(20, 110, 120), _cp(30, 120, 130), _cp(80, 130, 100, "improvement")]
    out = collapse_drift(train, max_gap=24)
    assert [c.shape for c in out] == ["drift", "shift"]
    d = out[0]
    assert (d.index, d.before, d.after, d.window_builds) == (10, 100, 130, 21)
    assert d.slope_per_build == pytest.approx(30 / 21)
