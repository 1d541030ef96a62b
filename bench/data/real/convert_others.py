#!/usr/bin/env python3
"""Convert the treeherder, otava and mongodb raw series (<source>/raw/) to the eval kit's formats.

Each raw series file: line 1 a JSON object of the series' constants (metric, kind, unit,
lower_is_better, source, commit, path, ...); line 2 a CSV header; then one row per build in order.
Labels come from each source's own tests (expected outputs of that project's detector, not human
labels; see SOURCES-others.md):
- treeherder/raw/expected_alerts.json: push timestamps at which Perfherder's t-test
  (tests/perfalert/test_analyze.py) must raise an alert, per file;
- otava/raw/expected_change_points.json: Otava's expected indexes per parameter set, and the
  positions the test author marked under the sketch of the series in the docstring;
- mongodb/raw/expected.json: E-Divisive change points (test parameters and seed) and GESD outliers.

Writes <source>/series.jsonl ({"id", "metric", "kind", "unit", "direction", "points"}) and
<source>/truth.jsonl ({"id", "kind", "length", "change_points", "false_alerts",
"perfherder_alerts", "labels"}); `perfherder_alerts` is the number of alerts the source's own
reference method raises on the series (null where there is none).
Usage: convert_others.py [BASE]   (default: the folder of this script)
"""
import csv
import io
import json
import os
import statistics
import sys
from datetime import UTC, datetime

WINDOW = 12  # builds each side used to measure a labelled change (Perfherder's fore window)


def read_raw(path: str) -> tuple[dict, list[dict]]:
    with open(path, newline="") as fh:
        meta = json.loads(fh.readline())
        return meta, list(csv.DictReader(io.StringIO(fh.read())))


def direction_of(meta: dict) -> str:
    return "lower_is_better" if meta["lower_is_better"] else "higher_is_better"


def label(values: list[float], index: int, lo: int, hi: int, lower_is_better: bool, point: bool = False) -> dict:
    """A labelled change at `index`: median of up to WINDOW builds before it (not before `lo`)
    against the value there (`point`, for one-build excursions) or the median of up to WINDOW
    builds from it (not from `hi`)."""
    before = statistics.median(values[max(lo, index - WINDOW):index])
    after = values[index] if point else statistics.median(values[index:min(hi, index + WINDOW)])
    rel = (after - before) / before if before else 0.0
    worse = rel > 0 if lower_is_better else rel < 0
    return {"index": index, "direction": "regression" if worse else "improvement", "rel_change": round(rel, 6)}


def labels_at(values: list[float], indexes: list[int], lower_is_better: bool) -> list[dict]:
    """Change points measured between their labelled neighbours, so a change and its revert
    a few builds later are each measured against their own plateau."""
    idx = sorted(indexes)
    bounds = [0] + idx + [len(values)]
    return [label(values, i, bounds[k], bounds[k + 2], lower_is_better) for k, i in enumerate(idx)]


def record(sid: str, meta: dict, points: list[dict]) -> dict:
    return {"id": sid, "metric": meta["metric"], "kind": meta["kind"], "unit": meta["unit"],
            "direction": direction_of(meta), "points": points}


def truth(sid: str, meta: dict, n: int, cps: list[dict], fas: list[dict], ref_alerts, how: str) -> dict:
    return {"id": sid, "kind": meta["kind"], "length": n, "change_points": cps, "false_alerts": fas,
            "perfherder_alerts": ref_alerts, "labels": how}


def indexed_points(rows: list[dict]) -> tuple[list[dict], list[float]]:
    values = [float(r["value"]) for r in rows]
    return [{"build": f"b{int(r['index']):05d}", "value": v} for r, v in zip(rows, values, strict=True)], values


def treeherder(base: str) -> tuple[list, list]:
    expected = json.load(open(os.path.join(base, "raw", "expected_alerts.json")))
    series, truths = [], []
    for name, stamps in sorted(expected["expected_push_timestamps"].items()):
        meta, rows = read_raw(os.path.join(base, "raw", f"{name}.csv"))
        # detect_changes sorts by push timestamp (stable); the files are already in that order
        rows.sort(key=lambda r: int(r["push_timestamp"]))
        values = [float(r["value"]) for r in rows]
        stamps_of = [int(r["push_timestamp"]) for r in rows]
        points = [{"build": r["test_run_id"], "value": v,
                   "timestamp": datetime.fromtimestamp(int(r["push_timestamp"]), UTC).strftime("%Y-%m-%d %H:%M:%S"),
                   "revision": r["revision"], "machine": r["machine_id"]} for r, v in zip(rows, values, strict=True)]
        indexes = [stamps_of.index(t) for t in stamps]
        sid = f"treeherder/{name}"
        how = ("expected output of Perfherder's own t-test: the alerts tests/perfalert/test_analyze.py "
               "requires detect_changes(back 12-24, fore 12, t > 7) to raise on this file; not human labels")
        series.append(record(sid, meta, points))
        truths.append(truth(sid, meta, len(points), labels_at(values, indexes, meta["lower_is_better"]), [],
                            len(indexes), how))
    return series, truths


