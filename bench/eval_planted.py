#!/usr/bin/env python3
"""Steps planted into real series: how often, and how soon, the online detector finds them.

    .venv/bin/python bench/eval_planted.py [--at 30] [--sizes -0.2,-0.1,-0.05,0.05,0.1,0.2] [--json]

The real corpus's labels are few and some sit off their change; a step planted into real noise has a known
culprit. Every level series of the corpus (``bench/eval_real.py``'s directories; kinds time, memory, score,
count, other; positive values) gives 100-build excerpts starting every 150 builds. Into each, a relative step of
each size is planted from build ``--at`` on, and the online detector (the upload worker's code path) runs over
it. A step is found by a live (not withdrawn) change point within 3 builds of ``--at`` in its direction; its delay
is ``detected_at - at``. The excerpts run unmodified too: the alerts raised there are the price of the finds.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from alerts.detection import Point, detect_online  # noqa: E402
from bench.eval_real import default_dirs  # noqa: E402

LEVEL_KINDS = ("time", "memory", "score", "count", "other")
LENGTH, EVERY, MARGIN = 100, 150, 3


def excerpts(dirs: list[Path]) -> list[tuple[str, bool, np.ndarray]]:
    """(kind, lower is better, values) of each 100-build excerpt of the level series under ``dirs``."""
    out = []
    for d in dirs:
        for line in (d / "series.jsonl").read_text().splitlines():
            rec = json.loads(line)
            v = np.array([p["value"] for p in rec["points"]], dtype=float)
            if rec["kind"] not in LEVEL_KINDS or (v <= 0).any():
                continue
            lib = rec.get("direction") == "lower_is_better"
            out += [(rec["kind"], lib, v[o:o + LENGTH]) for o in range(0, v.size - LENGTH + 1, EVERY)]
    return out


def run(dirs: list[Path], at: int, sizes: list[float]) -> dict:
    found: dict[float, list[int]] = {s: [] for s in sizes}
    plain = 0
    cut = np.arange(LENGTH) >= at
    ex = excerpts(dirs)
    for kind, lib, v in ex:
        plain += len(detect_online([Point(float(x)) for x in v], kind=kind, lower_is_better=lib))
        for size in sizes:
            y = v * np.where(cut, 1 + size, 1.0)
            cps = detect_online([Point(float(x)) for x in y], kind=kind, lower_is_better=lib)
            hit = [c for c in cps if not c.withdrawn and abs(c.index - at) <= MARGIN
                   and (c.rel_change > 0) == (size > 0)]
            if hit:
                found[size].append(hit[0].detected_at - at)
    rows = {f"{s:+.2f}": {"found": len(d), "of": len(ex),
                          "median_delay": round(float(np.median(d)), 1) if d else None,
                          "p90_delay": round(float(np.percentile(d, 90)), 1) if d else None} for s, d in found.items()}
    return {"at": at, "excerpts": len(ex), "alerts_unmodified": plain, "steps": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--at", type=int, default=30)
    ap.add_argument("--sizes", default="-0.2,-0.1,-0.05,0.05,0.1,0.2")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not 10 <= args.at <= LENGTH - 10:
        ap.error(f"--at must be within 10..{LENGTH - 10}")
    res = run(default_dirs(), args.at, [float(s) for s in args.sizes.split(",")])
    if args.json:
        print(json.dumps(res, indent=1))
        return 0
    print(f"{res['excerpts']} excerpts of {LENGTH} builds, step at build {res['at']}; "
          f"alerts on the excerpts unmodified: {res['alerts_unmodified']}\n")
    print("| step | found | median delay | p90 delay |\n|---|---|---|---|")
    for s, r in res["steps"].items():
        print(f"| {s} | {r['found']} / {r['of']} | {r['median_delay']} | {r['p90_delay']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
