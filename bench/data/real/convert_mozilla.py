#!/usr/bin/env python3
"""Convert compact Mozilla series (raw/<group>/<signature>.csv) to the eval kit's formats.

Each raw file: line 1 a JSON object of the series' constants (suite, test, measurement_unit,
lower_is_better, ...); line 2 the header
  push_timestamp,push_id,value,alert_status_general,test_status_general,test_is_regression,
  test_manually_created,test_prev_value,test_new_value,test_amount_pct
then one row per push, in push order.

Writes, next to raw/:
- series.jsonl: {"id": "<folder>/<signature>", "metric": "<suite>/<test>", "kind", "unit", "direction",
  "points": [{"build": push_id, "value", "timestamp"}]} (the eval kit's series format);
- truth.jsonl: {"id", "kind", "length", "change_points": [...], "false_alerts": [...],
  "perfherder_alerts": n} where change_points are the sheriff-confirmed alerts (TP) and the changes
  sheriffs added by hand because Perfherder missed them (FN), false_alerts the alerts sheriffs
  marked invalid (FP), and perfherder_alerts the number of alerts Perfherder itself raised (TP + FP
  that were not created by hand).
Rows whose alert_status_general is SP/TN (or an alert still untriaged) are not labels.
kind: time (ms/s), memory (AWSY framework 4, or bytes with memory/heap/rss in the name), size
(other bytes, installer/binary size), score (score/fps/runs per time unit), other (counts, build
metrics without a unit).
Usage: convert_mozilla.py [DIR]   (default: the folder of this script's mozilla/)
"""
import csv
import glob
import io
import json
import os
import sys


def kind_of(unit: str, suite: str, test: str, framework_id=None) -> str:
    u, name = (unit or "").strip().lower(), f"{suite} {test}".lower()
    if u in ("ms", "s", "sec", "seconds", "milliseconds"):
        return "time"
    if str(framework_id) == "4":  # AWSY: memory after tab sets, in bytes
        return "memory"
    if u in ("bytes", "b", "kb", "mb", "byte") or "size" in name:
        return "memory" if any(w in name for w in ("memory", "rss", "heap", "awsy")) else "size"
    if u in ("score", "fps", "runs/s", "runs/min"):
        return "score"
    return "other"


def fnum(s):
    return float(s) if s not in ("", None) else None


def convert(base: str) -> tuple[int, int]:
    series, truth = [], []
    for path in sorted(glob.glob(os.path.join(base, "raw", "*", "*.csv"))):
        with open(path, newline="") as fh:
            meta = json.loads(fh.readline())
            rows = list(csv.DictReader(io.StringIO(fh.read())))
        if not rows:
            continue
        folder = meta.get("folder") or os.path.basename(os.path.dirname(path))
        sid = f"{folder}/{meta.get('signature_id') or os.path.splitext(os.path.basename(path))[0]}"
        unit, suite, test = meta.get("measurement_unit") or "", meta.get("suite") or "", meta.get("test") or ""
        lib = str(meta.get("lower_is_better")).lower() != "false"
        kind = kind_of(unit, suite, test, meta.get("framework_id"))
        points, cps, fas, ph = [], [], [], 0
        for i, r in enumerate(rows):
            points.append({"build": r["push_id"], "value": float(r["value"]), "timestamp": r["push_timestamp"]})
            label = (r.get("alert_status_general") or "").strip()
            if label not in ("TP", "FP", "FN"):
                continue
            prev, new = fnum(r.get("test_prev_value")), fnum(r.get("test_new_value"))
            pct = fnum(r.get("test_amount_pct")) or 0.0
            up = new is not None and prev is not None and new >= prev
            entry = {"index": i, "direction": "regression" if r.get("test_is_regression") == "True" else "improvement",
                     "rel_change": round((1 if up else -1) * pct / 100.0, 6)}
            manual = r.get("test_manually_created") == "True"
            if label in ("TP", "FP") and not manual:
                ph += 1
            (fas if label == "FP" else cps).append(entry)
        series.append({"id": sid, "metric": f"{suite}/{test}" if test else suite, "kind": kind, "unit": unit,
                       "direction": "lower_is_better" if lib else "higher_is_better", "points": points})
        truth.append({"id": sid, "kind": kind, "length": len(points), "change_points": cps, "false_alerts": fas,
                      "perfherder_alerts": ph})
    with open(os.path.join(base, "series.jsonl"), "w") as fh:
        fh.writelines(json.dumps(s) + "\n" for s in series)
    with open(os.path.join(base, "truth.jsonl"), "w") as fh:
        fh.writelines(json.dumps(t) + "\n" for t in truth)
    return len(series), sum(len(t["change_points"]) for t in truth)


def check(base: str) -> None:
    """Every series parses, ids are unique and every labelled index lies inside its series."""
    series = [json.loads(line) for line in open(os.path.join(base, "series.jsonl"))]
    truth = {t["id"]: t for t in (json.loads(line) for line in open(os.path.join(base, "truth.jsonl")))}
    ids = [s["id"] for s in series]
    assert len(ids) == len(set(ids)) == len(truth), "duplicate or unmatched ids"
    for s in series:
        t = truth[s["id"]]
        n = len(s["points"])
        assert n == t["length"] and n > 0, s["id"]
        assert all(isinstance(p["value"], float) for p in s["points"]), s["id"]
        for e in t["change_points"] + t["false_alerts"]:
            assert 0 <= e["index"] < n, (s["id"], e)


if __name__ == "__main__":
    base = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "mozilla")
    n, cps = convert(base)
    check(base)
    print(f"{n} series, {cps} confirmed change points -> {base}/series.jsonl, truth.jsonl")
