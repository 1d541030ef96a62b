#!/usr/bin/env python3
"""Whether the worker's resumed detector decides as the streaming one, on every build of series files.

    .venv/bin/python bench/eval_resume.py SERIES.jsonl... [--json]

The upload worker is stateless: for each build it reloads the series' last 128 builds and the alerts stored on
them, calls ``OnlineDetector.resume`` and steps once (``alerts/analysis.py``); ``perfplatform detect --online`` and
the benchmarks stream the whole series through one detector. Each series is replayed both ways, build by build:
the worker's alerts are kept from the detector's events only, as the worker stores them (``WorkerStore``: one row
per culprit build, moved and withdrawn as ``alerts.lifecycle`` does), and read back as the database gives them
(``lifecycle.as_change_point``). Every build where the two decide otherwise (an event, its culprit and range, size,
levels and intervals, p-value, test, state, shape) is reported; exit 1 when any does, 2 on a series the
detector cannot read. ``tests/test_resume_real.py``
runs it on ``bench/data/real``; ``tests/test_analysis.py`` checks the real database round trip on uploaded builds.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from alerts.detection.model import ChangePoint, Event  # noqa: E402
from alerts.detection.online import OnlineDetector  # noqa: E402
from perfplatform.detect_cmd import InvalidSeries, series_input  # noqa: E402

#: Builds of a series the worker loads per analysis (``alerts.analysis``: ``config.window + REPLAY_MAX``, the new
#: build included); its stored alerts are read back over the same builds.
LOADED = 96 + 32


@dataclass
class _Row:
    """One stored alert as the worker keeps it: the change point of its last event, the build it was raised on."""

    cp: ChangePoint
    detected_at: int


class WorkerStore:
    """The alerts the worker would have stored, one row per culprit build, kept from the detector's events as
    ``alerts.analysis.replay_series`` and ``alerts.lifecycle`` keep them (in build order: no late builds)."""

    def __init__(self) -> None:
        self.rows: dict[int, _Row] = {}
        self.open: int | None = None  # culprit of the open alert's row
        self.confirmed: int | None = None  # culprit of the row of the latest "confirmed" event

    def apply(self, event: Event) -> None:
        cp = dataclasses.replace(event.change_point)
        if event.type == "merged":
            row = self.rows.get(cp.index)
            if row is not None and cp.index != self.confirmed:
                row.cp.withdrawn = True
            return
        if event.type == "raised":
            # a row already at the culprit (one withdrawn earlier) takes the new alert and the build that raised it
            self.rows[cp.index] = _Row(cp, event.at)
            self.open = cp.index
            return
        existing = self.rows.pop(self.open) if self.open is not None else None
        at_culprit = self.rows.get(cp.index)
        if existing is not None and at_culprit is not None and not at_culprit.cp.withdrawn:
            existing.cp.withdrawn = True  # the culprit moved onto a live alert: that one is kept, this withdrawn
            self.rows[self.open] = existing
            existing = at_culprit
        target = existing or at_culprit
        self.rows[cp.index] = _Row(cp, target.detected_at if target else event.at)
        self.open = cp.index if event.type == "refined" else None
        if event.type == "confirmed":
            self.confirmed = cp.index

    def read_back(self, lo: int, hi: int) -> list[ChangePoint]:
        """The rows whose culprit is among the loaded builds ``lo..hi``, as ``lifecycle.as_change_point`` reads
        them: no ``z`` or ``merged_into``; a culprit range end or detection build outside the loaded builds read
        as the culprit."""
        return [dataclasses.replace(row.cp, z=0.0, merged_into=None,
                                    first_index=row.cp.first_index if lo <= row.cp.first_index <= hi else c,
                                    last_index=row.cp.last_index if lo <= row.cp.last_index <= hi else c,
                                    detected_at=row.detected_at if lo <= row.detected_at <= hi else c)
                for c, row in self.rows.items() if lo <= c <= hi]


def decision(event: Event) -> tuple:
    """What a build decided about a change point: the event and everything the alert shows."""
    c = event.change_point
    if event.type == "merged":  # the worker reads only which alert a drift took in (lifecycle.merge_into)
        return (event.type, c.index, c.direction)
    return (event.type, c.index, c.first_index, c.last_index, c.direction, c.rel_change, c.abs_change, c.before,
            c.after, c.before_ci, c.after_ci, c.p_value, c.test, c.confirmed, c.withdrawn, c.shape,
            c.slope_per_build, c.window_builds, c.sensitivity)


def differences(rec: dict, *, forget_open: bool = False) -> list[tuple[int, list[tuple], list[tuple]]]:
    """The builds where the resumed detector decides otherwise than the streaming one: ``(k, streamed, resumed)``;
    ``forget_open`` resumes without the open alert (a broken store, to show the replay can fail)."""
    points, kind, lower, config = series_input(rec)
    streamed = OnlineDetector(kind, lower, config)
    store = WorkerStore()
    differ = []
    for k, point in enumerate(points):
        lo = max(0, k - LOADED + 1)
        stored = [cp for cp in store.read_back(lo, k) if cp.confirmed or cp.withdrawn or not forget_open]
        resumed = OnlineDetector.resume(points[lo:k], stored, start_index=lo, kind=kind, lower_is_better=lower,
                                        config=config)
        got = [decision(e) for e in resumed.step(point)]
        events = streamed.step(point)
        want = [decision(e) for e in events]
        for e in events:
            store.apply(e)
        if got != want:
            differ.append((k, want, got))
    return differ


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    series = builds = 0
    differ: dict[str, list] = {}
    for f in args.files:
        for line in Path(f).read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                try:
                    d = differences(rec)
                except InvalidSeries as exc:
                    print(f"error: {f}: series {rec.get('id')!r}: {exc}", file=sys.stderr)
                    return 2
                series += 1
                builds += len(rec["points"])
                if d:
                    differ[str(rec["id"])] = d
    if args.json:
        json.dump({"series": series, "builds": builds, "differ": {k: v[:3] for k, v in differ.items()}}, sys.stdout)
        print()
    else:
        print(f"{series} series, {builds} builds; series with a build decided otherwise on resume: {len(differ)}")
        for sid, d in differ.items():
            print(f"  {sid}: {len(d)} builds, first {d[0]}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
