"""Perfherder's own alert count and the sheriffs' per-alert verdicts, read from the Mozilla raw files.

The Mozilla dataset (mozilla/REALISE-Performance) labels each push with two statuses:

* ``alert_status_general``: the status of the alert *summary* the push's alert belongs to. A summary groups
  the alerts of one push across many series (every test of a suite, every platform). The dataset maps
  fixed, backed out and improvement summaries to TP, invalid and won't-fix to FP, and untriaged,
  investigating and reassigned ones to SP, "still processing" (``scripts/transform-data.py``).
* ``test_status_general``: the status of *this series'* alert inside the summary: acknowledged,
  downstream and reassigned map to TP, invalid to FP, untriaged to SP.

``convert_mozilla.py`` labels from the summary status and counts ``perfherder_alerts`` as its TP + FP rows.
Two consequences, both measurable here:

1. **Perfherder's own alert count leaves out every alert whose summary is still processing.** Those are
   alerts Perfherder raised all the same; the dataset's own export of Perfherder's detections to TCPDBench
   (``scripts/mozilla_to_TCPDBench.py``) takes the TP, SP and FP rows. ``perfherder_alerts_all`` counts
   them: every alert on the series not created by hand.
2. **A summary's verdict is not always the alert's.** A fixed summary can hold an alert a sheriff marked
   invalid on this series (summary TP, alert FP), and an untriaged summary can hold an alert a sheriff
   already acknowledged (summary SP, alert TP). ``alert_level`` holds the labels by the alert's own status:
   confirmed = alert TP plus changes created by hand (FN), false = alert FP.

Nothing here looks at a detector's output.
"""

from __future__ import annotations

from pathlib import Path

from bench.label_audit import raw_series


def verdicts(rows: list[dict[str, str]]) -> dict:
    """``perfherder_alerts_all`` and the ``alert_level`` labels of one raw series (rows in push order)."""
    confirmed, false, raised = [], [], 0
    for i, r in enumerate(rows):
        summary = (r.get("alert_status_general") or "").strip()
        if summary in ("", "TN"):
            continue
        alert = (r.get("test_status_general") or "").strip()
        manual = r.get("test_manually_created") == "True"
        entry = {"index": i,
                 "direction": "regression" if r.get("test_is_regression") == "True" else "improvement"}
        if not manual:
            raised += 1
        if alert == "TP" or (manual and summary == "FN"):
            confirmed.append(entry)
        elif alert == "FP":
            false.append(entry)
    return {"perfherder_alerts_all": raised,
            "alert_level": {"change_points": confirmed, "false_alerts": false}}


def raw_verdicts(corpus_dir: Path) -> dict[str, dict]:
    """``verdicts`` of every raw series of a Mozilla corpus directory, by series id."""
    return {sid: verdicts(rows) for sid, rows in raw_series(corpus_dir)}


def with_verdicts(truth: dict, found: dict | None) -> dict:
    """A truth record's verdict fields: from the raw file when there is one, else the labels as given
    (the treeherder, otava and mongodb sources have one status per label)."""
    if found is not None:
        return found
    return {"perfherder_alerts_all": truth.get("perfherder_alerts"),
            "alert_level": {"change_points": truth["change_points"],
                            "false_alerts": truth.get("false_alerts", [])}}
