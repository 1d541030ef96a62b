"""bench/eval_planted.py: steps planted into real series, found where planted, and nothing in plain noise."""

import json

import numpy as np

from tests.bench_scripts import load_bench_script

ev = load_bench_script("eval_planted")


def _write(tmp_path, records):
    d = tmp_path / "src"
    d.mkdir()
    (d / "series.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return d


def test_it_finds_large_planted_steps_and_counts_the_excerpts(tmp_path):
    rng = np.random.default_rng(3)
    noise = [{"value": float(v)} for v in 100 * np.exp(rng.normal(0, 0.01, 260))]
    d = _write(tmp_path, [
        {"id": "a", "kind": "time", "direction": "lower_is_better", "points": noise},
        {"id": "b", "kind": "size", "points": noise},  # deterministic kinds are left out
        {"id": "c", "kind": "time", "points": noise[:60]},  # too short for one excerpt
    ])
    assert len(ev.excerpts([d])) == 2  # builds 0-99 and 150-249
    res = ev.run([d], at=30, sizes=[-0.2, 0.2])
    assert res["excerpts"] == 2 and res["alerts_unmodified"] == 0
    for row in res["steps"].values():
        assert row["found"] == 2 and 0 < row["median_delay"] <= 5


def test_it_misses_a_step_that_the_noise_buries(tmp_path):
    rng = np.random.default_rng(4)
    noise = [{"value": float(v)} for v in 100 * np.exp(rng.normal(0, 0.2, 100))]
    res = ev.run([_write(tmp_path, [{"id": "a", "kind": "time", "points": noise}])], at=30, sizes=[0.01])
    assert res["steps"]["+0.01"] == {"found": 0, "of": 1, "median_delay": None, "p90_delay": None}


def test_it_plants_a_backed_out_change_before_the_step_and_counts_the_culprits_left_on_it(tmp_path):
    rng = np.random.default_rng(5)
    noise = [{"value": float(v)} for v in 100 * np.exp(rng.normal(0, 0.01, 380))]
    d = _write(tmp_path, [{"id": "a", "kind": "time", "points": noise}])
    assert len(ev.excerpts([d], 160)) == 2  # builds 0-159 and 210-369
    res = ev.run([d], at=100, sizes=[0.1], length=160, excursion=(0.2, 3, 2))
    assert res["step_at"] == 105
    row = res["steps"]["+0.10"]
    assert row["of"] == 2 and row["found"] == 2 and row["on_excursion"] == 0


def test_it_runs_hindsight_on_the_same_excerpts_and_counts_a_backed_out_change_reported_beside_the_step(tmp_path):
    rng = np.random.default_rng(5)
    noise = [{"value": float(v)} for v in 100 * np.exp(rng.normal(0, 0.01, 380))]
    d = _write(tmp_path, [{"id": "a", "kind": "time", "points": noise}])
    res = ev.run([d], at=100, sizes=[0.1], length=160, excursion=(0.2, 3, 2), hindsight=True)
    assert res["detector"] == "hindsight"
    row = res["steps"]["+0.10"]
    assert row["found"] == 2 and row["on_excursion"] == 0 and row["beside"] == 0
    # a change that held for 12 builds before it was reverted is a change of its own: reported beside the step
    held = ev.run([d], at=100, sizes=[0.1], length=160, excursion=(0.2, 12, 12), hindsight=True)
    assert held["step_at"] == 124 and held["steps"]["+0.10"]["found"] == 2 and held["steps"]["+0.10"]["beside"] == 2
