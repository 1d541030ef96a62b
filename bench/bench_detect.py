#!/usr/bin/env python3
"""Speed of the detector, measured in one run beside a Perfherder-style baseline (CPU time).

    .venv/bin/python bench/bench_detect.py [--series dev.jsonl | --eval-dir ../shared/eval] [--json]
        [--perfherder-repo GIT_DIR]

1. ``detect --online`` over a series set (default: ``gen_series.py --n 400 --seed 1``, ~120,000 build
   arrivals), beside the Perfherder-style windowed t-test (``bench/baselines/perfherder_ttest.py``, 12/24/12,
   t > 7 at its peak, >= 2%, one value per build) scanning the same set once, offline. Inputs are parsed before timing;
   parsing is reported separately. Both the baseline (pure Python, per-build windows, as Treeherder's perfalert)
   and a vectorised numpy variant of it are timed; with ``--perfherder-repo`` (a clone of mozilla/treeherder)
   also Perfherder's own ``perfalert.detect_changes`` read from it (``bench/baselines/perfherder_reference.py``),
   which finds the same changes at about 3x the baseline's CPU.
2. One build of 150 metrics with 200 builds of history each, as the stateless worker does it: for every metric,
   ``OnlineDetector.resume`` from the stored window, then ``step`` with the new build (median of 30 builds).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from baselines.perfherder_reference import detect_changes_reference, load_perfalert  # noqa: E402
from baselines.perfherder_ttest import detect_changes, detect_changes_fast  # noqa: E402

from alerts.detection import DEFAULT, OnlineDetector, detect_online  # noqa: E402
from alerts.detection.online import NOISE_EVERY  # noqa: E402
from perfplatform.detect_cmd import series_points  # noqa: E402


def cpu(fn):
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def bench_set(records: list[dict], reference=None) -> dict:
    """CPU of ``detect --online`` over ``records`` beside the baselines' (``reference``: Perfherder's own module)."""
    t_parse, points = cpu(lambda: [series_points(r) for r in records])
    arrivals = sum(len(p) for p in points)
    values = [[p["value"] for p in r["points"]] for r in records]

    def online():
        return [detect_online(p, kind=r.get("kind", "other")) for r, p in zip(records, points, strict=True)]

    def perfherder():
        return [detect_changes(v) for v in values]

    def perfherder_fast():
        return [detect_changes_fast(v) for v in values]

    t_ph, _ = cpu(perfherder)
    t_on, _ = cpu(online)
    t_phf, _ = cpu(perfherder_fast)
    t_ph2, _ = cpu(perfherder)
    t_on2, _ = cpu(online)
    t_ph, t_on = min(t_ph, t_ph2), min(t_on, t_on2)
    out = {"series": len(records), "arrivals": arrivals, "parse_points_s": round(t_parse, 3),
           "online_s": round(t_on, 3), "online_us_per_arrival": round(1e6 * t_on / arrivals, 2),
           "perfherder_s": round(t_ph, 3), "perfherder_numpy_s": round(t_phf, 3),
           "ratio_online_over_perfherder": round(t_on / t_ph, 3)}
    if reference is not None:
        t_own, _ = cpu(lambda: [detect_changes_reference(reference, v) for v in values])
        out.update(perfherder_own_s=round(t_own, 3), perfherder_commit=reference.source_commit,
                   ratio_online_over_perfherder_own=round(t_on / t_own, 3))
    return out


def bench_build(records: list[dict], n_metrics: int = 150, history: int = 200, builds: int = 30) -> dict:
    pool = [(r.get("kind", "other"), series_points(r)) for r in records if len(r["points"]) > history + builds]
    metrics = [pool[i % len(pool)] for i in range(n_metrics)]
    keep = DEFAULT.window + NOISE_EVERY
    per_build, per_build_stream = [], []
    streams = []
    for kind, pts in metrics:
        det = OnlineDetector(kind)
        for p in pts[:history]:
            det.step(p)
        streams.append(det)
    for b in range(builds):
        k = history + b
        t0 = time.process_time()
        for kind, pts in metrics:
            det = OnlineDetector.resume(pts[k - keep:k], [], start_index=k - keep, kind=kind)
            det.step(pts[k])
        per_build.append(time.process_time() - t0)
        t0 = time.process_time()
        for det, (_, pts) in zip(streams, metrics, strict=True):
            det.step(pts[k])
        per_build_stream.append(time.process_time() - t0)
    return {"metrics": n_metrics, "history": history, "builds": builds,
            "resume_and_step_ms_median": round(1e3 * statistics.median(per_build), 2),
            "resume_and_step_ms_max": round(1e3 * max(per_build), 2),
            "streaming_step_ms_median": round(1e3 * statistics.median(per_build_stream), 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--series", help="series JSONL (default: generate --n 400 --seed 1 with the eval kit)")
    ap.add_argument("--eval-dir", default=str(ROOT.parent / "shared" / "eval"))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--perfherder-repo", metavar="GIT_DIR",
                    help="a clone of mozilla/treeherder: also time Perfherder's own detector from it")
    args = ap.parse_args()
    reference = None
    if args.perfherder_repo:
        try:
            reference = load_perfalert(args.perfherder_repo)
        except subprocess.CalledProcessError as exc:
            print(f"bench_detect.py: --perfherder-repo {args.perfherder_repo}: cannot read Perfherder's code "
                  f"({exc.stderr.strip() or exc})", file=sys.stderr)
            return 2
    path = args.series
    if not path:
        tmp = Path(tempfile.mkdtemp(prefix="bench-detect-"))
        path = str(tmp / "dev.jsonl")
        subprocess.run([sys.executable, str(Path(args.eval_dir) / "gen_series.py"), "--n", "400", "--seed", "1",
                        "--out", path, "--truth", str(tmp / "truth.jsonl")], check=True)
    t_json, records = cpu(lambda: [json.loads(x) for x in open(path) if x.strip()])
    result = {"machine": {"nproc": os.cpu_count(), "python": platform.python_version(),
                          "platform": platform.platform(), "processor": platform.processor()},
              "json_load_s": round(t_json, 3), "set": bench_set(records, reference), "build": bench_build(records)}
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
        return 0
    s, b = result["set"], result["build"]
    print(f"machine: {result['machine']}")
    print(f"set: {s['series']} series, {s['arrivals']} arrivals (json {result['json_load_s']} s, "
          f"Points {s['parse_points_s']} s, not included below)")
    print(f"  detect --online          {s['online_s']:8.3f} s CPU  ({s['online_us_per_arrival']} us/arrival)")
    print(f"  perfherder t-test        {s['perfherder_s']:8.3f} s CPU  (the baseline: pure Python, offline, once)")
    print(f"  perfherder t-test numpy  {s['perfherder_numpy_s']:8.3f} s CPU  (vectorised variant)")
    print(f"  ratio online / perfherder: {s['ratio_online_over_perfherder']}")
    if reference is not None:
        print(f"  Perfherder's own code    {s['perfherder_own_s']:8.3f} s CPU  (treeherder {s['perfherder_commit'][:12]})")
        print(f"  ratio online / Perfherder's own code: {s['ratio_online_over_perfherder_own']}")
    print(f"build of {b['metrics']} metrics x {b['history']} history: resume+step median "
          f"{b['resume_and_step_ms_median']} ms, max {b['resume_and_step_ms_max']} ms CPU; "
          f"in-memory streaming step median {b['streaming_step_ms_median']} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
