"""bench/perfherder_verdicts.py: Perfherder's own alert count and per-alert labels from the Mozilla raw rows."""

from bench import perfherder_verdicts as pv
from tests.live import ROOT

REAL = ROOT / "bench" / "data" / "real"


def row(summary: str, alert: str = "", manual: bool = False, regression: bool = True) -> dict[str, str]:
    return {"alert_status_general": summary, "test_status_general": alert,
            "test_manually_created": str(manual), "test_is_regression": str(regression)}


def test_it_counts_every_alert_perfherder_raised_whatever_its_summary_status():
    rows = [row("TN"), row("TP", "TP"), row("SP", "SP"), row("FP", "FP"), row("SP", "TP"), row("FN", "FN", True)]
    out = pv.verdicts(rows)
    assert out["perfherder_alerts_all"] == 4  # TP, SP, FP, SP: the hand-made FN is not Perfherder's


def test_it_labels_by_the_alerts_own_status_not_its_summarys():
    rows = [row("TP", "FP"), row("SP", "TP", regression=False), row("SP", "SP"), row("FN", "FN", True), row("TN")]
    out = pv.verdicts(rows)["alert_level"]
    assert out["change_points"] == [{"index": 1, "direction": "improvement"}, {"index": 3, "direction": "regression"}]
    assert out["false_alerts"] == [{"index": 0, "direction": "regression"}]


def test_it_reads_both_disagreements_from_the_real_raw_files():
    found = pv.raw_verdicts(REAL / "mozilla")
    # autoland1/5095449: the summary of push 175 is fixed (TP) but this series' alert was marked invalid.
    assert found["autoland1/5095449"]["alert_level"]["false_alerts"] == [{"index": 175, "direction": "improvement"}]
    # autoland1/5096411: push 136's summary is still processing (SP) while its alert here was acknowledged:
    # Perfherder raised two alerts on the series, not the one the summary labels count.
    assert found["autoland1/5096411"]["perfherder_alerts_all"] == 2
    assert {"index": 136, "direction": "regression"} in found["autoland1/5096411"]["alert_level"]["change_points"]


def test_a_source_without_raw_rows_keeps_its_labels_as_given():
    truth = {"change_points": [{"index": 4}], "false_alerts": [], "perfherder_alerts": 3}
    out = pv.with_verdicts(truth, None)
    assert out["perfherder_alerts_all"] == 3
    assert out["alert_level"]["change_points"] == [{"index": 4}]
