#!/usr/bin/env python3
"""The detector on TCPD, the annotated change-point benchmark of van den Burg & Williams (2020), scored as TCPDBench does.

    .venv/bin/python bench/eval_tcpd.py [--data-dir bench/data/tcpd] [--tcpd-repo GIT_DIR] [--margin 5] [--json]
        [--details]

Reads ``series.jsonl``/``truth.jsonl`` of ``bench/data/tcpd`` (univariate TCPD datasets, several human
annotators each; see ``bench/data/tcpd/SOURCES.md``) and runs five detectors on every series:
``hindsight`` and ``online`` (``perfplatform.detect_cmd.detect_series``; online counts withdrawn alerts
too, as ``eval_real.py`` does), ``online_live`` (the online alerts not withdrawn: what the alert list shows
once the series has been read, a drift as one alert), ``ttest`` (the Perfherder-style t-test of
``bench/baselines/perfherder_ttest.py``, lower is better) and ``zero`` (no change point). A change
point is the index of the first point of the new segment, as in TCPD. Per detector it reports the mean
over datasets of two TCPDBench metrics (``analysis/scripts/metrics.py``), and the CPU seconds
(``time.process_time``) spent detecting. ``--tcpd-repo`` (a TCPD git directory, e.g. a clone of
github.com/alan-turing-institute/TCPD) adds the univariate datasets ``bench/data/tcpd`` does not keep because
their terms do not allow a copy here (the univariate ones of ``convert_tcpd.EXCLUDED``: 10 at TCPD 83b3039),
read from that clone for the run only; they are reported on their own and with the stored ones (``all``), so
the univariate datasets in TCPD's repository are all scored without storing any of those ten.

F1 (``f_measure``, alpha 0.5), margin M (default 5). Index 0 is added to every annotator's set T_k
(k = 1..K) and to the predictions X. TP(T, X) is the number of points of T matched to a prediction:
points of T are taken in increasing order, each takes the nearest prediction still free within M
(ties: the smaller index), so no prediction is used twice. With T* the union of the T_k:

    P = TP(T*, X) / |X|,   R = (1/K) sum_k TP(T_k, X) / |T_k|,   F1 = 2 P R / (P + R).

(TCPDBench walks T in Python set order, which is increasing order unless the set's hash table wraps;
the two agree on every dataset and detector here.)

Cover (``covering``). Change points c split 0..N-1 into segments [0, c_1), [c_1, c_2), ..., [c_m, N)
(points outside 1..N-1 are ignored). For a true partition S' (an annotator's) and a predicted one S,

    C(S', S) = (1/N) sum over A in S' of |A| max over A' in S of |A n A'| / |A u A'|,

and the score is the mean of C(S'_k, S) over the annotators.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.baselines.perfherder_ttest import detect_changes  # noqa: E402
from bench.data.tcpd.convert_tcpd import unstored  # noqa: E402
from perfplatform.detect_cmd import detect_series  # noqa: E402

DETECTORS = ("hindsight", "online", "online_live", "ttest", "zero")
DATA_DIR = ROOT / "bench" / "data" / "tcpd"


def true_positives(truth: Iterable[int], predictions: Iterable[int], margin: int) -> int:
    """Points of ``truth`` matched to a distinct prediction within ``margin`` (nearest free one first)."""
    free = sorted(set(predictions))
    tp = 0
    for tau in sorted(set(truth)):
        close = [(abs(tau - x), x) for x in free if abs(tau - x) <= margin]
        if close:
            free.remove(min(close)[1])
            tp += 1
    return tp


def f_measure(annotations: Mapping[str, Sequence[int]], predictions: Iterable[int],
              margin: int = 5) -> tuple[float, float, float]:
    """TCPDBench's F1 against several annotators: ``(F1, precision, recall)``."""
    truths = [{0, *cps} for cps in annotations.values()]
    if not truths:
        raise ValueError("no annotators")
    pred = {0, *predictions}
    union = set().union(*truths)
    precision = true_positives(union, pred, margin) / len(pred)
    recall = sum(true_positives(t, pred, margin) / len(t) for t in truths) / len(truths)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return f1, precision, recall


def partition(cps: Iterable[int], n: int) -> list[tuple[int, int]]:
    """Segments ``[start, end)`` of ``0..n-1`` cut at the change points ``cps``."""
    bounds = [0, *sorted({c for c in cps if 0 < c < n}), n]
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def jaccard(a: tuple[int, int], b: tuple[int, int]) -> float:
    """Jaccard index of two integer intervals ``[start, end)``."""
    inter = min(a[1], b[1]) - max(a[0], b[0])
    if inter <= 0:
        return 0.0
    return inter / (max(a[1], b[1]) - min(a[0], b[0]))


def cover_single(truth: list[tuple[int, int]], pred: list[tuple[int, int]], n: int) -> float:
    """C(S', S): how well the predicted partition ``pred`` covers the true partition ``truth``."""
    return sum((a[1] - a[0]) * max(jaccard(a, b) for b in pred) for a in truth) / n


def covering(annotations: Mapping[str, Sequence[int]], predictions: Iterable[int], n: int) -> float:
    """TCPDBench's cover: mean over annotators of C(annotator's partition, predicted partition)."""
    if not annotations:
        raise ValueError("no annotators")
    pred = partition(predictions, n)
    return sum(cover_single(partition(cps, n), pred, n) for cps in annotations.values()) / len(annotations)


