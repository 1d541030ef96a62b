#!/usr/bin/env python3
"""Online alerts by how late, and how narrowly, they were raised; and which of them the real labels explain.

    .venv/bin/python bench/late_alerts.py [--dirs DIR,...] [--late 10] [--decades 1] [--margin 5] [--json]

Every series of ``bench/eval_real.py``'s corpus runs through ``OnlineDetector`` (the upload worker's code path).
An alert is *late and narrow* when it was raised ``--late`` or more builds after the culprit it was raised at,
with a p-value (Bonferroni-corrected over the scan's culprits, as the alert reports it) within ``--decades``
decades of the scan's level ``alpha``: evidence that built up slowly to just past the threshold. For those and
for the rest: alerts raised (withdrawn ones included, as ``eval_real.py`` counts them), withdrawn, and alerts a
label explains (a label of the same direction within ``--margin`` builds of the alert's final culprit, the eval
kit's ``score.match``), for each label set of ``eval_real.py`` (as given, audited, by each alert's own status);
and each set's recall with and without the late narrow alerts. ``eval_real.py --curve`` gives the recall the
detector's own threshold keeps at the same alert count, which dropping them must beat to be worth a rule.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from alerts.detection import DEFAULT  # noqa: E402
from alerts.detection.model import DetectorConfig  # noqa: E402
from alerts.detection.online import OnlineDetector  # noqa: E402
from bench.eval_detect import _load_module  # noqa: E402
from bench.eval_real import LABEL_SETS, default_dirs, label_sets, load_corpus, shared_eval  # noqa: E402
from perfplatform.detect_cmd import series_input  # noqa: E402

GROUPS = ("late_narrow", "rest")


def alerts_of(rec: dict, config: DetectorConfig = DEFAULT) -> list[dict]:
    """Every alert the online detector raised on a series record: its final culprit and direction, whether it was
    withdrawn, and the builds after its culprit and the p-value it was raised with."""
    pts, kind, lower, config = series_input(rec, config)
    det = OnlineDetector(kind, lower, config)
    raised = [e.change_point for e in det.run(pts) if e.type == "raised"]
    # each raise appends its change point to the history, in the same order
    return [{"index": cp.index, "direction": cp.direction, "withdrawn": cp.withdrawn,
             "raised_after": r.detected_at - r.index, "p_value": r.p_value}
            for r, cp in zip(raised, det.history, strict=True)]


def late_narrow(alert: dict, late: int, alpha: float, decades: float) -> bool:
    """Raised ``late`` or more builds after its culprit, at a p-value within ``decades`` decades of ``alpha``."""
    return alert["raised_after"] >= late and alert["p_value"] >= alpha * 10.0 ** -decades


def report(corpus, score, *, late: int = 10, decades: float = 1.0, margin: int = 5,
           config: DetectorConfig = DEFAULT) -> dict:
    groups = {g: {"alerts": 0, "withdrawn": 0, **{f"explained{s}": 0 for s in LABEL_SETS}} for g in GROUPS}
    labels_n = dict.fromkeys(LABEL_SETS, 0)
    found = {k: dict.fromkeys(LABEL_SETS, 0) for k in ("all", "without_late_narrow")}
    for _, rec, truth in corpus:
        alerts = alerts_of(rec, config)
        narrow = [late_narrow(a, late, config.alpha, decades) for a in alerts]
        sets = label_sets(truth)
        for a, is_narrow in zip(alerts, narrow, strict=True):
            g = groups["late_narrow" if is_narrow else "rest"]
            g["alerts"] += 1
            g["withdrawn"] += a["withdrawn"]
            for s, labels in sets.items():
                g[f"explained{s}"] += bool(score.match(labels["change_points"], [a], margin))
        kept = [a for a, n in zip(alerts, narrow, strict=True) if not n]
        for s, labels in sets.items():
            labels_n[s] += len(labels["change_points"])
            found["all"][s] += len(score.match(labels["change_points"], alerts, margin))
            found["without_late_narrow"][s] += len(score.match(labels["change_points"], kept, margin))
    recall = {k: {f"recall{s}": round(v[s] / labels_n[s], 4) if labels_n[s] else None for s in LABEL_SETS}
              for k, v in found.items()}
    return {"series": len(corpus), "late": late, "decades": decades, "margin": margin, "groups": groups,
            "recall": recall}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--eval-dir", default=str(shared_eval()))
    ap.add_argument("--dirs", default=None, help="comma-separated corpus directories (default: eval_real.py's)")
    ap.add_argument("--late", type=int, default=10, help="builds after the culprit at the raise (default 10)")
    ap.add_argument("--decades", type=float, default=1.0, help="p-value within this many decades of alpha")
    ap.add_argument("--margin", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    score = _load_module(Path(args.eval_dir) / "score.py", "eval_score")
    dirs = [Path(d) for d in args.dirs.split(",")] if args.dirs else default_dirs()
    res = report(load_corpus(dirs), score, late=args.late, decades=args.decades, margin=args.margin)
    if args.json:
        json.dump(res, sys.stdout, indent=1)
        print()
        return 0
    print(f"{res['series']} series; late: raised {args.late}+ builds after the culprit; narrow: p within "
          f"{args.decades:g} decade(s) of alpha; margin {args.margin}\n")
    cols = ("alerts", "withdrawn") + tuple(f"explained{s}" for s in LABEL_SETS)
    print("| group | " + " | ".join(cols) + " |\n|" + "---|" * (len(cols) + 1))
    for g in GROUPS:
        print(f"| {g} | " + " | ".join(str(res["groups"][g][c]) for c in cols) + " |")
    print("\n| alerts kept for recall | " + " | ".join(f"recall{s}" for s in LABEL_SETS) + " |\n|"
          + "---|" * (len(LABEL_SETS) + 1))
    for k, row in res["recall"].items():
        print(f"| {k} | " + " | ".join(str(row[f'recall{s}']) for s in LABEL_SETS) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
