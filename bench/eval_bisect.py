#!/usr/bin/env python3
"""Accuracy and cost of bisection/confirmation over simulated scenarios (the pure harness).

    .venv/bin/python bench/eval_bisect.py [--trials 400] [--seed 1]

Each scenario draws a culprit build covering 2-20 commits (1-20 for false alerts), a branch history of
80 builds before and 6 after it from the hidden truth of ``tests/bisect_sim.py``, lets the detector's
statistics estimate levels, p-value and noise, then runs ``alerts.detection.bisect.decide`` with
requested runs drawn from the same truth. "withdrawn" is the share ending not_reproduced: wanted for
false alerts, a mistake for real shifts. Rows: clear shifts (3-8 sigma of the between-build noise),
noisy shifts (1.5-3 sigma) and planted false alerts (branch builds after the culprit build offset by
2.5-3.5 sigma by a slow runner pool; re-runs do not show it). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from alerts.detection.bisect import request_bound  # noqa: E402
from tests.bisect_sim import Truth, per_build_sigma, simulate  # noqa: E402

KINDS = ("time", "memory", "size", "rate")


def truth_for(kind: str, scenario: str, rng: np.random.Generator) -> tuple[Truth, float]:
    lo = 1 if scenario == "false" else 2
    n = int(rng.integers(lo, 21))
    c = int(rng.integers(1, n + 1))
    sign = 1 if rng.random() < 0.7 else -1
    if kind == "size":
        rel = float(rng.uniform(0.006, 0.03)) * sign
        return Truth(kind, 3e7, rel if scenario != "false" else 0.0, c, n, creep=1e-5), 0.0
    base = 0.005 if kind == "rate" else 400.0
    sig = per_build_sigma(Truth(kind, base, 0.0, 1, n))
    if scenario == "false":
        return Truth(kind, base, 0.0, c, n), math.expm1(float(rng.uniform(2.5, 3.5)) * sig * sign)
    k = float(rng.uniform(3.0, 8.0) if scenario == "clear" else rng.uniform(1.5, 3.0))
    return Truth(kind, base, math.expm1(k * sig * sign), c, n), 0.0


def share(x: int, n: int) -> str:
    return f"{100 * x / n:.1f}%"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=400, help="scenarios per kind and row")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print("| kind | scenarios | n | culprit exact | exact within bound | withdrawn | requests (mean / max) "
          "| runs per alert (mean) | outside range |")
    print("|---|---|---|---|---|---|---|---|---|")
    for scenario in ("clear", "noisy", "false"):
        for kind in KINDS:
            if kind == "size" and scenario != "clear":
                continue  # deterministic: no noisy shifts, and a rebuild reproduces every size
            exact = bounded = withdrawn = outside = 0
            reqs, runs = [], []
            for _ in range(args.trials):
                truth, offset = truth_for(kind, scenario, rng)
                r = simulate(truth, rng, false_offset=offset)
                outside += sum(1 for i, _, _ in r.requests if not 0 <= i <= truth.n)
                reqs.append(len(r.requests))
                runs.append(sum(x for _, x, _ in r.requests))
                withdrawn += r.outcome == "not_reproduced"
                if scenario != "false":
                    exact += r.culprit == truth.culprit
                    bounded += r.culprit == truth.culprit and len(r.requests) <= request_bound(truth.n)
            t = args.trials
            print(f"| {kind} | {scenario} | {t} | {share(exact, t) if scenario != 'false' else '–'} "
                  f"| {share(bounded, t) if scenario != 'false' else '–'} | {share(withdrawn, t)} "
                  f"| {np.mean(reqs):.2f} / {max(reqs)} | {np.mean(runs):.1f} | {outside} |")


if __name__ == "__main__":
    main()
