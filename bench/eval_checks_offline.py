#!/usr/bin/env python3
"""Pre-merge check statistics on the evaluation kit's scenarios, in-process (no server, no database).

    .venv/bin/python bench/eval_checks_offline.py [--eval-dir ../shared/eval] [--seeds 3,4,5] [--prs 60]
        [--params P.json] [--misses]

Each pull-request build of ``gen_checks.generate`` goes through ``alerts.detection.checks.run_check`` with
the base branch's last 40 builds up to its merge-base, as ``alerts.premerge`` passes them, and is scored as
``run_checks.py`` scores a server: A/A checks failed, planted regressions caught naming the right metric,
metrics flagged that were not planted. Pull requests without a baseline are left out (the server run shows
those never fail). Many seeds take seconds here where ``bench/eval_checks.py`` takes minutes; the two agree
on the seeds run both ways (docs/CHECKS.md).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from alerts.detection.checks import HISTORY_BUILDS, MetricInput, run_check  # noqa: E402
from alerts.detection.model import Point  # noqa: E402


def load_generator(eval_dir: Path):
    spec = importlib.util.spec_from_file_location("gen_checks", eval_dir / "gen_checks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def to_point(m: dict) -> Point:
    if "samples" in m:
        s = np.asarray(m["samples"], float)
        return Point(float(np.median(s)), s)
    if "count" in m:
        return Point(m["count"] / m["total"], None, m["count"], m["total"])
    return Point(float(m["value"]))


def score_seed(gen, seed: int, prs: int, params: dict) -> tuple[Counter, list[tuple]]:
    p = dict(gen.DEFAULTS)
    p.update(params)
    uploads, truth = gen.generate(seed, prs, p)
    base = [u["body"] for u in uploads if u["role"] == "base"]
    index = {b["build"]["commit"]: k for k, b in enumerate(base)}
    out: Counter = Counter()
    misses = []
    for u in uploads:
        body = u["body"]
        t = truth["prs"].get(body["build"]["id"])
        if u["role"] != "pr" or t["no_baseline"]:
            continue
        k = index[body["build"]["base_commit"]]
        hist = base[max(0, k - HISTORY_BUILDS + 1):k + 1]
        inputs = [MetricInput(m["name"], m["kind"], to_point(m), [to_point(h["metrics"][j]) for h in hist],
                              unit=m["unit"]) for j, m in enumerate(body["metrics"])]
        rows = run_check(inputs)
        flagged = {r.metric for r in rows if r.verdict == "regression"}
        if t["planted"] is None:
            out["clean"] += 1
            out["clean_failed"] += bool(flagged)
        else:
            out["planted"] += 1
            out["detected"] += t["planted"] in flagged
            if t["planted"] not in flagged:
                r = next(r for r in rows if r.metric == t["planted"])
                misses.append((body["build"]["id"], r.metric, r.verdict, r.rel_change, r.p_value))
        out["wrong_flags"] += len(flagged - {t["planted"]})
    return out, misses


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval-dir", default=str(ROOT.parent / "shared" / "eval"))
    ap.add_argument("--seeds", default="3,4,5")
    ap.add_argument("--prs", type=int, default=60)
    ap.add_argument("--params", help="JSON file overriding gen_checks.DEFAULTS")
    ap.add_argument("--misses", action="store_true", help="list the planted regressions not caught")
    a = ap.parse_args()
    gen = load_generator(Path(a.eval_dir))
    params = json.loads(Path(a.params).read_text()) if a.params else {}
    total: Counter = Counter()
    for seed in (int(s) for s in a.seeds.split(",")):
        r, misses = score_seed(gen, seed, a.prs, params)
        total.update(r)
        print(f"seed {seed}: clean failed {r['clean_failed']}/{r['clean']}, caught {r['detected']}/{r['planted']}, "
              f"wrong flags {r['wrong_flags']}", flush=True)
        for m in misses if a.misses else ():
            print("   missed", m)
    n_prs = total["clean"] + total["planted"]
    print(json.dumps({**total, "caught_share": round(total["detected"] / max(total["planted"], 1), 4),
                      "clean_failed_share": round(total["clean_failed"] / max(total["clean"], 1), 4),
                      "wrong_flags_per_60": round(60 * total["wrong_flags"] / max(n_prs, 1), 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
