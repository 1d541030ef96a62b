"""bench/eval_real.py's report: kept alerts no label explains, and how many of them are large changes."""

from tests.bench_scripts import load_bench_script
from tests.live import ROOT
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


def test_it_counts_the_series_of_each_device_apart_and_in_all():
    android = entry(3, {60: 0.10}, noise=0.01, length=160)
    desktop = entry(4, {80: -0.10}, noise=0.01, length=160)
    android[2]["device"], desktop[2]["device"] = "android", "desktop"
    unknown = entry(5, {70: 0.10}, noise=0.01, length=160)
    report = ev.evaluate([android, desktop, unknown], 5, score)["report"]
    assert set(report) == {"synthetic", "all", "device:android", "device:desktop"}
    assert [report[k]["online"]["series"] for k in ("all", "device:android", "device:desktop")] == [3, 1, 1]
    assert report["device:android"]["online"]["matched"] == 1
    assert "| device:android | online |" in ev.markdown(report)


def test_it_reads_each_mozilla_series_device_from_its_raw_platform():
    assert [ev.device_of(p) for p in ("android-hw-a51-11-0-aarch64-shippable-qr", "android-5-0-x86_64",
                                      "windows10-64-shippable-qr", "linux1804-64-shippable-qr",
                                      "macosx1015-64-shippable-qr", None, "")] == (
        ["android", "android", "desktop", "desktop", "desktop", None, None])
    platforms = ev.raw_platforms(ROOT / "bench" / "data" / "real" / "mozilla4")
    assert platforms["autoland1/5043303"] == "android-hw-a51-11-0-aarch64-shippable-qr"
    corpus = ev.load_corpus([ROOT / "bench" / "data" / "real" / "mozilla4", ROOT / "bench" / "data" / "real" / "otava"])
    devices = {truth["id"]: truth["device"] for _, _, truth in corpus}
    assert devices["autoland1/5043303"] == "android"
    assert devices["otava/tigerbeetle"] is None
