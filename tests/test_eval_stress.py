"""bench/eval_stress.py: change-free noise families, drawn the same way for a seed, and alerts counted per build."""

import numpy as np

from bench import eval_stress as es


def test_it_draws_the_same_series_for_a_seed_and_other_ones_for_another():
    a, b, c = es.series("seasonal", 1, 3, 50), es.series("seasonal", 1, 3, 50), es.series("seasonal", 2, 3, 50)
    assert a == b
    assert [p["value"] for p in a[0]["points"]] != [p["value"] for p in c[0]["points"]]
    # families of one seed are drawn independently: not the same noise under another name
    w = es.series("white", 1, 1, 50)[0]["points"]
    assert [p["value"] for p in w] != [p["value"] for p in es.series("t2", 1, 1, 50)[0]["points"]]


def test_alternating_builds_take_the_slow_mode_every_other_build():
    v = np.log([p["value"] for p in es.series("alternating", 3, 1, 400)[0]["points"]])
    gap = v[1::2].mean() - v[0::2].mean()
    assert abs(gap - np.log1p(0.08)) < 0.005


def test_runs_bimodal_builds_carry_runs_and_their_median():
    rec = es.series("runs_bimodal", 1, 1, 20)[0]
    assert rec["kind"] == "memory"
    for p in rec["points"]:
        assert len(p["samples"]) == 5
        assert p["value"] == float(np.median(p["samples"]))


def test_a_row_counts_alerts_per_thousand_builds_in_both_modes():
    row = es.run_one("white", 1, 4, 120)
    assert row["builds"] == 480
    for mode in ("online", "hindsight"):
        assert row[f"{mode}_per_1000"] == round(1000 * row[f"{mode}_alerts"] / 480, 3)
    assert 0 <= row["online_live"] <= row["online_alerts"]


def test_every_family_gives_positive_values_of_its_kind_and_length():
    for name, (kind, direction, _) in es.FAMILIES.items():
        rec = es.series(name, 5, 1, 30)[0]
        assert (rec["kind"], rec["direction"]) == (kind, direction)
        assert len(rec["points"]) == 30
        assert all(p["value"] > 0 for p in rec["points"])


def test_each_family_keeps_its_own_stream_whatever_is_added():
    assert sorted(es.STREAMS) == sorted(es.FAMILIES)
    # the first eleven streams are those of the sorted names the documented figures were taken with
    assert es.STREAMS[:11] == tuple(sorted(set(es.FAMILIES) - {"seasonal_long"}))


def test_a_row_counts_the_perfherder_style_t_test_beside_the_detector():
    row = es.run_one("seasonal_long", 1, 3, 300)
    assert row["ttest_per_1000"] == round(1000 * row["ttest_alerts"] / 900, 3)
    assert row["ttest_alerts"] > 0  # a 3% cycle of 40-100 builds on 1% noise: level shifts to a 12-build window
