"""TCPDBench's F1 and cover as bench/eval_tcpd.py computes them, and the TCPD files of bench/data/tcpd."""

import json
import subprocess

import pytest

from tests.bench_scripts import load_bench_script
from tests.live import ROOT

DATA = ROOT / "bench" / "data" / "tcpd"

ev = load_bench_script("eval_tcpd")


def test_a_perfect_prediction_scores_one():
    ann = {"a": [10, 20], "b": [10, 20]}
    assert ev.f_measure(ann, [10, 20]) == (1.0, 1.0, 1.0)
    assert ev.covering(ann, [10, 20], 30) == 1.0


def test_no_prediction_on_an_annotated_series():
    # T = {0, 10}, X = {0}: P = 1/1, R = 1/2, F1 = 2/3.
    f1, p, r = ev.f_measure({"a": [10]}, [])
    assert (p, r) == (1.0, 0.5)
    assert f1 == pytest.approx(2 / 3)
    # [0,10) and [10,20) each cover half of the single predicted segment: (10*0.5 + 10*0.5) / 20.
    assert ev.covering({"a": [10]}, [], 20) == pytest.approx(0.5)


def test_no_prediction_and_no_annotation_scores_one():
    assert ev.f_measure({"a": []}, [])[0] == 1.0
    assert ev.covering({"a": []}, [], 12) == 1.0


def test_two_annotators_disagreeing():
    ann = {"a": [10], "b": [30]}
    # T* = {0, 10, 30}, X = {0, 10}: P = 2/2; R = (2/2 + 1/2) / 2 = 3/4; F1 = 2 * 3/4 / (7/4) = 6/7.
    f1, p, r = ev.f_measure(ann, [10])
    assert (p, r) == (1.0, 0.75)
    assert f1 == pytest.approx(6 / 7)
    # a: the same partition, 1. b: [0,30) best J = 20/40 with [10,40), [30,40) best J = 10/30 with [10,40):
    # (30 * 1/2 + 10 * 1/3) / 40 = 11/24. Mean (1 + 11/24) / 2 = 35/48.
    assert ev.covering(ann, [10], 40) == pytest.approx(35 / 48)


def test_a_true_point_takes_one_prediction_within_the_margin():
    # Two predictions 2 away from 10: one is a true positive, the other a false one. P = 2/3, R = 1.
    f1, p, r = ev.f_measure({"a": [10]}, [8, 12])
    assert (p, r) == (pytest.approx(2 / 3), 1.0)
    assert f1 == pytest.approx(0.8)
    assert ev.true_positives([10], [16], 5) == 0
    assert ev.true_positives([10], [15], 5) == 1
    # True points are taken in increasing order: 5 takes 3, then 10 takes 8; with only 8, 5 (3 away)
    # takes it first and 10 finds none left.
    assert ev.true_positives([5, 10], [3, 8], 2) == 2
    assert ev.true_positives([5, 10], [8], 3) == 1


def test_it_agrees_with_the_values_tcpdbench_documents():
    # Results stated in the docstrings of TCPDBench analysis/scripts/metrics.py.
    assert ev.f_measure({1: [10, 20], 2: [11, 20], 3: [10], 4: [0, 5]}, [10, 20])[0] == pytest.approx(1.0)
    assert ev.f_measure({1: [], 2: [10], 3: [50]}, [10])[0] == pytest.approx(0.9090909090909091)
    assert ev.f_measure({1: [], 2: [10], 3: [50]}, [])[0] == pytest.approx(0.8)
    assert ev.covering({1: [10, 20], 2: [10], 3: [0, 5]}, [10, 20], 45) == pytest.approx(0.7962962962962963)
    assert ev.covering({1: [], 2: [10], 3: [40]}, [10], 45) == pytest.approx(0.7954144620811286)
    assert ev.covering({1: [], 2: [10], 3: [40]}, [], 45) == pytest.approx(0.8189300411522634)


