"""The Perfherder t-test baseline of bench/eval_real.py, bench/eval_tcpd.py and bench/bench_detect.py.

The sample series of Treeherder's own tests (``bench/data/real/treeherder``) carry, as their labels, the change
points ``tests/perfalert/test_analyze.py`` requires Perfherder's detector to find on them: the baseline must
find exactly those, or its alert counts say nothing about Perfherder's.
"""

import json

import numpy as np
import pytest

from bench.baselines.perfherder_ttest import detect_changes, detect_changes_fast
from tests.live import ROOT

TREEHERDER = ROOT / "bench" / "data" / "real" / "treeherder"


def _treeherder_series() -> list[tuple[str, list[float], list[int]]]:
    truth = {}
    for line in (TREEHERDER / "truth.jsonl").read_text().splitlines():
        t = json.loads(line)
        truth[t["id"]] = [c["index"] for c in t["change_points"]]
    out = []
    for line in (TREEHERDER / "series.jsonl").read_text().splitlines():
        rec = json.loads(line)
        out.append((rec["id"], [float(p["value"]) for p in rec["points"]], truth[rec["id"]]))
    return out


@pytest.mark.parametrize("sid,values,expected", _treeherder_series(), ids=lambda x: x if isinstance(x, str) else "")
def test_it_finds_what_treeherders_tests_require(sid, values, expected):
    # Treeherder's test applies no alert threshold (a11y's first change is -1.7%).
    found = [c["index"] for c in detect_changes(values, min_rel_change=0)]
    assert found == expected, sid


def test_one_alert_per_shift_at_its_peak():
    rng = np.random.default_rng(3)
    values = list(100 + rng.normal(0, 1, 80))
    values[40:] = [v + 10 for v in values[40:]]
    found = detect_changes(values)
    # every build near the step scores above 7; only the peak is a change
    assert [c["index"] for c in found] == [40]
    assert found[0]["direction"] == "regression" and found[0]["detected_at"] == 51
    assert list(detect_changes_fast(values)) == [40]


def test_the_alert_threshold_drops_small_changes():
    values = [100.0 + 0.01 * (i % 3) for i in range(40)] + [101.0 + 0.01 * (i % 3) for i in range(40)]
    assert [c["index"] for c in detect_changes(values, min_rel_change=0)] == [40]
    assert detect_changes(values) == []  # a 1% change, under Perfherder's 2%


def test_higher_is_better_reverses_the_direction():
    values = [50.0 + (i % 2) for i in range(30)] + [60.0 + (i % 2) for i in range(30)]
    (change,) = detect_changes(values, lower_is_better=False)
    assert change["index"] == 30 and change["direction"] == "improvement"
