"""bench/label_audit.py: a Mozilla label moves to where its own recorded step is, and only when plainly displaced."""

import numpy as np

from bench import label_audit as la
from tests.live import ROOT

REAL = ROOT / "bench" / "data" / "real"


def test_it_moves_a_label_whose_recorded_step_is_earlier_in_the_data():
    # autoland1/5052520: the sheriff-confirmed alert at push 246 records 3.32 -> 0.86; the values drop from
    # ~3.3 to ~0.85 at push 233 (the 13 pushes before the label are already ~0.86, measured by backfills).
    moves = la.raw_relocations(REAL / "mozilla3")
    assert moves["autoland1/5052520"] == {246: 233}


def test_it_leaves_labels_whose_step_is_at_the_labelled_push():
    # mozilla-beta/3890870: nine labelled drops of a square wave, each at the push where the values drop.
    moves = la.raw_relocations(REAL / "mozilla2")
    assert "mozilla-beta/3890870" not in moves


def test_it_keeps_the_label_when_no_push_shows_the_recorded_step():
    rng = np.random.default_rng(3)
    v = 100 * np.exp(rng.normal(0, 0.01, 120))
    # a recorded 100 -> 120 step that the flat series never makes
    assert la.relocate(v, 60, 100.0, 120.0) == 60


def test_it_moves_a_synthetic_label_to_the_step():
    v = np.r_[np.full(50, 10.0), np.full(70, 8.0)]
    assert la.relocate(v, 70, 10.0, 8.0) == 50
    assert la.relocate(v, 52, 10.0, 8.0) == 52  # visible enough at the label: stays


def test_the_audited_truth_moves_change_points_and_false_alerts():
    t = {"id": "x", "change_points": [{"index": 9, "direction": "regression"}],
         "false_alerts": [{"index": 20, "direction": "improvement"}]}
    out = la.audited(t, {9: 4, 20: 18})
    assert [e["index"] for e in out["change_points"]] == [4]
    assert [e["index"] for e in out["false_alerts"]] == [18]
    assert t["change_points"][0]["index"] == 9  # the original is untouched


def test_a_longer_reach_moves_the_labels_a_backfill_put_further_after_their_step():
    # autoland1/5043303 (Android page load): -29% at push 105, the sheriff-confirmed alert at push 146 records
    # 3266.86 -> 2422.21 and the 40 pushes before it already sit at ~2200. Out of the default reach of 40 pushes.
    assert "autoland1/5043303" not in la.raw_relocations(REAL / "mozilla4")
    assert la.raw_relocations(REAL / "mozilla4", back=64)["autoland1/5043303"] == {146: 102}
