"""bench/late_alerts.py: the online alerts split by how late and how narrowly they were raised."""

from alerts.detection import DEFAULT
from bench import late_alerts as la
from tests.real_corpus import entry, score


def test_it_reports_a_clear_step_as_raised_soon_after_its_culprit_and_well_past_the_threshold():
    _, rec, _ = entry(3, {100: 0.2}, noise=0.01)
    alerts = la.alerts_of(rec)
    assert [(a["index"], a["direction"], a["withdrawn"]) for a in alerts] == [(100, "regression", False)]
    assert alerts[0]["raised_after"] <= 3
    assert alerts[0]["p_value"] < DEFAULT.alpha / 10
    assert not la.late_narrow(alerts[0], 10, DEFAULT.alpha, 1.0)


def test_late_and_narrow_needs_both_the_delay_and_a_p_value_near_alpha():
    alpha = 1e-4
    assert la.late_narrow({"raised_after": 10, "p_value": 2e-5}, 10, alpha, 1.0)
    assert not la.late_narrow({"raised_after": 9, "p_value": 2e-5}, 10, alpha, 1.0)
    assert not la.late_narrow({"raised_after": 30, "p_value": 5e-6}, 10, alpha, 1.0)
    assert la.late_narrow({"raised_after": 30, "p_value": 5e-6}, 10, alpha, 2.0)


def test_the_report_counts_each_alert_once_and_the_recall_without_the_late_narrow_ones(monkeypatch):
    corpus = [entry(1, {60: 0.2, 120: -0.2}), entry(2, {80: 0.2})]
    # the second series' labelled step was raised late and narrowly; an unlabelled alert of the first one too
    raised = {"s1": [{"index": 60, "direction": "regression", "withdrawn": False, "raised_after": 2, "p_value": 1e-9},
                     {"index": 120, "direction": "improvement", "withdrawn": False, "raised_after": 2,
                      "p_value": 1e-9},
                     {"index": 140, "direction": "regression", "withdrawn": True, "raised_after": 12,
                      "p_value": 5e-5}],
              "s2": [{"index": 81, "direction": "regression", "withdrawn": False, "raised_after": 15,
                      "p_value": 3e-5}]}
    monkeypatch.setattr(la, "alerts_of", lambda rec, config=DEFAULT: raised[rec["id"]])
    res = la.report(corpus, score)
    late, rest = res["groups"]["late_narrow"], res["groups"]["rest"]
    assert (late["alerts"], late["withdrawn"], late["explained"]) == (2, 1, 1)
    assert (rest["alerts"], rest["withdrawn"], rest["explained"]) == (2, 0, 2)
    assert res["recall"]["all"]["recall"] == 1.0
    assert res["recall"]["without_late_narrow"]["recall"] == round(2 / 3, 4)
    assert res["recall"]["without_late_narrow"]["recall_audited"] == round(2 / 3, 4)
