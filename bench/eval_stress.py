#!/usr/bin/env python3
"""Noise that must not alert: alerts per 1000 builds on change-free series of named noise families.

    .venv/bin/python bench/eval_stress.py [--seeds 1,2] [--series 60] [--length 500] [--families a,b] [--jobs 2]
        [--json]

Issue 9 asks for no alerts on bimodal values alternating between builds, seasonal cycles, heavy tails and
single outliers, and the kit's calibration (``bench/eval_detect.py --calibration``) covers only Gaussian iid and
AR(1) noise. Each family below draws ``--series`` series of ``--length`` builds per seed with no change planted
(1% log-normal noise unless stated; values only, no runs, except ``runs_bimodal``), runs ``perfplatform
detect``'s code path online (withdrawn alerts counted: they were raised) and in hindsight, and the Perfherder-style
t-test (``bench/baselines/perfherder_ttest.py``, t > 7) beside them, and reports alerts per 1000 builds; every alert
is a false one. Issue 9's limit for generated sets is 0.5 per 1000 builds.

Families (``FAMILIES``): ``white``; ``ar05`` (AR(1) 0.5, all noise correlated); ``ar08``; ``ar08_white`` (AR(1)
0.8 of sd 1% plus 0.5% independent noise: the runner effect without runs, the noise model's known blind spot);
``seasonal`` (a 3% sine cycle of 7-30 builds on top); ``seasonal_long`` (the same cycle, 40-100 builds long: at
most two and a half cycles in the detector's 96-build window, so each half cycle reads as a level shift);
``bimodal`` (builds take a mode 8% higher at random, its share 0.2-0.8); ``alternating`` (every other build in that
mode); ``t2`` (Student t, 2 df, scaled to 1%); ``outliers`` (3% of builds 1.5-3x slower); ``runs_bimodal`` (memory,
5 runs a build, 30% of runs 10% higher); ``score_t3`` (a higher-is-better score, t with 3 df).

The fifth and sixth sessions measured these families with scripts that were not kept; this generator is written
again from their descriptions (its figures fall in the same ranges), so the ones in docs/DETECTION.md can be re-run.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.baselines.perfherder_ttest import detect_record  # noqa: E402
from perfplatform.detect_cmd import detect_series  # noqa: E402

SD = 0.01  # the families' noise on the log scale, unless stated


def ar1_noise(rng: np.random.Generator, n: int, rho: float, sd: float) -> np.ndarray:
    """Stationary AR(1) noise of marginal sd ``sd``."""
    e = np.empty(n)
    e[0] = rng.normal(0.0, sd)
    innov = rng.normal(0.0, sd * math.sqrt(1.0 - rho * rho), n)
    for i in range(1, n):
        e[i] = rho * e[i - 1] + innov[i]
    return e


def _white(rng, n):
    return rng.normal(0.0, SD, n)


def _cycle(shortest: float, longest: float) -> Callable[[np.random.Generator, int], np.ndarray]:
    """A 3% sine of a period drawn between ``shortest`` and ``longest`` builds, at a random phase, on white noise."""
    def gen(rng, n):
        period = rng.uniform(shortest, longest)
        phase = rng.uniform(0.0, 2 * math.pi)
        return 0.03 * np.sin(2 * math.pi * np.arange(n) / period + phase) + rng.normal(0.0, SD, n)
    return gen


def _bimodal(rng, n):
    share = rng.uniform(0.2, 0.8)
    return np.log1p(0.08) * (rng.random(n) < share) + rng.normal(0.0, SD, n)


def _alternating(rng, n):
    return np.log1p(0.08) * (np.arange(n) % 2 == 1) + rng.normal(0.0, SD, n)


def _t2(rng, n):
    return SD * rng.standard_t(2, n)


def _outliers(rng, n):
    slow = rng.random(n) < 0.03
    return rng.normal(0.0, SD, n) + slow * np.log(rng.uniform(1.5, 3.0, n))


def _score_t3(rng, n):
    return SD * rng.standard_t(3, n)


#: name -> (kind, direction, log-scale noise generator); ``runs_bimodal`` is built apart (it has runs).
FAMILIES: dict[str, tuple[str, str, Callable[[np.random.Generator, int], np.ndarray] | None]] = {
    "white": ("time", "lower_is_better", _white),
    "ar05": ("time", "lower_is_better", lambda rng, n: ar1_noise(rng, n, 0.5, SD)),
    "ar08": ("time", "lower_is_better", lambda rng, n: ar1_noise(rng, n, 0.8, SD)),
    "ar08_white": ("time", "lower_is_better", lambda rng, n: ar1_noise(rng, n, 0.8, SD) + rng.normal(0.0, SD / 2, n)),
    "seasonal": ("time", "lower_is_better", _cycle(7.0, 30.0)),
    "seasonal_long": ("time", "lower_is_better", _cycle(40.0, 100.0)),
    "bimodal": ("time", "lower_is_better", _bimodal),
    "alternating": ("time", "lower_is_better", _alternating),
    "t2": ("time", "lower_is_better", _t2),
    "outliers": ("time", "lower_is_better", _outliers),
    "runs_bimodal": ("memory", "lower_is_better", None),
    "score_t3": ("score", "higher_is_better", _score_t3),
}


#: Each family's random stream for a seed: the first eleven in the order they had when their figures were taken
#: (sorted names); a family added later takes the next stream, so the earlier figures stay reproducible.
STREAMS = ("alternating", "ar05", "ar08", "ar08_white", "bimodal", "outliers", "runs_bimodal", "score_t3",
           "seasonal", "t2", "white", "seasonal_long")


def _points(family: str, rng: np.random.Generator, length: int) -> list[dict]:
    kind, _, gen = FAMILIES[family]
    if gen is None:  # 5 runs a build around a per-build level; 30% of runs 10% higher
        level = rng.normal(0.0, SD / 2, length)
        pts = []
        for i in range(length):
            runs = np.exp(level[i] + rng.normal(0.0, SD, 5) + np.log1p(0.10) * (rng.random(5) < 0.3)) * 2e8
            pts.append({"build": f"b{i}", "value": float(np.median(runs)), "samples": runs.tolist()})
        return pts
    base = 100.0 if kind == "score" else 1000.0
    y = base * np.exp(gen(rng, length))
    return [{"build": f"b{i}", "value": float(v)} for i, v in enumerate(y)]


def series(family: str, seed: int, count: int, length: int) -> list[dict]:
    """The ``count`` change-free series of ``family`` for ``seed`` (deterministic in all four)."""
    rng = np.random.default_rng([seed, STREAMS.index(family)])
    kind, direction, _ = FAMILIES[family]
    return [{"id": f"{family}-{seed}-{i:03d}", "metric": family, "kind": kind, "unit": "", "direction": direction,
             "points": _points(family, rng, length)} for i in range(count)]


def run_one(family: str, seed: int, count: int, length: int) -> dict:
    recs = series(family, seed, count, length)
    builds = count * length
    row: dict = {"family": family, "seed": seed, "series": count, "builds": builds}
    for mode in ("online", "hindsight"):
        cps = [cp for rec in recs for cp in detect_series(rec, online=mode == "online")["change_points"]]
        row[f"{mode}_alerts"] = len(cps)
        row[f"{mode}_per_1000"] = round(1000.0 * len(cps) / builds, 3)
        if mode == "online":
            row["online_live"] = sum(1 for cp in cps if not cp["withdrawn"])
    tt = sum(len(detect_record(rec)) for rec in recs)
    row["ttest_alerts"], row["ttest_per_1000"] = tt, round(1000.0 * tt / builds, 3)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--series", type=int, default=60)
    ap.add_argument("--length", type=int, default=500)
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    families = args.families.split(",")
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        ap.error(f"--families: unknown {', '.join(unknown)} (known: {', '.join(FAMILIES)})")
    seeds = [int(s) for s in args.seeds.split(",")]
    jobs = [(f, s, args.series, args.length) for f in families for s in seeds]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(run_one, *zip(*jobs, strict=True)))
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        print()
        return 0
    print(f"{args.series} series x {args.length} builds per family and seed, no change planted; "
          "alerts per 1000 builds (online: withdrawn included)\n")
    print("| family | seed | online | online alerts (live) | hindsight | Perfherder-style t-test |\n"
          "|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['family']} | {r['seed']} | {r['online_per_1000']} | {r['online_alerts']} ({r['online_live']}) "
              f"| {r['hindsight_per_1000']} | {r['ttest_per_1000']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
