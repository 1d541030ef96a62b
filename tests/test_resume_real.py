"""The worker's resumed detector takes the streaming detector's decisions on every build of the real corpus.

``bench/eval_resume.py`` replays each series both ways, build by build: resumed from the last 128 builds and the
alerts the worker would have stored from the detector's events (the upload worker, ``alerts/analysis.py``), and
streamed (``perfplatform detect --online``, the benchmarks). The rules for changes close together (early changes,
relands, excursions, drifts) read the stored levels, culprit ranges and detection builds; every real series of
``bench/data/real`` (33,000 builds) is replayed, and every decision compared with all the alert shows. The round
trip through the database itself is tested in ``tests/test_analysis.py``.
"""

from __future__ import annotations

import json

import pytest

from alerts.analysis import REPLAY_MAX
from alerts.detection import DEFAULT
from alerts.detection import online as online_module
from tests.bench_scripts import load_bench_script
from tests.real_series import SOURCES, real_series, series_of

er = load_bench_script("eval_resume")


def test_the_replay_loads_what_the_worker_loads():
    assert er.LOADED == DEFAULT.window + REPLAY_MAX
    recs = [r for s in SOURCES for r in series_of(s)]
    assert len(recs) >= 100
    assert sum(len(r["points"]) for r in recs) > 30_000


@pytest.mark.parametrize("source", SOURCES)
def test_it_resumes_every_build_of_the_real_series_as_it_streams(source):
    differ = {rec["id"]: d[:2] for rec in series_of(source) if (d := er.differences(rec))}
    assert differ == {}


def test_a_resume_that_forgets_the_open_alert_is_caught():
    # The replay can fail: resumed without its open (raised, unconfirmed) alert, a real series whose +64% alert is
    # raised on build 83 raises it again on the next build instead of reviewing it.
    differ = er.differences(real_series("mozilla", "mozilla-release/2780728"), forget_open=True)
    assert differ and differ[0][0] == 84 and differ[0][2][0][0] == "raised"


def test_an_estimate_refined_without_an_event_is_caught(monkeypatch):
    # Before every change of what an alert shows was an event, only a moved culprit was: the worker kept an open
    # alert's raise-time estimates, and withdrew autoland1/5098699's at +5.6% where streaming had +3.9%.
    monkeypatch.setattr(online_module, "_shown", lambda cp: (cp.index, cp.direction))
    differ = er.differences(real_series("mozilla", "autoland1/5098699"))
    assert [k for k, _, _ in differ] == [121]
    (_, want, got), = differ
    assert want[0][:2] == got[0][:2] == ("withdrawn", 59)
    assert round(want[0][5], 3) == 0.039 and round(got[0][5], 3) == 0.056


def test_the_script_exits_non_zero_when_a_build_differs(tmp_path, monkeypatch, capsys):
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in series_of("mongodb")))
    monkeypatch.setattr("sys.argv", ["eval_resume.py", str(path)])
    assert er.main() == 0
    assert "series with a build decided otherwise on resume: 0" in capsys.readouterr().out
    monkeypatch.setattr(er, "differences", lambda rec: [(1, [], [("raised",)])])
    assert er.main() == 1


def test_a_drift_longer_than_the_loaded_builds_resumes_with_the_same_start():
    # A real quiet excerpt (autoland pdfpaint, three times over) creeping +200% over 300 builds: one live drift of
    # ~290 builds. Its first step's plausible range started a build before its culprit; once those builds were
    # older than the 128 the worker loads, the resumed detector put the drift's start on the culprit where the
    # streaming one kept the range's start (83 builds decided otherwise). The start is the first culprit now,
    # which the stored drift's culprit and window_builds give wherever it began.
    from alerts.detection import Point, detect_online
    from tests.detection.helpers import pdfpaint_quiet

    base = pdfpaint_quiet() * 3
    n = len(base)
    vals = [v * (1 + 2.0 * min(max(i - 40, 0), n - 60) / (n - 60)) for i, v in enumerate(base)]
    rec = {"id": "creep", "metric": "pdfpaint", "kind": "time", "unit": "ms", "direction": "lower_is_better",
           "points": [{"build": str(i), "value": v} for i, v in enumerate(vals)]}
    live = [c for c in detect_online([Point(v) for v in vals], kind="time") if not c.withdrawn]
    assert len(live) == 1 and live[0].shape == "drift" and live[0].window_builds > er.LOADED
    assert live[0].first_index == live[0].index - live[0].window_builds + 1
    assert er.differences(rec) == []
