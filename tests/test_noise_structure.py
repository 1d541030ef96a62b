"""bench/noise_structure.py: variograms within segments tell independent noise from a persistent runner effect."""

import numpy as np

from bench import noise_structure as ns
from bench.eval_stress import ar1_noise


def test_independent_noise_has_a_flat_variogram_and_ar1_its_model_curve():
    rng = np.random.default_rng(7)
    white = ns.segment_variogram(rng.normal(0, 0.01, 4000), [], (4, 16))
    ar = ns.segment_variogram(ar1_noise(rng, 4000, 0.5, 0.01), [], (4, 16))
    assert abs(white[4] - 1) < 0.1 and abs(white[16] - 1) < 0.1
    model = ns.ar1_reference(0.5, 0.0, (4, 16))
    assert abs(ar[4] - model[0]) < 0.2 and abs(ar[16] - model[1]) < 0.2


def test_no_difference_spans_a_cut():
    rng = np.random.default_rng(8)
    level = 0.5 * ((np.arange(600) // 40) % 2)  # 14 steps of 50 sd, one every 40 builds
    y = level + rng.normal(0, 0.01, 600)
    # 16 lag-16 differences span each step, 224 of 584: far more than the 10% trim drops
    assert ns.segment_variogram(y, [], (16,))[16] > 1.5
    # cut at the steps, only differences inside the level stretches are left: white noise again
    assert abs(ns.segment_variogram(y, list(range(40, 600, 40)), (16,))[16] - 1) < 0.15


def test_too_few_differences_give_no_variogram():
    assert ns.segment_variogram(np.arange(1.0, 30.0), [10, 20], (16,)) is None
    assert ns.segment_variogram(np.zeros(100), [], (4,)) is None  # no noise at all: no ratio
