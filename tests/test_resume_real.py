"""The worker's resumed detector takes the streaming detector's decisions on every build of the real corpus.

The upload worker is stateless: for each build it reloads the last ``window + NOISE_EVERY`` builds and the series'
stored alerts, calls ``OnlineDetector.resume`` and steps once (``alerts/analysis.py``); ``perfplatform detect
--online`` and the benchmarks stream the whole series through one detector. The detector's rules for changes
close together (early changes, relands, excursions, drifts) read the stored change points' levels, culprit
ranges and detection builds, so every real series (``bench/data/real``, 41,000 builds) is replayed both ways,
build by build. The stored change points are given back as the database keeps them (``lifecycle.as_change_point``:
no ``z``, no ``merged_into``, a detection build outside the window read as the culprit); the round trip through
the database itself is tested in ``tests/test_analysis*.py``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from alerts.detection.model import ChangePoint, Event
from alerts.detection.online import NOISE_EVERY, OnlineDetector
from perfplatform.detect_cmd import series_input

REAL = Path(__file__).resolve().parent.parent / "bench" / "data" / "real"


def _series() -> list[dict]:
    return [json.loads(line) for path in sorted(REAL.glob("*/series.jsonl"))
            for line in path.read_text().splitlines() if line.strip()]


def _as_stored(cp: ChangePoint, window_start: int) -> ChangePoint:
    detected_at = cp.detected_at if cp.detected_at >= window_start else cp.index
    return dataclasses.replace(cp, z=0.0, merged_into=None, detected_at=detected_at)


def _decision(event: Event) -> tuple:
    c = event.change_point
    return (event.type, c.index, c.first_index, c.last_index, c.direction, c.rel_change, c.before, c.after,
            c.p_value, c.confirmed, c.withdrawn, c.shape, c.window_builds)


def _differences(rec: dict, *, forget_open: bool = False) -> list[tuple[int, list[tuple], list[tuple]]]:
    """The builds where the resumed detector decides otherwise than the streaming one: ``(k, streamed, resumed)``;
    ``forget_open`` resumes without the open alerts (a broken store, to show the replay can fail)."""
    points, kind, lower, config = series_input(rec)
    keep = config.window + NOISE_EVERY
    streamed = OnlineDetector(kind, lower, config)
    differ = []
    for k, point in enumerate(points):
        start = max(0, k - keep)
        stored = [_as_stored(cp, start) for cp in streamed.history
                  if cp.index >= start and (cp.confirmed or not forget_open)]
        resumed = OnlineDetector.resume(points[start:k], stored, start_index=start, kind=kind,
                                        lower_is_better=lower, config=config)
        got = [_decision(e) for e in resumed.step(point)]
        want = [_decision(e) for e in streamed.step(point)]
        if got != want:
            differ.append((k, want, got))
    return differ


def test_the_corpus_is_there():
    recs = _series()
    assert len(recs) >= 100
    assert sum(len(r["points"]) for r in recs) > 30_000


@pytest.mark.parametrize("source", sorted(p.name for p in REAL.iterdir() if (p / "series.jsonl").exists()))
def test_it_resumes_every_build_of_the_real_series_as_it_streams(source):
    recs = [json.loads(line) for line in (REAL / source / "series.jsonl").read_text().splitlines() if line.strip()]
    differ = {rec["id"]: d[:2] for rec in recs if (d := _differences(rec))}
    assert differ == {}


def test_a_resume_that_forgets_the_open_alert_is_caught():
    # The replay can fail: resumed without its open (raised, unconfirmed) alert, a real series whose +64% alert is
    # raised on build 83 raises it again on the next build instead of reviewing it.
    rec = next(r for r in _series() if r["id"] == "mozilla-release/2780728")
    differ = _differences(rec, forget_open=True)
    assert differ and differ[0][0] == 84 and differ[0][2][0][0] == "raised"
