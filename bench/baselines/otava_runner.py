#!/usr/bin/env python3
"""Run Apache Otava (``otava.analysis.compute_change_points``) over a series JSONL; run INSIDE otava's venv.

    otava_runner.py SERIES.jsonl OUT.jsonl [--online-limit N]

Hindsight: one call per series (window 50, p < 0.001, Otava 0.8 defaults), one value per build. Online: the
incremental mode (``new_data=1`` with the previous weak change points), build by build, for the first
``--online-limit`` series only (it is slow); ``detected_at`` is the first build at which a change point
appeared. Prints CPU seconds as JSON on stderr.
"""

import argparse
import json
import sys
import time

from otava.analysis import compute_change_points


def direction(cp, lower_is_better=True):
    up = cp.stats.mean_2 > cp.stats.mean_1
    return "regression" if up == lower_is_better else "improvement"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("series")
    ap.add_argument("out")
    ap.add_argument("--online-out")
    ap.add_argument("--online-limit", type=int, default=20)
    args = ap.parse_args()
    recs = [json.loads(x) for x in open(args.series) if x.strip()]
    t0 = time.process_time()
    with open(args.out, "w") as f:
        for r in recs:
            vals = [p["value"] for p in r["points"]]
            cps, _ = compute_change_points(vals, window_len=50, max_pvalue=0.001)
            out = [{"index": int(cp.index), "direction": direction(cp), "p_value": float(cp.stats.pvalue)} for cp in cps]
            f.write(json.dumps({"id": r["id"], "change_points": out}) + "\n")
    t_hind = time.process_time() - t0
    arrivals = 0
    t0 = time.process_time()
    if args.online_out:
        with open(args.online_out, "w") as f:
            for r in recs[: args.online_limit]:
                vals = [p["value"] for p in r["points"]]
                weak, seen = None, {}
                for k in range(1, len(vals) + 1):
                    arrivals += 1
                    cps, weak = compute_change_points(vals[:k], window_len=50, max_pvalue=0.001,
                                                      new_data=1 if weak is not None else None, old_weak_cp=weak)
                    for cp in cps:
                        seen.setdefault((int(cp.index), direction(cp)), k - 1)
                out = [{"index": i, "direction": d, "detected_at": at} for (i, d), at in sorted(seen.items())]
                f.write(json.dumps({"id": r["id"], "change_points": out}) + "\n")
    t_on = time.process_time() - t0
    json.dump({"series": len(recs), "hindsight_cpu_s": round(t_hind, 3), "online_series": args.online_limit,
               "online_arrivals": arrivals, "online_cpu_s": round(t_on, 3)}, sys.stderr)
    print(file=sys.stderr)


if __name__ == "__main__":
    main()
