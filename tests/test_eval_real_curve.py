"""bench/eval_real.py --curve: each detector moved along its own threshold over a corpus."""

from tests.bench_scripts import load_bench_script
from tests.real_corpus import entry, score

ev = load_bench_script("eval_real")


def _corpus() -> list[tuple[str, dict, dict]]:
    return [entry(seed, steps) for seed, steps in ((1, {60: 0.08}), (2, {50: 0.03, 110: -0.1}), (3, {}))]


def test_it_reports_every_threshold_of_every_detector():
    curve = {"online": (0.001, 0.1, 1.0), "ttest": (4.0, 7.0, 12.0)}
    rows = ev.operating_curve(_corpus(), 5, score, curve)
    assert [(r["detector"], r["threshold"]) for r in rows] == [(d, t) for d, ts in curve.items() for t in ts]
    alerts = {(r["detector"], r["threshold"]): r["alerts"] for r in rows}
    # the loosest threshold (most false alarms allowed; the lowest t) raises more than the strictest
    assert alerts[("online", 1.0)] > alerts[("online", 0.001)]
    assert alerts[("ttest", 4.0)] > alerts[("ttest", 12.0)]


def test_the_default_thresholds_give_the_evaluations_own_figures():
    corpus = _corpus()
    rows = {(r["detector"], r["threshold"]): r
            for r in ev.operating_curve(corpus, 5, score, {"online": (0.1,), "ttest": (7.0,)})}
    report = ev.evaluate(corpus, 5, score)["report"]["all"]
    for name, th in (("online", 0.1), ("ttest", 7.0)):
        assert rows[(name, th)]["alerts"] == report[name]["alerts"]
        assert rows[(name, th)]["recall"] == report[name]["recall"]
    # the large steps are found by both; the 3% one (1.5 noise sd) by the detector only
    assert rows[("online", 0.1)]["recall"] == 1.0
    assert rows[("ttest", 7.0)]["recall"] < 1.0
