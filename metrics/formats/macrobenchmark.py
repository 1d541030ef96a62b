"""Jetpack (Macro)benchmark ``benchmarkData.json`` (androidx.benchmark ``BenchmarkData``).

Shape read (every other key, e.g. ``totalRunTimeNs``, ``warmupIterations``, ``repeatIterations``,
``thermalThrottleSleepSeconds``, ``profilerOutputs``, ``context.compilationMode``, is ignored)::

    {"context": {"build": {"model", "device", ...}, ...},
     "benchmarks": [{"className", "name", "params": {...},
                     "metrics": {metricName: {"minimum", "maximum", "median", "runs": [..]}},
                     "sampledMetrics": {metricName: {"P50", "P90", "P95", "P99", "runs": [[..], ..]}}}]}

Names: ``<ClassSimpleName>.<test>[.<key>:<value>...].<metricName>``, sanitised to
``[A-Za-z0-9._/:-]`` (other characters become ``_``), where

* ``ClassSimpleName`` is the part of ``className`` after its last ``.`` (left out when missing);
* ``test`` is ``name`` without its JUnit parameter suffix ``[...]``;
* the parameters come from ``params``, sorted by key, one ``.<key>:<value>`` each; when ``params`` is
  empty but ``name`` has a ``[...]`` suffix (e.g. ``startup[0]``) its content is one extra part.

  ``TrivialStartupBenchmark`` / ``startup[mode=COLD]`` / ``{"mode": "COLD"}`` / ``startupMs`` gives
  ``TrivialStartupBenchmark.startup.mode:COLD.startupMs``.

Values: ``metrics[x].runs`` (one number per iteration) become the samples; without ``runs`` the
``median`` is the value. ``sampledMetrics`` (per-frame distributions, often thousands of numbers per
run) give one value metric per percentile key ``P<n>``: ``<...>.frameDurationCpuMs.P50``,
``.P90``, ``.P95``, ``.P99``.

Kind and unit from the metric name (:func:`metrics.formats.common.guess_kind`): ``...Ms`` -> time/ms,
``...Ns`` -> time/ns, ``...Count`` -> count, ``...Kb``/``memory...`` -> memory/KB, else other. All
metrics are lower-is-better.

Device: ``context.build.model`` (e.g. ``Pixel 5``), else ``context.build.device`` (e.g. ``redfin``),
with characters not allowed in a device label replaced by ``_``. A ``?device=`` query parameter wins.
The format carries no build id, commit or timestamp.
"""

from __future__ import annotations

import json
import re

from metrics.formats.base import FieldError, ParsedMetric, ParsedUpload, UploadInvalid
from metrics.formats.common import (
    MetricCollector,
    finite_number,
    guess_kind,
    index_path,
    join_name,
    key_path,
    read_samples,
    require_object,
    sanitise_device,
)

_PERCENTILE = re.compile(r"^P\d{1,2}(\.\d+)?$")
_JUNIT_SUFFIX = re.compile(r"^(.*?)\[(.*)\]$", re.S)


def _param_text(v: object) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        try:
            return str(v)
        except ValueError:  # an int beyond Python's digit limit
            return "_"
    return "_"


def benchmark_parts(class_name: object, name: str, params: object) -> list[str]:
    """The name parts of one benchmark before the metric name (see the module docstring)."""
    parts: list[str] = []
    if isinstance(class_name, str) and class_name:
        parts.append(class_name.rsplit(".", 1)[-1])
    m = _JUNIT_SUFFIX.match(name)
    base, bracket = (m.group(1), m.group(2)) if m and m.group(1) else (name, "")
    parts.append(base)
    if isinstance(params, dict) and params:
        for k in sorted(params, key=str):
            parts.append(f"{k}:{_param_text(params[k])}")
    elif bracket:
        parts.append(bracket)
    return parts


def _device(body: dict) -> str | None:
    ctx = body.get("context")
    build = ctx.get("build") if isinstance(ctx, dict) else None
    if not isinstance(build, dict):
        return None
    return sanitise_device(build.get("model")) or sanitise_device(build.get("device"))


def parse(body: object) -> ParsedUpload:
    body = require_object(body, "a Macrobenchmark")
    benchmarks = body.get("benchmarks")
    if not isinstance(benchmarks, list):
        raise UploadInvalid([FieldError("benchmarks", "must be a list of benchmarks")])
    out = MetricCollector()
    errors = out.errors
    for i, bench in enumerate(benchmarks):
        bpath = index_path("benchmarks", i)
        if not isinstance(bench, dict):
            errors.append(FieldError(bpath, "must be an object"))
            continue
        name = bench.get("name")
        if not isinstance(name, str) or not name:
            errors.append(FieldError(f"{bpath}.name", "must be a non-empty string"))
            continue
        class_name = bench.get("className")
        params = bench.get("params")
        params_text = (
            sorted((str(k), _param_text(v)) for k, v in params.items()) if isinstance(params, dict) else []
        )
        ident = json.dumps([class_name if isinstance(class_name, str) else None, name, params_text])
        parts = benchmark_parts(class_name, name, params)

        metrics = bench.get("metrics")
        if metrics is not None and not isinstance(metrics, dict):
            errors.append(FieldError(f"{bpath}.metrics", "must be an object"))
            metrics = None
        for mname, stats in (metrics or {}).items():
            mpath = key_path(f"{bpath}.metrics", mname)
            if not isinstance(stats, dict):
                errors.append(FieldError(mpath, "must be an object with runs or median"))
                continue
            kind, unit = guess_kind("", mname)
            metric_name = join_name(*parts, mname)
            identity = json.dumps([ident, mname])
            runs = stats.get("runs")
            if isinstance(runs, list) and runs:
                samples = read_samples(runs, f"{mpath}.runs", errors)
                if samples is not None:
                    out.add(mpath, identity, ParsedMetric(metric_name, kind, unit, samples=samples))
                continue
            median = finite_number(stats.get("median"))
            if median is None:
                errors.append(FieldError(mpath, "needs runs (a list of numbers) or a finite median"))
                continue
            out.add(mpath, identity, ParsedMetric(metric_name, kind, unit, value=median))

        sampled = bench.get("sampledMetrics")
        if sampled is not None and not isinstance(sampled, dict):
            errors.append(FieldError(f"{bpath}.sampledMetrics", "must be an object"))
            sampled = None
        for mname, stats in (sampled or {}).items():
            mpath = key_path(f"{bpath}.sampledMetrics", mname)
            if not isinstance(stats, dict):
                errors.append(FieldError(mpath, "must be an object with P50, P90, ..."))
                continue
            kind, unit = guess_kind("", mname)
            found = False
            for pkey in sorted((k for k in stats if _PERCENTILE.match(k)), key=lambda k: float(k[1:])):
                found = True
                v = finite_number(stats[pkey])
                if v is None:
                    errors.append(FieldError(key_path(mpath, pkey), "must be a finite number"))
                    continue
                out.add(
                    key_path(mpath, pkey),
                    json.dumps([ident, mname, pkey]),
                    ParsedMetric(join_name(*parts, mname, pkey), kind, unit, value=v),
                )
            if not found:
                errors.append(FieldError(mpath, "needs percentile values such as P50, P90, P95, P99"))

    metrics_out = out.finish("benchmarks")
    return ParsedUpload(device=_device(body), metrics=metrics_out)
