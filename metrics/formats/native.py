"""The platform's own upload body (docs/API.md section 2).

Shape::

    {"app", "platform", "branch", "device"?,
     "build": {"id", "commit", "timestamp", "version", "parent_commit"},
     "metrics": [{"name", "kind", "unit"?, "lower_is_better"?, "value" | "samples" | "count"+"total"}]}

Every problem is reported, each with its JSON path (``metrics[3].samples[2]``, ``build.timestamp``).
This module checks types and the metric rules; whether app/platform/branch/build id are present and
well formed (they may also come as query parameters) is checked by :mod:`metrics.formats.complete`.

Metric rules: ``name`` matches ``[A-Za-z0-9._/:-]{1,200}`` and is unique in the upload; ``kind`` is
one of :data:`KINDS`; ``unit`` is a string of at most 50 characters (``""`` when absent);
``lower_is_better`` is a bool (default true for a new metric; left out, a known metric keeps its stored
direction); exactly one of ``value`` (finite number), ``samples``
(1..10,000 finite numbers) or ``count`` + ``total`` (integers, 0 <= count <= total, total > 0).
``metrics`` holds 1..5,000 metrics. Unknown keys are ignored.
"""

from __future__ import annotations

from metrics.formats.base import KINDS, BuildInfo, FieldError, ParsedMetric, ParsedUpload, UploadInvalid
from metrics.formats.common import (
    MAX_METRICS,
    check_metric_name,
    finite_number,
    index_path,
    read_samples,
    require_object,
    strict_int,
)

MAX_UNIT = 50
_TOP_STRINGS = ("app", "platform", "branch", "device")
_BUILD_STRINGS = ("id", "commit", "timestamp", "version", "parent_commit", "base_commit", "base_branch", "requested")
MAX_COMMITS = 1000


#: Build fields CI tools often write as JSON numbers (a run number, an id): taken as their decimal text.
_NUMBER_OK = ("id",)


def _opt_str(obj: dict, key: str, path: str, errors: list[FieldError]) -> str | None:
    v = obj.get(key)
    if v is None:
        return None
    if key in _NUMBER_OK and isinstance(v, int) and not isinstance(v, bool) and v >= 0:
        return str(v)
    if not isinstance(v, str):
        errors.append(FieldError(path, f"must be a string, not {_type_name(v)}"))
        return None
    return v


def _commits(raw: object, errors: list[FieldError]) -> tuple[str, ...] | None:
    """`build.commits`: a list of commit strings (their pattern is checked with the other build fields)."""
    if raw is None:
        return None
    if not isinstance(raw, list):
        errors.append(FieldError("build.commits", f"must be a list of commits, not {_type_name(raw)}"))
        return None
    if len(raw) > MAX_COMMITS:
        errors.append(FieldError("build.commits", f"at most {MAX_COMMITS} commits (got {len(raw)})"))
        return None
    out = []
    for i, c in enumerate(raw):
        if not isinstance(c, str):
            errors.append(FieldError(f"build.commits[{i}]", f"must be a string, not {_type_name(c)}"))
        else:
            out.append(c)
    return tuple(out)


def _type_name(v: object) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int | float):
        return "a number"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, str):
        return "a string"
    return "null" if v is None else type(v).__name__


