"""The online detector's quick screen (``OnlineDetector._quiet``) decides which builds are scanned, never what is
found: streamed with the screen and with every build scanned, a series gives the same events."""

from __future__ import annotations

import json
from pathlib import Path

from alerts.detection import DEFAULT, Point
from alerts.detection.evaluate import Series
from alerts.detection.model import Event
from alerts.detection.online import SCAN_EVERY, OnlineDetector
from alerts.detection.statistics import Noise

from .helpers import pdfpaint_quiet

REAL = Path(__file__).resolve().parents[2] / "bench" / "data" / "real"


def _stream(values: list[float] | list[Point], kind: str, *, screen: bool = True) -> tuple[list[int], list]:
    """(builds scanned for a new change, every event) of streaming ``values`` (numbers or points); ``screen=False``
    scans every build without an open alert."""
    det = OnlineDetector(kind, True)
    if not screen:
        det._quiet = lambda: False  # type: ignore[method-assign]
    scanned: list[int] = []
    scan = det._scan

    def counted(s: Series, noise: Noise) -> list[Event]:
        scanned.append(det.index)
        return scan(s, noise)

    det._scan = counted  # type: ignore[method-assign]
    events = []
    for v in values:
        events += [(e.type, e.at, e.change_point) for e in det.step(v if isinstance(v, Point) else Point(v))]
    return scanned, events


def _real_values(source: str, series_id: str) -> list[float]:
    for line in (REAL / source / "series.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["id"] == series_id:
            return [p["value"] for p in rec["points"]]
    raise LookupError(series_id)


def test_it_scans_a_counter_that_holds_still_only_when_it_moves():
    # A real compiler counter (mozilla-beta num_static_constructors, 617 pushes, five distinct values): its blocks'
    # noise is zero, and such blocks were scanned on every build (586 of 617): the screen's limits, a fraction of
    # the noise, were zero too. Where the block's segment is one value, a build that keeps it is quiet now.
    values = _real_values("mozilla4", "mozilla-beta/4938929")
    assert len(set(values)) <= 5

    scanned, events = _stream(values, "other")
    every, events_every = _stream(values, "other", screen=False)

    assert events == events_every
    assert len(scanned) < len(every) / 2
    # the sheriffs' confirmed +8% at push 252 is still raised there
    assert any(t == "raised" and cp.index == 252 and cp.direction == "regression" for t, _, cp in events)


def test_it_screens_a_timing_without_runs_that_holds_still_like_a_counter():
    # Timings and memory with one value per push and no runs (most of the Mozilla data) are windows without a
    # runs' column, like counters: the same counter streamed as a timing is screened the same way.
    values = _real_values("mozilla4", "mozilla-beta/4938929")

    scanned, events = _stream(values, "time")
    every, events_every = _stream(values, "time", screen=False)

    assert events == events_every
    assert len(scanned) < len(every) / 2


def test_it_scans_a_timing_that_holds_still_once_builds_bring_runs():
    # Builds with runs (even runs that agree: no spread) make the window one of runs, where the flaky model may
    # replace values: a block summarised without them no longer screens builds on being one value.
    values = _real_values("mozilla4", "mozilla-beta/4938929")
    points = [Point(v) if i < 300 else Point(v, (v,) * 5) for i, v in enumerate(values)]

    scanned, events = _stream(points, "time")
    every, events_every = _stream(points, "time", screen=False)
    plain, _ = _stream(values, "time")

    assert events == events_every
    assert len([i for i in scanned if i >= 300]) > len([i for i in plain if i >= 300])


def test_it_scans_every_build_of_a_noiseless_block_whose_segment_holds_two_values():
    # A counter back at its level after a 9-build excursion, then a 7-build one 84 builds later: the block's
    # segment holds both values and its median is the level the builds return to, so the scan raises the second
    # excursion (the exceedance test wanted more of its builds) on a build whose newest medians all sit at that
    # median. A screen passing such builds on their medians raised it two builds late.
    values = [250.0] * 2 + [300.0] * 20 + [500.0] * 9 + [300.0] * 84 + [500.0] * 7 + [300.0] * 6 + [500.0] * 20

    _, events = _stream(values, "other")
    _, events_every = _stream(values, "other", screen=False)

    assert events == events_every
    assert ("raised", 142, 128) in [(t, at, cp.index) for t, at, cp in events]


def test_it_leaves_a_new_series_unscanned_until_a_culprit_is_admissible():
    first = DEFAULT.min_before + DEFAULT.min_after - 1  # the first build a level culprit can be raised on
    values = pdfpaint_quiet()[:40]
    values[DEFAULT.min_before:] = [1.2 * v for v in values[DEFAULT.min_before:]]  # +20% at the first culprit allowed

    scanned, events = _stream(values, "time")
    every, events_every = _stream(values, "time", screen=False)

    assert events == events_every
    assert min(scanned) == first
    assert min(every) == 0
    # the step is raised at its culprit, on the same build as when every build is scanned (the equality above)
    assert [cp.index for t, _, cp in events if t == "raised"] == [DEFAULT.min_before]


def test_it_scans_a_new_size_series_from_its_first_builds():
    # a size step needs only the build before it: an installer that grows by 2% on its sixth build is raised at once
    values = [50_000_000.0] * 5 + [51_000_000.0] * 10

    scanned, events = _stream(values, "size")
    _, events_every = _stream(values, "size", screen=False)

    assert events == events_every
    assert min(scanned) < DEFAULT.min_before
    raised = [(at, cp.index) for t, at, cp in events if t == "raised"]
    assert raised and raised[0][1] == 5 and raised[0][0] < DEFAULT.min_before + DEFAULT.min_after - 1


def test_a_constant_timing_is_quiet_once_its_only_build_with_runs_has_left_the_kept_builds():
    # A timing that holds still, whose one build with runs (at 1) is kept until build 1 + _keep: the block before it
    # leaves was estimated while it was kept. The screen must then judge the block as a window built without a runs'
    # column, as every later block is (a block summary that reused the window estimated with the column scanned every
    # build of that block: 14 builds more, the same events).
    keep = OnlineDetector("time", True)._keep
    values = [Point(100.0), Point(100.0, samples=(99.0, 100.0, 100.0, 100.0, 101.0))] + [Point(100.0)] * 298

    scanned, events = _stream(values, "time")
    _, events_every = _stream(values, "time", screen=False)

    assert events == events_every
    gone = 1 + keep  # the build on which the one with runs leaves the kept builds
    assert [b for b in scanned if b >= gone and b % SCAN_EVERY] == []
    assert any(b >= gone for b in scanned)  # the screen's periodic scans go on
