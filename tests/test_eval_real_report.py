"""bench/eval_real.py's report: kept alerts no label explains, and how many of them are large changes."""

from tests.bench_scripts import load_bench_script
from tests.real_corpus import entry, score

ev = load_bench_script("eval_real")


def test_it_counts_the_kept_alerts_no_label_explains_and_the_large_ones_apart():
    # a labelled +10% step, an unlabelled -12% one and an unlabelled +3% one, each far above 1% noise
    corpus = [entry(1, {60: 0.10, 120: -0.12}, [60], noise=0.01, length=200),
              entry(2, {90: 0.03}, [], noise=0.01, length=200)]
    r = ev.evaluate(corpus, 5, score)["report"]["all"]["online"]
    assert r["matched"] == 1
    assert r["unmatched_kept"] == 2
    assert r["unmatched_kept_5pct"] == 1
