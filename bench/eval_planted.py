#!/usr/bin/env python3
"""Steps planted into real series: how often, and how soon, the online detector (or hindsight) finds them.

    .venv/bin/python bench/eval_planted.py [--at 30] [--sizes -0.2,-0.1,-0.05,0.05,0.1,0.2] [--length 100]
        [--excursion SIZE:BUILDS:GAP] [--hindsight] [--json]

The real corpus's labels are few and some sit off their change; a step planted into real noise has a known
culprit. Every level series of the corpus (``bench/eval_real.py``'s directories; kinds time, memory, score,
count, other; positive values) gives 100-build excerpts starting every 150 builds. Into each, a relative step of
each size is planted from build ``--at`` on, and the online detector (the upload worker's code path) runs over
it. A step is found by a live (not withdrawn) change point within 3 builds of ``--at`` in its direction; its delay
is ``detected_at - at``. The excerpts run unmodified too: the alerts raised there are the price of the finds.

``--excursion 0.2:2:2`` plants before each step a change backed out: +20% on builds ``at``, ``at + 1``, then 2
builds back at the old level, the step from ``at + 4`` on; a step is then found within 3 builds of ``at + 4``, and
``on_excursion`` counts the other excerpts whose live change of the step's direction sits on the excursion's first
build (the backed-out commit blamed), and ``beside`` the excerpts whose step is found but a change of either
direction also sits on that build (the backed-out commit reported as a change of its own, its revert not; right for
a change that held). More than ``evaluate.BACKOUT_WITHIN`` (5) builds is a change that held, then its revert, then
the step: a step right after a revert (a backout, then the reland). ``--length`` sets the excerpts' length (every
``length + 50`` builds). ``--hindsight`` runs ``detect_hindsight`` (the whole history known) instead of the online
detector; its delay is the ``detected_at`` it carries over.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from alerts.detection import Point, detect_hindsight, detect_online  # noqa: E402
from bench.eval_real import default_dirs  # noqa: E402

LEVEL_KINDS = ("time", "memory", "score", "count", "other")
LENGTH, EVERY, MARGIN = 100, 150, 3


def excerpts(dirs: list[Path], length: int = LENGTH) -> list[tuple[str, bool, np.ndarray]]:
    """(kind, lower is better, values) of each ``length``-build excerpt of the level series under ``dirs``."""
    out = []
    for d in dirs:
        for line in (d / "series.jsonl").read_text().splitlines():
            rec = json.loads(line)
            v = np.array([p["value"] for p in rec["points"]], dtype=float)
            if rec["kind"] not in LEVEL_KINDS or (v <= 0).any():
                continue
            lib = rec.get("direction") == "lower_is_better"
            out += [(rec["kind"], lib, v[o:o + length]) for o in range(0, v.size - length + 1, length + EVERY - LENGTH)]
    return out


def run(dirs: list[Path], at: int, sizes: list[float], length: int = LENGTH,
        excursion: tuple[float, int, int] | None = None, hindsight: bool = False) -> dict:
    detect = detect_hindsight if hindsight else detect_online
    found: dict[float, list[int]] = {s: [] for s in sizes}
    blamed = dict.fromkeys(sizes, 0)
    beside = dict.fromkeys(sizes, 0)
    plain = 0
    size_x, builds_x, gap_x = excursion or (0.0, 0, 0)
    step_at = at + builds_x + gap_x
    idx = np.arange(length)
    cut = idx >= step_at
    exc = np.where((idx >= at) & (idx < at + builds_x), 1 + size_x, 1.0)
    ex = excerpts(dirs, length)
    for kind, lib, v in ex:
        plain += len(detect([Point(float(x)) for x in v], kind=kind, lower_is_better=lib))
        for size in sizes:
            y = v * exc * np.where(cut, 1 + size, 1.0)
            cps = [c for c in detect([Point(float(x)) for x in y], kind=kind, lower_is_better=lib) if not c.withdrawn]
            live = [c for c in cps if (c.rel_change > 0) == (size > 0)]
            hit = [c for c in live if abs(c.index - step_at) <= MARGIN]
            if hit:
                found[size].append(hit[0].detected_at - step_at)
                beside[size] += bool(excursion) and any(abs(c.index - at) <= 1 for c in cps)
            elif excursion and any(abs(c.index - at) <= 1 for c in live):
                blamed[size] += 1
    rows = {f"{s:+.2f}": {"found": len(d), "of": len(ex),
                          "median_delay": round(float(np.median(d)), 1) if d else None,
                          "p90_delay": round(float(np.percentile(d, 90)), 1) if d else None} for s, d in found.items()}
    if excursion:
        for s in sizes:
            rows[f"{s:+.2f}"]["on_excursion"] = blamed[s]
            rows[f"{s:+.2f}"]["beside"] = beside[s]
    return {"detector": "hindsight" if hindsight else "online", "at": at, "step_at": step_at, "excerpts": len(ex),
            "alerts_unmodified": plain, "steps": rows}


def _excursion(arg: str) -> tuple[float, int, int]:
    size, builds, gap = arg.split(":")
    if not (int(builds) >= 1 and int(gap) >= 1):
        raise argparse.ArgumentTypeError("SIZE:BUILDS:GAP with BUILDS >= 1 and GAP >= 1")
    return float(size), int(builds), int(gap)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--at", type=int, default=30)
    ap.add_argument("--sizes", default="-0.2,-0.1,-0.05,0.05,0.1,0.2")
    ap.add_argument("--length", type=int, default=LENGTH)
    ap.add_argument("--excursion", type=_excursion, help="SIZE:BUILDS:GAP, e.g. 0.2:2:2")
    ap.add_argument("--hindsight", action="store_true", help="run detect_hindsight instead of the online detector")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    step_at = args.at + (args.excursion[1] + args.excursion[2] if args.excursion else 0)
    if not (10 <= args.at and step_at <= args.length - 10):
        ap.error(f"--at (and the step after an excursion) must be within 10..{args.length - 10}")
    res = run(default_dirs(), args.at, [float(s) for s in args.sizes.split(",")], args.length, args.excursion,
              args.hindsight)
    if args.json:
        print(json.dumps(res, indent=1))
        return 0
    print(f"{res['detector']}: {res['excerpts']} excerpts of {args.length} builds, step at build {res['step_at']}; "
          f"alerts on the excerpts unmodified: {res['alerts_unmodified']}\n")
    extra = args.excursion is not None
    print("| step | found | median delay | p90 delay |" + (" on the excursion | beside the step |" if extra else "")
          + "\n|---|---|---|---|" + ("---|---|" if extra else ""))
    for s, r in res["steps"].items():
        print(f"| {s} | {r['found']} / {r['of']} | {r['median_delay']} | {r['p90_delay']} |"
              + (f" {r['on_excursion']} | {r['beside']} |" if extra else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
