#!/usr/bin/env python3
"""Whether the worker's resumed detector decides as the streaming one, on every build of series files.

    .venv/bin/python bench/eval_resume.py SERIES.jsonl... [--json]

The upload worker is stateless: for each build it reloads the last ``window + NOISE_EVERY`` builds and the series'
stored alerts, calls ``OnlineDetector.resume`` and steps once (``alerts/analysis.py``); ``perfplatform detect
--online`` and the benchmarks stream the whole series through one detector. Each series is replayed both ways,
build by build, the stored change points given back as the database keeps them (``lifecycle.as_change_point``: no
``z``, no ``merged_into``, a detection build outside the window read as the culprit), and every build where the
two decide otherwise (event type, culprit and its range, size, levels, p-value, state, shape) is reported. Exit 1
when any build differs. ``tests/test_resume_real.py`` runs it on ``bench/data/real``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from alerts.detection.model import ChangePoint, Event  # noqa: E402
from alerts.detection.online import NOISE_EVERY, OnlineDetector  # noqa: E402
from perfplatform.detect_cmd import series_input  # noqa: E402


def as_stored(cp: ChangePoint, window_start: int) -> ChangePoint:
    """``cp`` as the worker reads it back from its alert (``lifecycle.as_change_point``)."""
    detected_at = cp.detected_at if cp.detected_at >= window_start else cp.index
    return dataclasses.replace(cp, z=0.0, merged_into=None, detected_at=detected_at)


def decision(event: Event) -> tuple:
    c = event.change_point
    return (event.type, c.index, c.first_index, c.last_index, c.direction, c.rel_change, c.before, c.after,
            c.p_value, c.confirmed, c.withdrawn, c.shape, c.window_builds)


def differences(rec: dict, *, forget_open: bool = False) -> list[tuple[int, list[tuple], list[tuple]]]:
    """The builds where the resumed detector decides otherwise than the streaming one: ``(k, streamed, resumed)``;
    ``forget_open`` resumes without the open alerts (a broken store, to show the replay can fail)."""
    points, kind, lower, config = series_input(rec)
    keep = config.window + NOISE_EVERY
    streamed = OnlineDetector(kind, lower, config)
    differ = []
    for k, point in enumerate(points):
        start = max(0, k - keep)
        stored = [as_stored(cp, start) for cp in streamed.history
                  if cp.index >= start and (cp.confirmed or not forget_open)]
        resumed = OnlineDetector.resume(points[start:k], stored, start_index=start, kind=kind,
                                        lower_is_better=lower, config=config)
        got = [decision(e) for e in resumed.step(point)]
        want = [decision(e) for e in streamed.step(point)]
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
                series += 1
                builds += len(rec["points"])
                if d := differences(rec):
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