def test_partitions_start_a_segment_at_each_change_point():
    assert ev.partition([], 5) == [(0, 5)]
    assert ev.partition([3, 5], 8) == [(0, 3), (3, 5), (5, 8)]
    assert ev.partition([0, 4, 4, 6, 9], 6) == [(0, 4), (4, 6)]
    assert ev.jaccard((0, 3), (1, 5)) == pytest.approx(2 / 5)
    assert ev.jaccard((0, 3), (3, 5)) == 0.0


def test_the_data_files_load_with_a_series_of_the_stated_length_per_truth():
    series = [json.loads(line) for line in (DATA / "series.jsonl").read_text().splitlines() if line.strip()]
    truth = [json.loads(line) for line in (DATA / "truth.jsonl").read_text().splitlines() if line.strip()]
    by_id = {s["id"]: s for s in series}
    assert len(by_id) == len(series) == len(truth) > 0
    assert {t["id"] for t in truth} == set(by_id)
    for t in truth:
        s = by_id[t["id"]]
        assert t["id"] == f"tcpd/{s['metric']}"
        assert len(s["points"]) == t["length"], t["id"]
        assert [p["build"] for p in s["points"]] == [str(i) for i in range(t["length"])]
        assert all(isinstance(p["value"], float) for p in s["points"]), t["id"]
        assert t["annotations"], t["id"]
        for cps in t["annotations"].values():
            assert cps == sorted(cps) and all(0 <= i < t["length"] for i in cps), t["id"]
    assert [(s, t["id"]) for s, t in ev.load(DATA)] == [(by_id[t["id"]], t["id"]) for t in truth]


def _tcpd_tree(tmp_path):
    """A git repository in TCPD's layout: one stored dataset, one whose terms keep it out, one multivariate."""
    repo = tmp_path / "tcpd"
    conv = ev.unstored.__globals__
    stored, kept_out = conv["INCLUDED"][0], "nile"
    assert kept_out in conv["EXCLUDED"]
    data = {stored: [1.0, 2.0, None, 4.0], kept_out: [10.0, 10.0, 20.0, 20.0, 20.0], "run_log": [1.0, 2.0]}
    for name, raw in data.items():
        d = repo / "datasets" / name
        d.mkdir(parents=True)
        series = [{"raw": raw}] * (2 if name == "run_log" else 1)
        (d / f"{name}.json").write_text(json.dumps({"n_obs": len(raw), "n_dim": len(series), "series": series}))
    (repo / "annotations.json").write_text(json.dumps(
        {stored: {"1": [2]}, kept_out: {"1": [2], "2": []}, "run_log": {"1": []}}))
    run = {"cwd": repo, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q"], **run)
    subprocess.run(["git", "add", "."], **run)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "data"], **run)
    return repo, stored, kept_out


def test_it_reads_the_datasets_not_stored_from_a_tcpd_clone_for_the_run_only(tmp_path):
    repo, stored, kept_out = _tcpd_tree(tmp_path)
    pairs = ev.unstored(str(repo))
    assert [(s["id"], t["annotations"]) for s, t in pairs] == [(f"tcpd/{kept_out}", {"1": [2], "2": []})]
    assert [p["value"] for p in pairs[0][0]["points"]] == [10.0, 10.0, 20.0, 20.0, 20.0]
    assert pairs[0][1]["length"] == 5


def test_it_scores_stored_and_not_stored_datasets_apart_and_together(tmp_path, capsys, monkeypatch):
    repo, _, kept_out = _tcpd_tree(tmp_path)
    monkeypatch.setattr("sys.argv", ["eval_tcpd.py", "--tcpd-repo", str(repo), "--json"])
    assert ev.main() == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"stored", "not_stored", "all"}
    n_stored = out["stored"]["report"]["zero"]["datasets"]
    assert n_stored > 0 and out["not_stored"]["report"]["zero"]["datasets"] == 1
    assert out["all"]["report"]["zero"]["datasets"] == n_stored + 1
    assert out["not_stored"]["report"]["zero"]["f1"] < 1.0  # an annotated change the zero detector misses
