#!/usr/bin/env python3
"""How correlated is the noise of the real series between their changes? Variograms within segments.

    .venv/bin/python bench/noise_structure.py [--dirs DIR,...] [--lags 2,4,8,16] [--json]

The detector's noise model (``statistics.estimate_noise``) fits the lag-1 and lag-4 differences of a window; a
runner effect that persists for many builds on top of independent noise (AR(1) 0.8 plus white noise, values
only) is read as weaker correlation than it is, and raises false alarms on such generated series
(``bench/eval_stress.py``, ``ar08_white``). Whether real series have that structure decides whether the blind
spot matters for users. For each level series of the real corpus (``bench/eval_real.py``'s directories; kinds
other than size and rate, positive values), the series is cut at the hindsight detector's change points, and the
variogram ``g(l) = trimmed_scale(y[k + l] - y[k])^2 / 2`` of the log values is taken over the differences
inside the segments only (no difference spans a detected change). Reported: the median and quartiles over
series of ``g(l) / g(1)``: about 1 at every lag for independent noise, ``(1 - rho^l) / (1 - rho)`` for AR(1)
noise. The same is computed for change-free generated families of ``bench/eval_stress.py`` (segmented the same
way, so the detector's own false alarms cut them as they cut the real series), next to the model's values.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from alerts.detection.statistics import trimmed_scale  # noqa: E402
from bench.eval_real import default_dirs, load_corpus  # noqa: E402
from bench.eval_stress import series as stress_series  # noqa: E402
from perfplatform.detect_cmd import detect_series  # noqa: E402

MIN_DIFFS = 20  # fewer differences at a lag leave its scale too rough to compare


def segment_variogram(y: np.ndarray, cuts: list[int], lags: tuple[int, ...]) -> dict[int, float] | None:
    """``{l: g(l) / g(1)}`` over the differences inside the segments of ``y`` cut at ``cuts``; None when a lag has
    fewer than ``MIN_DIFFS`` such differences or ``g(1)`` is zero."""
    bounds = [0, *sorted(c for c in cuts if 0 < c < y.size), y.size]
    segs = [y[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    g = {}
    for lag in (1, *lags):
        d = [s[lag:] - s[:-lag] for s in segs if s.size > lag]
        if not d or sum(x.size for x in d) < MIN_DIFFS:
            return None
        g[lag] = trimmed_scale(np.concatenate(d)) ** 2 / 2
    if g[1] <= 0:
        return None
    return {lag: g[lag] / g[1] for lag in lags}


def _hindsight_cuts(rec: dict) -> list[int]:
    return [cp["index"] for cp in detect_series(rec, online=False)["change_points"]]


def summary(ratios: list[dict[int, float]], lags: tuple[int, ...]) -> dict:
    a = np.array([[r[lag] for lag in lags] for r in ratios])
    return {"series": len(ratios), **{f"q{q}": [round(float(v), 2) for v in np.quantile(a, q / 100, axis=0)]
                                       for q in (25, 50, 75)}}


def real_ratios(dirs: list[Path], lags: tuple[int, ...]) -> list[dict[int, float]]:
    out = []
    for _, rec, _ in load_corpus(dirs):
        v = np.array([p["value"] for p in rec["points"]], dtype=float)
        if rec["kind"] in ("size", "rate") or (v <= 0).any():
            continue
        r = segment_variogram(np.log(v), _hindsight_cuts(rec), lags)
        if r is not None:
            out.append(r)
    return out


def family_ratios(family: str, lags: tuple[int, ...], count: int = 30, length: int = 500) -> list[dict[int, float]]:
    out = []
    for rec in stress_series(family, 1, count, length):
        r = segment_variogram(np.log([p["value"] for p in rec["points"]]), _hindsight_cuts(rec), lags)
        if r is not None:
            out.append(r)
    return out


def ar1_reference(rho: float, white_share: float, lags: tuple[int, ...]) -> list[float]:
    """``g(l) / g(1)`` of AR(1) noise ``rho`` plus independent noise with ``white_share`` of the variance."""
    w, tau = white_share, 1.0 - white_share
    g = [w + tau * (1 - rho**lag) for lag in (1, *lags)]
    return [round(x / g[0], 2) for x in g[1:]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dirs", default=None, help="comma-separated corpus directories (default: eval_real's)")
    ap.add_argument("--lags", default="2,4,8,16")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    lags = tuple(int(x) for x in args.lags.split(","))
    dirs = [Path(d) for d in args.dirs.split(",")] if args.dirs else default_dirs()
    rows = {"real": summary(real_ratios(dirs, lags), lags)}
    for fam in ("white", "ar05", "ar08_white", "seasonal"):
        rows[f"generated {fam}"] = summary(family_ratios(fam, lags), lags)
    refs = {"model: independent": ar1_reference(0.0, 1.0, lags), "model: AR(1) 0.5": ar1_reference(0.5, 0.0, lags),
            "model: AR(1) 0.8 + 20% white": ar1_reference(0.8, 0.2, lags)}
    if args.json:
        json.dump({"lags": lags, "rows": rows, "models": refs}, sys.stdout, indent=1)
        print()
        return 0
    print(f"g(l) / g(1) within segments cut at the hindsight detector's change points, lags {lags}\n")
    print("| series | n | median | quartiles |\n|---|---|---|---|")
    for name, r in rows.items():
        print(f"| {name} | {r['series']} | {r['q50']} | {r['q25']} .. {r['q75']} |")
    for name, ref in refs.items():
        print(f"| {name} | | {ref} | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
