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
import sys
from typing import TextIO

from alerts.detection import DEFAULT, Point, detect_hindsight, detect_online
from alerts.detection.model import KINDS, DetectorConfig, default_abs_floor, many_points
from metrics.formats.common import finite_number


class InvalidSeries(ValueError):
    """A series record the detector cannot read; the message starts with the field's path."""


DIRECTIONS = ("lower_is_better", "higher_is_better")


def _short(v: object) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _number(v: object, path: str) -> float:
    f = finite_number(v)
    if f is None:
        raise InvalidSeries(f"{path}: must be a finite number, got {_short(v)}")
    return f


def _count(v: object, path: str) -> int:
    f = finite_number(v)
    if f is None or f < 0 or f != int(f):
        raise InvalidSeries(f"{path}: must be a non-negative whole number, got {_short(v)}")
    return int(f)


def series_points(rec: dict) -> list[Point]:
    """The ``points`` of a series record as detector input; :class:`InvalidSeries` names the first bad field."""
    raw = rec.get("points")
    if not isinstance(raw, list):
        got = type(raw).__name__ if raw is not None else "nothing"
        raise InvalidSeries(f"points: must be a list of builds, got {got}")
    plain = _plain_values(raw)
    if plain is not None:
        return many_points([(v, None, None, None) for v in plain])
    pts = []
    for i, p in enumerate(raw):
        at = f"points[{i}]"
        if not isinstance(p, dict):
            raise InvalidSeries(f"{at}: must be an object with a value, got {_short(p)}")
        count, total = p.get("count"), p.get("total")
        if "value" not in p:
            # A rate build may give only its count and total: its value is their ratio (eval/README.md).
            if count is None or total is None:
                raise InvalidSeries(f"{at}.value: missing")
            value = _count(count, f"{at}.count") / max(_count(total, f"{at}.total"), 1)
        else:
            value = _number(p["value"], f"{at}.value")
        samples = p.get("samples")
        if samples is not None:
            if not isinstance(samples, list):
                raise InvalidSeries(f"{at}.samples: must be a list of numbers, got {_short(samples)}")
            try:  # one sum for the common all-numbers case; the slow pass only to name the bad run
                ok = math.isfinite(sum(samples)) and not any(isinstance(x, bool) for x in samples)
            except (TypeError, OverflowError):
                ok = False
            if not ok:
                for j, x in enumerate(samples):
                    _number(x, f"{at}.samples[{j}]")
            samples = tuple(samples)
        if (count is None) != (total is None):
            raise InvalidSeries(f"{at}: count and total must be given together")
        if count is not None:
            count, total = _count(count, f"{at}.count"), _count(total, f"{at}.total")
        try:
            pts.append(Point(value, samples or None, count, total))
        except ValueError as exc:
            raise InvalidSeries(f"{at}: {exc}") from None
    return pts


def _plain_values(raw: list) -> list[float] | None:
    """The values of builds that hold nothing the detector reads but a finite float ``value`` (most real series:
    one value per push), checked in one pass; None if any build holds more or anything else."""
    out = []
    for p in raw:
        if type(p) is not dict:
            return None
        v = p.get("value")
        if (type(v) is not float or not math.isfinite(v) or p.get("samples") is not None
                or p.get("count") is not None or p.get("total") is not None):
            return None
        out.append(v)
    return out


def series_settings(rec: dict) -> tuple[str, bool]:
    """``(kind, lower_is_better)`` of a series record (``kind``, ``direction`` absent or null: ``other``, lower is
    better); the record must have an ``id`` and may have a ``unit`` (a string)."""
    sid = rec.get("id")
    if not isinstance(sid, (str, int)) or isinstance(sid, bool):
        raise InvalidSeries(f"id: must be a string or an integer, got {_short(sid)}")
    kind = rec.get("kind")
    kind = "other" if kind is None else kind
    if kind not in KINDS:
        raise InvalidSeries(f"kind: must be one of {', '.join(KINDS)}, got {_short(kind)}")
    direction = rec.get("direction")
    direction = "lower_is_better" if direction is None else direction
    if direction not in DIRECTIONS:
        raise InvalidSeries(f"direction: must be one of {', '.join(DIRECTIONS)}, got {_short(direction)}")
    unit = rec.get("unit")
    if unit is not None and not isinstance(unit, str):
        raise InvalidSeries(f"unit: must be a string, got {_short(unit)}")
    return kind, direction == "lower_is_better"


def series_input(rec: dict, config: DetectorConfig = DEFAULT) -> tuple[list[Point], str, bool, DetectorConfig]:
    """``(points, kind, lower_is_better, config)`` of a series record, as the detector takes them; ``config``
    without an ``abs_floor`` gets the kind's default one."""
    kind, lower = series_settings(rec)
    pts = series_points(rec)
    if config.abs_floor is None:
        config = config.with_overrides(abs_floor=default_abs_floor(kind, rec.get("unit")))
    return pts, kind, lower, config


def detect_series(rec: dict, *, online: bool, config: DetectorConfig = DEFAULT) -> dict:
    """Change points of one series record (``series_input``)."""
    pts, kind, lower, config = series_input(rec, config)
    fn = detect_online if online else detect_hindsight
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
    try:
        f = open(series_path, "rb")  # closed by the with below
    except OSError as exc:
        print(f"error: cannot read {series_path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    with f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8").strip()
            except UnicodeDecodeError as exc:
                print(f"{series_path}:{lineno}: not UTF-8: {exc}", file=sys.stderr)
                return 2
            if not line:
                continue
            try:
                rec = json.loads(line)
            except ValueError as exc:
                print(f"{series_path}:{lineno}: not JSON: {exc}", file=sys.stderr)
                return 2
            if not isinstance(rec, dict):
                print(f"{series_path}:{lineno}: a series must be a JSON object, got {type(rec).__name__}",
                      file=sys.stderr)
                return 2
            try:
                result = detect_series(rec, online=online)
            except InvalidSeries as exc:
                print(f"{series_path}:{lineno}: {rec.get('id', '(no id)')}: {exc}", file=sys.stderr)
                return 2
            out.write(json.dumps(result, separators=(",", ":")) + "\n")
    return 0
