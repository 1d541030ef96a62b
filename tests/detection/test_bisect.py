"""Bisection and confirmation statistics, and the whole procedure against hidden truths (pure harness)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from alerts.detection.bisect import (
    LLR_CLEAR,
    Observation,
    Reference,
    classify,
    confirm,
    confirm_runs,
    decide,
    is_thin,
    midpoint,
    request_bound,
    runs_needed,
)
from tests.bisect_sim import Truth, per_build_sigma, simulate

REF = Reference(mode="level", log=True, before=math.log(100.0), after=math.log(110.0), sigma=0.02)


def obs(*values: float, runs: int = 1, reason: str = "bisect") -> Observation:
    return Observation(values=tuple(values), runs=runs, reason=reason)


def test_it_classifies_a_commit_at_either_level_and_leaves_the_midpoint_unclear():
    assert classify([obs(100.0)], REF).side == "before"
    assert classify([obs(110.5)], REF).side == "after"
    mid = math.exp(0.5 * (REF.before + REF.after))
    v = classify([obs(mid * 1.001)], REF)
    assert v.side == "unclear" and abs(v.llr) < LLR_CLEAR
    assert classify([obs(mid * 1.001)], REF, force=True).side == "after"
    assert classify([obs(mid * 0.999)], REF, force=True).side == "before"


def test_it_trusts_more_runs_more():
    mid = math.exp(0.5 * (REF.before + REF.after))
    near = mid * 1.012
    assert classify([obs(near)], REF).side == "unclear"
    assert classify([obs(near, runs=8)], REF).side == "after"


def test_it_uses_the_samples_spread_when_it_exceeds_the_noise_model():
    rng = np.random.default_rng(3)
    wide = tuple(float(x) for x in 106.0 * np.exp(rng.normal(0, 0.3, size=40)))
    assert classify([Observation(values=wide, runs=8)], REF).side == "unclear"


def test_it_decides_a_size_commit_with_one_build():
    ref = Reference(mode="step", log=True, before=math.log(3e7), after=math.log(3.03e7), sigma=1e-5)
    assert runs_needed(ref) == 1 and confirm_runs(ref) == 1
    assert classify([obs(3.0301e7)], ref).side == "after"
    assert classify([obs(3.0001e7)], ref).side == "before"
    assert not is_thin(0.01, "step")


def test_it_asks_for_runs_from_the_effect_size():
    assert runs_needed(REF) == 2  # a 4.8 sigma shift
    assert runs_needed(Reference(mode="level", log=True, before=0.0, after=0.12, sigma=0.02)) == 1
    three_sigma = Reference(mode="level", log=True, before=0.0, after=0.06, sigma=0.02)
    assert runs_needed(three_sigma) == 3
    half = Reference(mode="level", log=True, before=0.0, after=0.03, sigma=0.02)
    assert runs_needed(half) > runs_needed(three_sigma)
    assert runs_needed(half, max_runs=5) == 5
    assert confirm_runs(half) >= runs_needed(half) // 2


def test_it_bounds_requests_by_the_halving_count():
    assert [request_bound(n) for n in (1, 2, 3, 4, 5, 8, 9, 20)] == [1, 2, 3, 3, 4, 4, 5, 6]
    assert midpoint(0, 5) == 2 and midpoint(2, 5) == 3


def test_it_confirms_a_shift_that_reproduces_and_withdraws_one_that_does_not():
    culprit, previous = [obs(109.5, 110.2, runs=4)], [obs(100.1, 99.8, runs=4)]
    assert confirm(culprit, previous, REF).reproduced
    assert not confirm([obs(100.4, 100.2, runs=4)], previous, REF).reproduced
    assert not confirm([obs(91.0, runs=4)], previous, REF).reproduced  # the opposite direction


def test_it_thinks_evidence_thin_near_the_critical_value():
    assert is_thin(2e-5, "level") and is_thin(1e-6 * 1.5, "rate")
    assert not is_thin(1e-9, "level") and not is_thin(None, "level")


def exact_runs(truth_levels: list[float]):
    """Observations that always show the true level (deterministic answers)."""
    return {i: [obs(v)] for i, v in enumerate(truth_levels)}


@pytest.mark.parametrize("n", range(2, 21))
def test_it_halves_the_range_and_names_every_culprit(n):
    ref = Reference(mode="level", log=True, before=math.log(100.0), after=math.log(120.0), sigma=0.01)
    for culprit in range(1, n + 1):
        levels = [100.0 if i < culprit else 120.0 for i in range(n + 1)]
        seen: dict[int, list[Observation]] = {}
        asked = []
        while True:
            d = decide(n, seen, ref, thin=False)
            if not d.asks:
                break
            for a in d.asks:
                assert 0 <= a.index <= n
                asked.append(a.index)
                seen.setdefault(a.index, []).append(obs(levels[a.index], runs=a.runs))
        assert d.outcome == "bisected" and d.culprit == culprit
        assert len(asked) <= request_bound(n)
        assert len(set(asked)) == len(asked)


def test_it_withdraws_an_alert_whose_culprit_build_reruns_at_the_old_level():
    ref = Reference(mode="level", log=True, before=math.log(100.0), after=math.log(120.0), sigma=0.01)
    seen: dict[int, list[Observation]] = {}
    while (d := decide(6, seen, ref, thin=False)).asks:
        for a in d.asks:
            seen.setdefault(a.index, []).append(obs(100.0, runs=a.runs))
    assert d.outcome == "not_reproduced" and d.culprit is None
    assert 6 in seen  # the culprit build's own commit was re-run


def _clear_truth(kind: str, rng: np.random.Generator) -> Truth:
    n = int(rng.integers(2, 21))
    c = int(rng.integers(1, n + 1))
    if kind == "size":
        return Truth(kind, 3e7, float(rng.uniform(0.006, 0.03)), c, n, creep=1e-5)
    base = 0.005 if kind == "rate" else 400.0
    sig = per_build_sigma(Truth(kind, base, 0.0, 1, n))
    k = float(rng.uniform(3.0, 8.0)) * (1 if rng.random() < 0.7 else -1)
    return Truth(kind, base, math.expm1(k * sig), c, n)


@pytest.mark.parametrize("kind", ["time", "memory", "size", "rate"])
def test_it_names_the_exact_culprit_of_clear_shifts_within_the_bound(kind):
    rng = np.random.default_rng({"time": 11, "memory": 12, "size": 13, "rate": 14}[kind])
    hits = 0
    trials = 80
    for _ in range(trials):
        truth = _clear_truth(kind, rng)
        r = simulate(truth, rng)
        assert all(0 <= i <= truth.n for i, _, _ in r.requests)  # never a commit outside the range
        hits += r.culprit == truth.culprit and len(r.requests) <= request_bound(truth.n)
    assert hits / trials >= 0.95


@pytest.mark.parametrize("kind", ["time", "memory", "rate"])
def test_it_withdraws_planted_false_alerts(kind):
    rng = np.random.default_rng({"time": 21, "memory": 22, "rate": 23}[kind])
    withdrawn = 0
    trials = 60
    for _ in range(trials):
        n = int(rng.integers(1, 21))
        base = 0.005 if kind == "rate" else 400.0
        truth = Truth(kind, base, 0.0, 1, n)
        offset = float(rng.uniform(2.5, 3.5)) * per_build_sigma(truth) * (1 if rng.random() < 0.5 else -1)
        r = simulate(truth, rng, false_offset=math.expm1(offset))
        assert all(0 <= i <= truth.n for i, _, _ in r.requests)
        withdrawn += r.outcome == "not_reproduced"
    assert withdrawn / trials >= 0.80
