"""Google Benchmark ``--benchmark_format=json`` / ``--benchmark_out_format=json`` output.

Shape read::

    {"context": {"date", "executable", "host_name", "library_build_type", ...},
     "benchmarks": [{"name", "run_name"?, "run_type"?: "iteration"|"aggregate", "aggregate_name"?,
                     "aggregate_unit"?, "repetitions"?, "iterations", "real_time", "cpu_time",
                     "time_unit"?: "ns"|"us"|"ms"|"s", "error_occurred"?, "skipped"?,
                     <user counters>: number, ...}]}

Entries are grouped by ``run_name`` (``name`` in older output without it), in order of first
appearance. For each group:

* ``<run_name>``: the ``real_time`` of every iteration entry (one per repetition) as samples, kind time,
  unit ``time_unit`` of the group's first entry (others are converted to it; default ``ns``);
* ``<run_name>.cpu_time``: the same for ``cpu_time``;
* ``<run_name>.<counter>``: every numeric user counter (``items_per_second``, ``bytes_per_second``,
  custom ones), samples over the iterations. Counters ending in ``per_second`` are rates
  (higher is better, unit ``items/s``/``bytes/s``/``/s``); others get their kind from the name and are
  lower-is-better. Non-finite counter values are skipped.

A group without iteration entries (``--benchmark_report_aggregates_only``) uses its ``median``
aggregate as the value, else its ``mean``; other aggregates (``stddev``, ``cv``, ``BigO``, ``RMS``,
percentage aggregates, unnamed ones) are not stored. Entries with ``error_occurred``/``skipped`` set
are dropped, and entries without ``real_time``/``cpu_time`` contribute only their counters. Names are
sanitised to ``[A-Za-z0-9._/:-]`` (``BM_Foo/8/threads:2`` stays as it is). ``context.date`` is the
time the benchmark ran, in local time without a zone in older versions, so it is not used as the
build timestamp: give ``?timestamp=`` (the ingest layer otherwise uses the receive time).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from metrics.formats.base import MAX_SAMPLES, FieldError, ParsedMetric, ParsedUpload, UploadInvalid
from metrics.formats.common import (
    MetricCollector,
    finite_number,
    guess_kind,
    index_path,
    is_number,
    join_name,
    key_path,
    require_object,
)

_NS_PER = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
_KNOWN_KEYS = frozenset(
    {
        "name", "run_name", "run_type", "family_index", "per_family_instance_index", "repetitions",
        "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit",
        "aggregate_name", "aggregate_unit", "label", "error_occurred", "error_message", "skipped",
        "skip_message", "big_o", "cpu_coefficient", "real_coefficient", "rms", "manual_time",
    }
)  # fmt: skip


@dataclass
class _Group:
    path: str
    unit: str | None = None
    real: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    counters: dict[str, list[float]] = field(default_factory=dict)
    # aggregate_name -> {"real", "cpu", "unit", "counters", "path"}
    aggregates: dict[str, dict] = field(default_factory=dict)


def _times(entry: dict, path: str, errors: list[FieldError]) -> tuple[float | None, float | None, str]:
    unit = entry.get("time_unit", "ns")
    if not isinstance(unit, str) or unit not in _NS_PER:
        errors.append(FieldError(f"{path}.time_unit", "must be one of ns, us, ms, s"))
        unit = "ns"
    out: list[float | None] = []
    for key in ("real_time", "cpu_time"):
        raw = entry.get(key)
        if raw is None:
            out.append(None)
            continue
        v = finite_number(raw)
        if v is None:
            errors.append(FieldError(f"{path}.{key}", "must be a finite number"))
        out.append(v)
    return out[0], out[1], unit


def _counters(entry: dict) -> dict[str, float]:
    found: dict[str, float] = {}
    for k, v in entry.items():
        if k in _KNOWN_KEYS or not is_number(v):
            continue
        f = finite_number(v)
        if f is not None:
            found[k] = f
    return found


def _counter_kind(name: str) -> tuple[str, str, bool]:
    low = name.lower()
    if low.endswith("per_second"):
        what = low[: -len("per_second")].rstrip("_")
        return "rate", f"{what}/s" if what else "/s", False
    kind, unit = guess_kind("", name)
    return kind, unit, True


def _convert(v: float, unit: str, to: str) -> float:
    return v * _NS_PER[unit] / _NS_PER[to]


def parse(body: object) -> ParsedUpload:
    body = require_object(body, "a Google Benchmark")
    benchmarks = body.get("benchmarks")
    if not isinstance(benchmarks, list):
        raise UploadInvalid([FieldError("benchmarks", "must be a list of benchmarks")])
    out = MetricCollector(
        empty_message="no measurements found: no iteration with real_time/cpu_time or counters, "
        "and no median or mean aggregate"
    )
    errors = out.errors
    groups: dict[str, _Group] = {}
    for i, entry in enumerate(benchmarks):
        path = index_path("benchmarks", i)
        if not isinstance(entry, dict):
            errors.append(FieldError(path, "must be an object"))
            continue
        run_name = entry.get("run_name")
        if not isinstance(run_name, str) or not run_name:
            run_name = entry.get("name")
        if not isinstance(run_name, str) or not run_name:
            errors.append(FieldError(f"{path}.name", "must be a non-empty string"))
            continue
        if entry.get("error_occurred") is True or entry.get("skipped") not in (None, False, 0):
            continue
        real, cpu, unit = _times(entry, path, errors)
        group = groups.setdefault(run_name, _Group(path))
        if entry.get("run_type") == "aggregate":
            agg = entry.get("aggregate_name")
            if agg in ("median", "mean") and entry.get("aggregate_unit", "time") == "time":
                group.aggregates.setdefault(
                    agg, {"real": real, "cpu": cpu, "unit": unit, "counters": _counters(entry), "path": path}
                )
            continue
        if real is not None or cpu is not None:
            group.unit = group.unit or unit
            if real is not None:
                group.real.append(_convert(real, unit, group.unit))
            if cpu is not None:
                group.cpu.append(_convert(cpu, unit, group.unit))
        for k, v in _counters(entry).items():
            group.counters.setdefault(k, []).append(v)

    for run_name, g in groups.items():
        has_iterations = bool(g.real or g.cpu or g.counters)
        if has_iterations:
            unit = g.unit or "ns"
            series: list[tuple[str, str, str, str, bool, list[float]]] = [
                ("", "real_time", "time", unit, True, g.real),
                ("cpu_time", "cpu_time", "time", unit, True, g.cpu),
            ]
            for cname, values in g.counters.items():
                kind, cunit, lib = _counter_kind(cname)
                series.append((cname, cname, kind, cunit, lib, values))
            for suffix, key, kind, unit_, lib, values in series:
                if not values:
                    continue
                if len(values) > MAX_SAMPLES:
                    errors.append(FieldError(g.path, f"at most {MAX_SAMPLES} repetitions per benchmark"))
                    continue
                out.add(
                    key_path(g.path, key),
                    json.dumps([run_name, suffix]),
                    ParsedMetric(
                        join_name(run_name, suffix), kind, unit_, lower_is_better=lib, samples=tuple(values)
                    ),
                )
            continue
        agg = g.aggregates.get("median") or g.aggregates.get("mean")
        if agg is None:
            continue
        for suffix, key in (("", "real"), ("cpu_time", "cpu")):
            if agg[key] is not None:
                out.add(
                    agg["path"],
                    json.dumps([run_name, suffix]),
                    ParsedMetric(join_name(run_name, suffix), "time", agg["unit"], value=agg[key]),
                )
        for cname, v in agg["counters"].items():
            kind, cunit, lib = _counter_kind(cname)
            out.add(
                key_path(agg["path"], cname),
                json.dumps([run_name, cname]),
                ParsedMetric(join_name(run_name, cname), kind, cunit, lower_is_better=lib, value=v),
            )

    return ParsedUpload(metrics=out.finish("benchmarks"))