def _metric(raw: object, path: str, errors: list[FieldError]) -> ParsedMetric | None:
    if not isinstance(raw, dict):
        errors.append(FieldError(path, "must be an object"))
        return None
    n_errors = len(errors)

    name = raw.get("name")
    if name is None:
        errors.append(FieldError(f"{path}.name", "is required"))
    elif not check_metric_name(name):
        errors.append(FieldError(f"{path}.name", "must be 1-200 characters from A-Z a-z 0-9 . _ / : -"))

    kind = raw.get("kind")
    if kind is None:
        errors.append(FieldError(f"{path}.kind", f"is required (one of {', '.join(KINDS)})"))
    elif not isinstance(kind, str) or kind not in KINDS:
        errors.append(FieldError(f"{path}.kind", f"must be one of {', '.join(KINDS)}"))

    unit = raw.get("unit", "")
    if unit is None:
        unit = ""
    if not isinstance(unit, str):
        errors.append(FieldError(f"{path}.unit", "must be a string"))
    elif len(unit) > MAX_UNIT:
        errors.append(FieldError(f"{path}.unit", f"at most {MAX_UNIT} characters"))

    lib = raw.get("lower_is_better")
    direction_given = lib is not None
    if lib is None:
        lib = True
    if not isinstance(lib, bool):
        errors.append(FieldError(f"{path}.lower_is_better", "must be true or false"))

    has = [k for k in ("value", "samples", "count", "total") if raw.get(k) is not None]
    value = samples = count = total = None
    shapes = int("value" in has) + int("samples" in has) + int("count" in has or "total" in has)
    if shapes == 0:
        errors.append(FieldError(path, "needs one of value, samples or count + total"))
    elif shapes > 1:
        errors.append(
            FieldError(path, f"needs exactly one of value, samples or count + total (got {', '.join(has)})")
        )
    elif "value" in has:
        value = finite_number(raw["value"])
        if value is None:
            errors.append(FieldError(f"{path}.value", "must be a finite number"))
    elif "samples" in has:
        samples = read_samples(raw["samples"], f"{path}.samples", errors)
    else:
        if "count" not in has:
            errors.append(FieldError(f"{path}.count", "is required with total"))
        if "total" not in has:
            errors.append(FieldError(f"{path}.total", "is required with count"))
        if "count" in has and "total" in has:
            count = strict_int(raw["count"])
            total = strict_int(raw["total"])
            if count is None:
                errors.append(FieldError(f"{path}.count", "must be an integer"))
            elif count < 0:
                errors.append(FieldError(f"{path}.count", "must be 0 or more"))
            if total is None:
                errors.append(FieldError(f"{path}.total", "must be an integer"))
            elif total <= 0:
                errors.append(FieldError(f"{path}.total", "must be more than 0"))
            if count is not None and total is not None and 0 <= count and total > 0 and count > total:
                errors.append(FieldError(f"{path}.count", "must not be more than total"))

    if len(errors) > n_errors:
        return None
    return ParsedMetric(
        name=name,  # type: ignore[arg-type]
        kind=kind,  # type: ignore[arg-type]
        unit=unit,  # type: ignore[arg-type]
        lower_is_better=lib,  # type: ignore[arg-type]
        direction_given=direction_given,
        value=value,
        samples=samples,
        count=count,
        total=total,
    )


def parse(body: object) -> ParsedUpload:
    body = require_object(body, "the upload")
    errors: list[FieldError] = []

    top = {k: _opt_str(body, k, k, errors) for k in _TOP_STRINGS}

    build_raw = body.get("build")
    build = BuildInfo()
    if build_raw is not None:
        if not isinstance(build_raw, dict):
            errors.append(FieldError("build", "must be an object with id, commit, timestamp, version"))
        else:
            build = BuildInfo(
                **{k: _opt_str(build_raw, k, f"build.{k}", errors) for k in _BUILD_STRINGS},
                commits=_commits(build_raw.get("commits"), errors),
            )

    metrics: list[ParsedMetric] = []
    raw_metrics = body.get("metrics")
    if raw_metrics is None:
        errors.append(FieldError("metrics", "is required: a list of metrics"))
    elif not isinstance(raw_metrics, list):
        errors.append(FieldError("metrics", "must be a list of metrics"))
    elif not raw_metrics:
        errors.append(FieldError("metrics", "must hold at least one metric"))
    elif len(raw_metrics) > MAX_METRICS:
        errors.append(
            FieldError("metrics", f"at most {MAX_METRICS} metrics per upload (got {len(raw_metrics)})")
        )
    else:
        seen: dict[str, int] = {}
        for i, raw in enumerate(raw_metrics):
            path = index_path("metrics", i)
            m = _metric(raw, path, errors)
            if isinstance(raw, dict) and isinstance(raw.get("name"), str) and check_metric_name(raw["name"]):
                name = raw["name"]
                if name in seen:
                    errors.append(
                        FieldError(path, f"duplicate metric name {name!r} (first at metrics[{seen[name]}])")
                    )
                    continue
                seen[name] = i
            if m is not None:
                metrics.append(m)

    if errors:
        raise UploadInvalid(errors)
    return ParsedUpload(
        app=top["app"],
        platform=top["platform"],
        branch=top["branch"],
        device=top["device"],
        build=build,
        metrics=tuple(metrics),
    )
