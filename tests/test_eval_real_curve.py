"""bench/eval_real.py --curve: each detector moved along its own threshold over a corpus."""

from types import SimpleNamespace

import numpy as np

from tests.bench_scripts import load_bench_script
from tests.detection.helpers import match

ev = load_bench_script("eval_real")


def _pct(values: list[float], q: float) -> float | None:
    return sorted(values)[int(q * (len(values) - 1) + 0.5)] if values else None


# the eval kit's scoring (``../shared/eval/score.py``, which a clone of the repository alone does not have)
score = SimpleNamespace(match=match, pct=_pct)


def _corpus() -> list[tuple[str, dict, dict]]:
    out = []
    for seed, steps in ((1, {60: 0.08}), (2, {50: 0.03, 110: -0.1}), (3, {})):
        rng = np.random.default_rng(seed)
        y = 200 * np.exp(rng.normal(0, 0.02, 160))
        for at, rel in steps.items():
            y[at:] *= 1 + rel
        rec = {"id": f"s{seed}", "kind": "time", "direction": "lower_is_better",
               "points": [{"build": str(i), "value": float(v)} for i, v in enumerate(y)]}
        labels = [{"index": at, "direction": "regression" if rel > 0 else "improvement"} for at, rel in steps.items()]
        truth = {"id": rec["id"], "change_points": labels, "false_alerts": []}
        truth.update(audited=truth, alert_level=truth)
        out.append(("synthetic", rec, truth))
    return out


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
