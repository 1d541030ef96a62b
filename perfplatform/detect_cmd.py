"""``perfplatform detect SERIES.jsonl [--online]``: run the platform's detector over a series file.

Input: the series JSONL format of the evaluation kit (one series a line with ``kind``, ``direction`` and
``points``). Output: one line per series, ``{"id", "change_points": [{"index", "direction", "rel_change",
"p_value", "detected_at", "first_index", "last_index", "withdrawn", "shape"}]}``, a drift with
``window_builds`` and ``slope_per_build``, online a step a later drift continued with ``merged_into``
(docs/API.md section 3). Online mode feeds builds one at a time through ``OnlineDetector`` (the code path of
the upload worker) and reports withdrawn alerts too.
"""

from __future__ import annotations

import json
import math
from typing import TextIO

from alerts.detection import DEFAULT, Point, detect_hindsight, detect_online
from alerts.detection.model import DetectorConfig, default_abs_floor


def series_points(rec: dict) -> list[Point]:
    pts = []
    for p in rec["points"]:
        samples = p.get("samples")
        pts.append(Point(float(p["value"]), tuple(samples) if samples else None, p.get("count"), p.get("total")))
    return pts


def detect_series(rec: dict, *, online: bool, config: DetectorConfig = DEFAULT) -> dict:
    """Change points of one series record; ``config`` without an ``abs_floor`` gets the kind's default one."""
    kind = rec.get("kind", "other")
    lower = rec.get("direction", "lower_is_better") != "higher_is_better"
    pts = series_points(rec)
    fn = detect_online if online else detect_hindsight
    if config.abs_floor is None:
        config = config.with_overrides(abs_floor=default_abs_floor(kind, rec.get("unit")))
    cps = fn(pts, kind=kind, lower_is_better=lower, config=config)
    out = []
    for cp in cps:
        out.append({
            "index": cp.index,
            "direction": cp.direction,
            "rel_change": round(cp.rel_change, 6) if math.isfinite(cp.rel_change) else None,
            "p_value": float(f"{cp.p_value:.4g}"),
            "detected_at": cp.detected_at,
            "first_index": cp.first_index,
            "last_index": cp.last_index,
            "withdrawn": cp.withdrawn,
            "shape": cp.shape,
        })
        if cp.merged_into is not None:  # online: a step a later drift continued (withdrawn into it)
            out[-1]["merged_into"] = cp.merged_into
        if cp.shape == "drift":  # a gradual change: how long and how steep, as the API and pages show it
            out[-1]["window_builds"] = cp.window_builds
            out[-1]["slope_per_build"] = (float(f"{cp.slope_per_build:.6g}")
                                          if cp.slope_per_build is not None and math.isfinite(cp.slope_per_build)
                                          else None)
    return {"id": rec["id"], "change_points": out}


def run(series_path: str, *, online: bool, out: TextIO) -> int:
    """Detect change points in every series of ``series_path``; 0 on success, 2 on invalid input."""
    with open(series_path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
                result = detect_series(rec, online=online)
            except (ValueError, KeyError, TypeError) as exc:
                print(f"{series_path}:{lineno}: {exc}", file=__import__("sys").stderr)
                return 2
            out.write(json.dumps(result, separators=(",", ":")) + "\n")
    return 0
