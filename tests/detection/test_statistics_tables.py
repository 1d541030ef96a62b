"""The simulated constants of detection/statistics.py are what bench/gen_statistics_tables.py computes."""

import importlib.util
import math

import numpy as np

from alerts.detection import statistics
from tests.live import ROOT

REPLICATES = 40_000


def generator():
    spec = importlib.util.spec_from_file_location("gen_tables", ROOT / "bench" / "gen_statistics_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def within_monte_carlo_error(committed, simulated) -> bool:
    # A variance estimated from R replicates has relative s.e. ~ sqrt(2 / R) (both sides simulated);
    # 5 standard errors plus the committed rounding.
    tolerance = 5 * math.sqrt(2 / REPLICATES + 2 / 100_000) * abs(committed) + 0.0015
    return abs(committed - simulated) <= tolerance


def test_it_reproduces_the_committed_tables_within_monte_carlo_error():
    gen = generator()
    rng = np.random.default_rng(123)
    for n in (3, 4, 7, 15):
        assert within_monte_carlo_error(statistics._MEDIAN_VAR_FACTOR[n - 1], gen.median_var_factor(n, REPLICATES, rng)), n
    for n in (5, 6, 11, 30):
        assert within_monte_carlo_error(statistics._TRIMMED_VAR_FACTOR[n - 5], gen.trimmed_var_factor(n, REPLICATES, rng)), n
    for n in (5, 6, 20, 40):
        assert within_monte_carlo_error(statistics._TRIMMED_SAMPLE_VAR[n - 5], gen.trimmed_sample_var(n, REPLICATES, rng)), n


def test_it_generates_tables_of_the_committed_shape():
    out = generator().tables(replicates=2_000, seed=1)
    assert len(out["_MEDIAN_VAR_FACTOR"]) == len(statistics._MEDIAN_VAR_FACTOR)
    assert len(out["_TRIMMED_VAR_FACTOR"]) == len(statistics._TRIMMED_VAR_FACTOR)
    assert len(out["_TRIMMED_SAMPLE_VAR"]) == len(statistics._TRIMMED_SAMPLE_VAR)