def load(data_dir: Path) -> list[tuple[dict, dict]]:
    """(series record, truth record) of every dataset, in file order; every truth must have its series."""
    series = {}
    for line in (data_dir / "series.jsonl").read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            series[rec["id"]] = rec
    out = []
    for line in (data_dir / "truth.jsonl").read_text().splitlines():
        if line.strip():
            truth = json.loads(line)
            out.append((series[truth["id"]], truth))
    return out


def predict(name: str, rec: dict) -> list[int]:
    if name == "zero":
        return []
    if name == "ttest":
        values = [float(p["value"]) for p in rec["points"]]
        return [c["index"] for c in detect_changes(values, lower_is_better=True)]
    cps = detect_series(rec, online=name.startswith("online"))["change_points"]
    return [c["index"] for c in cps if name != "online_live" or not c["withdrawn"]]


def evaluate(corpus: list[tuple[dict, dict]], margin: int) -> dict:
    """Every detector on every dataset: ``report`` (per detector: means over datasets, change points, CPU),
    ``details`` (a row per dataset and detector) and ``scores`` (the unrounded per-dataset values the report
    averages, for ``combine``)."""
    acc = _empty()
    details = []
    for rec, truth in corpus:
        n = truth["length"]
        for name in DETECTORS:
            t0 = time.process_time()
            pred = predict(name, rec)
            cpu = time.process_time() - t0
            f1, _, _ = f_measure(truth["annotations"], pred, margin)
            cov = covering(truth["annotations"], pred, n)
            a = acc[name]
            a["f1"].append(f1)
            a["cover"].append(cov)
            a["change_points"] += len(pred)
            a["cpu_s"] += cpu
            details.append({"id": truth["id"], "length": n, "detector": name, "f1": round(f1, 4),
                            "cover": round(cov, 4), "predicted": sorted(pred)})
    return {"margin": margin, "report": _report(acc), "details": details, "scores": acc}


def combine(*results: dict) -> dict:
    """One result for the union of the datasets of several ``evaluate`` results, without detecting again."""
    acc = _empty()
    for res in results:
        for name, a in res["scores"].items():
            acc[name]["f1"] += a["f1"]
            acc[name]["cover"] += a["cover"]
            acc[name]["change_points"] += a["change_points"]
            acc[name]["cpu_s"] += a["cpu_s"]
    return {"margin": results[0]["margin"], "report": _report(acc),
            "details": [d for res in results for d in res["details"]], "scores": acc}


def _empty() -> dict:
    return {name: {"f1": [], "cover": [], "change_points": 0, "cpu_s": 0.0} for name in DETECTORS}


def _report(acc: dict) -> dict:
    return {name: {"datasets": len(a["f1"]),
                   "f1": round(sum(a["f1"]) / len(a["f1"]), 4) if a["f1"] else None,
                   "cover": round(sum(a["cover"]) / len(a["cover"]), 4) if a["cover"] else None,
                   "change_points": a["change_points"], "cpu_s": round(a["cpu_s"], 3)}
            for name, a in acc.items()}


COLS = ("datasets", "f1", "cover", "change_points", "cpu_s")


def markdown(report: dict) -> str:
    lines = ["| detector | " + " | ".join(COLS) + " |", "|---|" + "---|" * len(COLS)]
    for name in DETECTORS:
        r = report[name]
        lines.append(f"| {name} | " + " | ".join("-" if r[c] is None else str(r[c]) for c in COLS) + " |")
    return "\n".join(lines)


def markdown_details(details: list[dict]) -> str:
    lines = ["| dataset | length | detector | f1 | cover | predicted |", "|---|---|---|---|---|---|"]
    for d in details:
        lines.append(f"| {d['id']} | {d['length']} | {d['detector']} | {d['f1']} | {d['cover']} | "
                     f"{' '.join(map(str, d['predicted'])) or '-'} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=str(DATA_DIR))
    ap.add_argument("--margin", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--details", action="store_true", help="also give per-dataset rows")
    ap.add_argument("--tcpd-repo", default=None,
                    help="TCPD git directory: also score the univariate datasets not stored here")
    args = ap.parse_args()
    groups = {"stored": load(Path(args.data_dir))}
    if args.tcpd_repo:
        groups["not_stored"] = unstored(args.tcpd_repo)
    results = {name: evaluate(corpus, args.margin) for name, corpus in groups.items()}
    if args.tcpd_repo:
        results["all"] = combine(results["stored"], results["not_stored"])
        groups["all"] = groups["stored"] + groups["not_stored"]
    if args.json:
        out = {name: {k: v for k, v in res.items() if k != "scores" and (args.details or k != "details")}
               for name, res in results.items()}
        json.dump(out if args.tcpd_repo else out["stored"], sys.stdout, indent=1)
        print()
        return 0
    for name, res in results.items():
        source = args.data_dir if name == "stored" else args.tcpd_repo if name == "not_stored" else "both"
        print(f"{name}: {len(groups[name])} TCPD datasets from {source}; margin {args.margin}; mean over datasets\n")
        print(markdown(res["report"]))
        print()
        if args.details and name != "all":
            print(markdown_details(res["details"]))
            print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
