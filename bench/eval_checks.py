#!/usr/bin/env python3
"""Pre-merge checks end to end: the evaluation kit's scenario through a running server, plus a baseline.

    .venv/bin/python bench/eval_checks.py [--eval-dir ../shared/eval] [--seeds 11,12] [--prs 60]
        [--params P.json]

For each seed: generates a scenario with ``gen_checks.py``, starts gunicorn on a free port over a fresh
database (SQLite, or PostgreSQL beside ``DATABASE_URL``; tasks in-process unless ``REDIS_URL`` is set, then
start a worker yourself), runs ``run_checks.py`` against it and stops it. The same scenario is scored for a
Pinpoint-style baseline: a Mann-Whitney U test on the runs of the head build against the runs of the base
build alone, per metric at p < 0.01, sizes compared exactly, rates by a plain Poisson test (no between-build
variance, no correction for the number of metrics).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.live import LiveEnv  # noqa: E402

MW_ALPHA = 0.01


def mann_whitney_baseline(uploads: list[dict], truth: dict) -> dict:
    base = {}
    for u in uploads:
        if u["role"] == "base":
            b = u["body"]
            base[(b["build"]["commit"], b["device"])] = {m["name"]: m for m in b["metrics"]}
    r = {"clean": 0, "clean_failed": 0, "planted": 0, "detected": 0, "wrong_flags": 0, "no_baseline": 0,
         "no_baseline_failed": 0}
    for u in uploads:
        if u["role"] != "pr":
            continue
        b = u["body"]
        ref = base.get((b["build"]["base_commit"], b["device"]), {})
        flagged = set()
        for m in b["metrics"]:
            o = ref.get(m["name"])
            if o is None:
                continue
            if "samples" in m:
                p = stats.mannwhitneyu(m["samples"], o["samples"], alternative="two-sided").pvalue
                worse = np.median(m["samples"]) > np.median(o["samples"])
            elif "count" in m:
                c1, c0 = m["count"], o["count"]
                p = stats.binomtest(c1, c1 + c0, m["total"] / (m["total"] + o["total"])).pvalue if c1 + c0 else 1.0
                worse = c1 > c0
            else:
                d = m["value"] - o["value"]
                p = 0.0 if d != 0 and (abs(d) >= 100000 or abs(d) / o["value"] >= 0.005) else 1.0
                worse = d > 0
            if p < MW_ALPHA and worse:
                flagged.add(m["name"])
        t = truth["prs"][b["build"]["id"]]
        failed = bool(flagged)
        if t["no_baseline"]:
            r["no_baseline"] += 1
            r["no_baseline_failed"] += failed
            continue
        if t["planted"] is None:
            r["clean"] += 1
            r["clean_failed"] += failed
        else:
            r["planted"] += 1
            r["detected"] += t["planted"] in flagged
        r["wrong_flags"] += len(flagged - {t["planted"]})
    return r


def run_seed(eval_dir: Path, seed: int, prs: int, params: str | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        up, tr = tmp / "uploads.jsonl", tmp / "truth.json"
        cmd = [sys.executable, str(eval_dir / "gen_checks.py"), "--seed", str(seed), "--prs", str(prs),
               "--out", str(up), "--truth", str(tr)] + (["--params", params] if params else [])
        subprocess.run(cmd, check=True)
        env = LiveEnv(tmp)
        try:
            token = env.token(json.loads(up.read_text().splitlines()[0])["body"]["app"])
            url = env.start_web()
            out = subprocess.run([sys.executable, str(eval_dir / "run_checks.py"), "--server", url, "--token", token,
                                  "--uploads", str(up), "--truth", str(tr), "--json"],
                                 check=True, capture_output=True, text=True, timeout=3600)
            ours = json.loads(out.stdout)
        finally:
            env.close()
        uploads = [json.loads(line) for line in up.read_text().splitlines()]
        baseline = mann_whitney_baseline(uploads, json.loads(tr.read_text()))
    return {"seed": seed, "platform": ours, "mann_whitney": baseline}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval-dir", default="../shared/eval" if (ROOT.parent / "shared").is_dir() else "/work/shared/eval")
    ap.add_argument("--seeds", default="11,12")
    ap.add_argument("--prs", type=int, default=60)
    ap.add_argument("--params")
    a = ap.parse_args()
    for s in a.seeds.split(","):
        res = run_seed(Path(a.eval_dir), int(s), a.prs, a.params)
        o, mw = res["platform"], res["mann_whitney"]
        print(json.dumps(res))
        print(f"seed {s}: platform: clean failed {o['clean_failed']}/{o['clean']}, caught {o['detected']}/{o['planted']}, "
              f"wrong flags {o['wrong_flags']}, no-baseline failed {o['no_baseline_failed']}/{o['no_baseline']}, "
              f"slowest {o['seconds']} s, unanswered {len(o['unanswered'])}; "
              f"Mann-Whitney: clean failed {mw['clean_failed']}/{mw['clean']}, caught {mw['detected']}/{mw['planted']}, "
              f"wrong flags {mw['wrong_flags']}, no-baseline failed {mw['no_baseline_failed']}/{mw['no_baseline']}",
              flush=True)


if __name__ == "__main__":
    main()