def is_excursion(values: list[float], i: int) -> bool:
    """True when the builds right after `i` are back near the level before it: a one-build
    spike or dip rather than a shift."""
    before = statistics.median(values[max(0, i - 5):i])
    after = statistics.median(values[i + 1:i + 4])
    return abs(after - before) < 0.25 * abs(values[i] - before)


def otava(base: str) -> tuple[list, list]:
    exp = json.load(open(os.path.join(base, "raw", "expected_change_points.json")))
    meta, rows = read_raw(os.path.join(base, "raw", "tigerbeetle.csv"))
    points, values = indexed_points(rows)
    # Each position the test author marked is tied to the index Otava's tests assert most often
    # within 2 builds of it; a mark whose builds return to the old level is an excursion.
    cps, fas = [], []
    for mark in exp["docstring_marks"]:
        votes = {}
        for t in exp["tests"]:
            for i in t["expected_indexes"]:
                if abs(i - mark) <= 2:
                    votes[i] = votes.get(i, 0) + 1
        if votes:
            best = min(votes, key=lambda i: (-votes[i], i))
            (fas if is_excursion(values, best) else cps).append(best)
    lib = meta["lower_is_better"]
    fa_labels = [label(values, i, 0, len(values), lib, point=True) for i in fas]
    ref = next(t for t in exp["tests"] if t["test"] == "test_tb_old_defaults")
    how = ("expected outputs of Otava's own tests (tests/tigerbeetle_test.py, compute_change_points at 10 "
           "parameter sets), tied to the positions the test author marked under a sketch of the series; "
           "not independent human labels. false_alerts: the marked one-build drop. perfherder_alerts: "
           f"Otava's count at window {ref['window_len']}, p {ref['max_pvalue']}, magnitude {ref['min_magnitude']}")
    sid = "otava/tigerbeetle"
    return [record(sid, meta, points)], [truth(sid, meta, len(points), labels_at(values, cps, lib), fa_labels,
                                               len(ref["expected_indexes"]), how)]


def mongodb(base: str) -> tuple[list, list]:
    exp = json.load(open(os.path.join(base, "raw", "expected.json")))
    series, truths = [], []
    for name in ("real_series", "robust_series"):
        meta, rows = read_raw(os.path.join(base, "raw", f"{name}.csv"))
        points, values = indexed_points(rows)
        lib, info = meta["lower_is_better"], exp[name]
        cps = labels_at(values, info["e_divisive_change_points"], lib)
        fas = [label(values, i, 0, len(values), lib, point=True) for i in sorted(info.get("gesd_outliers", []))]
        how = ("E-Divisive change points from the project's own code with its tests' parameters and seed "
               "(counts match test_small/test_medium on the tiled copies; 114 is the argmax of the expected "
               "q-hat values); not human labels" if cps else
               "no change point: E-Divisive with the tests' parameters finds none; false_alerts are the 2 "
               "outliers tests/test_gesd.py expects GESD to find; not human labels")
        sid = f"mongodb/{name}"
        series.append(record(sid, meta, points))
        truths.append(truth(sid, meta, len(points), cps, fas, len(info["e_divisive_change_points"]), how))
    return series, truths


def write(base: str, series: list, truths: list) -> None:
    with open(os.path.join(base, "series.jsonl"), "w") as fh:
        fh.writelines(json.dumps(s) + "\n" for s in series)
    with open(os.path.join(base, "truth.jsonl"), "w") as fh:
        fh.writelines(json.dumps(t) + "\n" for t in truths)


if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for source, convert in (("treeherder", treeherder), ("otava", otava), ("mongodb", mongodb)):
        base = os.path.join(root, source)
        s, t = convert(base)
        write(base, s, t)
        print(f"{source}: {len(s)} series, {sum(len(x['change_points']) for x in t)} change points, "
              f"{sum(len(x['false_alerts']) for x in t)} false alerts -> {base}/series.jsonl, truth.jsonl")
