#!/usr/bin/env python3
"""Regenerate the simulated constant tables of alerts/detection/statistics.py.

    python bench/gen_statistics_tables.py [--replicates 200000] [--seed 0]

Prints the three tuples as Python source, to paste over the committed ones:
- _MEDIAN_VAR_FACTOR[n-1] = n * Var(median of n iid N(0,1)), n = 1..15;
- _TRIMMED_VAR_FACTOR[n-5] = n * Var(mean of the values kept after cutting ceil(0.2 n) at each end), n = 5..30;
- _TRIMMED_SAMPLE_VAR[n-5] = E[sample variance (ddof=1) of those kept values], n = 5..40.
All relative to sigma^2 = 1. Monte Carlo: with R replicates the relative standard error of a variance is
about sqrt(2/R) (0.3% at 2e5), which is why the committed tables carry 3-4 digits.
tests/detection/test_statistics_tables.py re-simulates them with fewer replicates and checks the
committed values lie within Monte Carlo error.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

TRIM = 0.2


def median_var_factor(n: int, replicates: int, rng: np.random.Generator) -> float:
    x = rng.standard_normal((replicates, n))
    return float(n * np.var(np.median(x, axis=1)))


def _kept(n: int, replicates: int, rng: np.random.Generator) -> np.ndarray:
    g = math.ceil(TRIM * n)
    return np.sort(rng.standard_normal((replicates, n)), axis=1)[:, g:n - g]


def trimmed_var_factor(n: int, replicates: int, rng: np.random.Generator) -> float:
    return float(n * np.var(_kept(n, replicates, rng).mean(axis=1)))


def trimmed_sample_var(n: int, replicates: int, rng: np.random.Generator) -> float:
    return float(np.mean(np.var(_kept(n, replicates, rng), axis=1, ddof=1)))


def tables(replicates: int, seed: int) -> dict[str, tuple[float, ...]]:
    rng = np.random.default_rng(seed)
    median = tuple(1.0 if n <= 2 else round(median_var_factor(n, replicates, rng), 3) for n in range(1, 16))
    trimmed = tuple(round(trimmed_var_factor(n, replicates, rng), 3) for n in range(5, 31))
    sample = tuple(round(trimmed_sample_var(n, replicates, rng), 4) for n in range(5, 41))
    return {"_MEDIAN_VAR_FACTOR": median, "_TRIMMED_VAR_FACTOR": trimmed, "_TRIMMED_SAMPLE_VAR": sample}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    for name, values in tables(a.replicates, a.seed).items():
        print(f"{name} = {values!r}")


if __name__ == "__main__":
    main()
