"""Bencher Metric Format (https://bencher.dev/bmf.json).

Shape::

    {"<benchmark>": {"<measure>": {"value": n, "lower_value"?: n, "upper_value"?: n}}}

Each (benchmark, measure) becomes one value metric named ``<benchmark>.<measure>``, sanitised to
``[A-Za-z0-9._/:-]`` (``tests::benchmark_a`` / ``latency`` -> ``tests::benchmark_a.latency``;
``bench_play_game`` / ``Final Bytes`` -> ``bench_play_game.Final_Bytes``). ``lower_value`` and
``upper_value`` (Bencher's bounds) are checked to be numbers when present but not stored.

Kind from the measure's slug (lower-cased, spaces and ``_`` as ``-``), following Bencher's built-in
measures:

* ``latency`` -> time, ns;  ``build-time`` -> time, s;
* ``throughput`` -> score, ``ops/s``, higher is better;
* ``file-size`` -> size, bytes;
* ``...bytes...`` (dhat: ``Total Bytes``, ``Max Bytes``, ...) -> memory, bytes;
  ``...blocks...`` -> memory, blocks; ``memory``/``rss``/``heap`` -> memory;
* iai/callgrind counts (``instructions``, ``cycles``, ``...-hits``, ``...-accesses``,
  ``total-read-write``) -> count;
* anything else -> other, no unit, lower is better.

No build fields: give app, platform, branch, build, ... as query parameters.
"""

from __future__ import annotations

import json

from metrics.formats.base import FieldError, ParsedMetric, ParsedUpload
from metrics.formats.common import MetricCollector, finite_number, join_name, key_path, require_object


def measure_kind(measure: str) -> tuple[str, str, bool]:
    """(kind, unit, lower_is_better) for a BMF measure name."""
    slug = measure.strip().lower().replace(" ", "-").replace("_", "-")
    if slug == "latency":
        return "time", "ns", True
    if slug == "build-time":
        return "time", "s", True
    if slug == "throughput":
        return "score", "ops/s", False
    if slug == "file-size":
        return "size", "bytes", True
    if "bytes" in slug:
        return "memory", "bytes", True
    if "blocks" in slug:
        return "memory", "blocks", True
    if any(w in slug for w in ("memory", "rss", "heap")):
        return "memory", "", True
    if slug in ("instructions", "total-read-write") or any(
        w in slug for w in ("cycles", "-hits", "-accesses", "-misses")
    ):
        return "count", "", True
    return "other", "", True


def parse(body: object) -> ParsedUpload:
    body = require_object(body, "a Bencher Metric Format")
    out = MetricCollector()
    errors = out.errors
    for bench, measures in body.items():
        bpath = key_path("", bench)
        if not bench:
            errors.append(FieldError(bpath, "benchmark name must not be empty"))
            continue
        if not isinstance(measures, dict):
            errors.append(FieldError(bpath, "must be an object of measures"))
            continue
        for measure, result in measures.items():
            mpath = key_path(bpath, measure)
            if not measure:
                errors.append(FieldError(mpath, "measure name must not be empty"))
                continue
            if not isinstance(result, dict):
                errors.append(FieldError(mpath, "must be an object with value"))
                continue
            value = finite_number(result.get("value"))
            if value is None:
                errors.append(FieldError(f"{mpath}.value", "must be a finite number"))
            bad_bound = False
            for bound in ("lower_value", "upper_value"):
                if result.get(bound) is not None and finite_number(result[bound]) is None:
                    errors.append(FieldError(f"{mpath}.{bound}", "must be a finite number"))
                    bad_bound = True
            if value is None or bad_bound:
                continue
            kind, unit, lib = measure_kind(measure)
            out.add(
                mpath,
                json.dumps([bench, measure]),
                ParsedMetric(join_name(bench, measure), kind, unit, lower_is_better=lib, value=value),
            )
    return ParsedUpload(metrics=out.finish(""))
