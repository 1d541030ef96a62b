"""Perfherder ``PERFHERDER_DATA`` payload (treeherder ``schemas/performance-artifact.json``).

Shape read (other keys such as ``shouldAlert``, ``alertThreshold``, ``tags``, ``publicName``,
``os`` are ignored)::

    {"framework": {"name"}, "application": {"name", "version"}?,
     "suites": [{"name", "value"?, "replicates"?, "unit"?, "lowerIsBetter"?, "extraOptions"?,
                 "subtests": [{"name", "value", "replicates"?, "unit"?, "lowerIsBetter"?}]}]}

Names, following Perfherder's own series identity (framework, suite, extraOptions, subtest; tags do
not split series there either):

* suite with a ``value``: ``<framework>.<suite>[:<option>...]``
* every subtest: ``<framework>.<suite>[:<option>...].<subtest>``

where the options are the suite's ``extraOptions`` sorted, each after a ``:``, and every part is
sanitised to ``[A-Za-z0-9._/:-]`` (other characters become ``_``). Example: framework ``awsy``, suite
``Base Content JS``, extraOptions ``["fission"]``, subtest ``After tabs open [+30s, forced GC]`` gives
``awsy.Base_Content_JS:fission.After_tabs_open__30s__forced_GC_``. Names that collide only after
sanitising get ``-<8 hex of SHA-256 of the raw name>`` appended (see
:class:`metrics.formats.common.MetricCollector`); the same suite/subtest twice is an error.

Values: non-empty ``replicates`` become the samples, otherwise ``value`` is the value. A suite without
``value`` (and without replicates) only contributes its subtests.

``lowerIsBetter`` defaults to true for suites and subtests alike and ``unit`` is not inherited by
subtests (as in treeherder). Kind from the unit: ms/s -> time; bytes/KB/MB -> size when the suite or
subtest name mentions size/installer/apk, memory otherwise; ``%`` -> rate; no unit -> other.

``application.version`` (a string) becomes ``build.version``. No build id, commit or timestamp.
"""

from __future__ import annotations

import json

from metrics.formats.base import BuildInfo, FieldError, ParsedMetric, ParsedUpload, UploadInvalid
from metrics.formats.common import (
    MetricCollector,
    finite_number,
    guess_kind,
    index_path,
    join_name,
    read_samples,
    require_object,
    sanitise,
)


def _measurement(
    raw: dict, path: str, name: str, label: str, errors: list[FieldError]
) -> ParsedMetric | None:
    """A metric from a suite or subtest object, or None (with errors appended when it is broken)."""
    unit = raw.get("unit")
    if not isinstance(unit, str):
        unit = ""
    kind, unit = guess_kind(unit, label, from_name=False)
    lib = raw.get("lowerIsBetter", True)
    if not isinstance(lib, bool):
        errors.append(FieldError(f"{path}.lowerIsBetter", "must be true or false"))
        return None
    replicates = raw.get("replicates")
    if isinstance(replicates, list) and replicates:
        samples = read_samples(replicates, f"{path}.replicates", errors)
        if samples is None:
            return None
        return ParsedMetric(name, kind, unit, lower_is_better=lib, samples=samples)
    if replicates is not None and not isinstance(replicates, list):
        errors.append(FieldError(f"{path}.replicates", "must be a list of numbers"))
        return None
    value = finite_number(raw.get("value"))
    if value is None:
        errors.append(FieldError(f"{path}.value", "must be a finite number"))
        return None
    return ParsedMetric(name, kind, unit, lower_is_better=lib, value=value)


def parse(body: object) -> ParsedUpload:
    body = require_object(body, "a Perfherder")
    errors: list[FieldError] = []
    framework = body.get("framework")
    fw_name = framework.get("name") if isinstance(framework, dict) else None
    if not isinstance(fw_name, str) or not fw_name:
        errors.append(FieldError("framework.name", "must be a non-empty string"))
    suites = body.get("suites")
    if not isinstance(suites, list):
        errors.append(FieldError("suites", "must be a list of suites"))
    if errors:
        raise UploadInvalid(errors)
    assert isinstance(fw_name, str) and isinstance(suites, list)

    out = MetricCollector()
    errors = out.errors
    for i, suite in enumerate(suites):
        spath = index_path("suites", i)
        if not isinstance(suite, dict):
            errors.append(FieldError(spath, "must be an object"))
            continue
        sname = suite.get("name")
        if not isinstance(sname, str) or not sname:
            errors.append(FieldError(f"{spath}.name", "must be a non-empty string"))
            continue
        options = suite.get("extraOptions")
        if options is None:
            options = []
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
            errors.append(FieldError(f"{spath}.extraOptions", "must be a list of strings"))
            continue
        opts = sorted(set(options))
        suite_part = sanitise(sname) + "".join(":" + sanitise(o) for o in opts)
        suite_identity = [fw_name, sname, opts]

        if suite.get("value") is not None or suite.get("replicates"):
            m = _measurement(suite, spath, join_name(fw_name, suite_part), sname, errors)
            if m is not None:
                out.add(spath, json.dumps(suite_identity), m)

        subtests = suite.get("subtests", [])
        if subtests is None:
            subtests = []
        if not isinstance(subtests, list):
            errors.append(FieldError(f"{spath}.subtests", "must be a list of subtests"))
            continue
        for j, sub in enumerate(subtests):
            tpath = index_path(f"{spath}.subtests", j)
            if not isinstance(sub, dict):
                errors.append(FieldError(tpath, "must be an object"))
                continue
            tname = sub.get("name")
            if not isinstance(tname, str) or not tname:
                errors.append(FieldError(f"{tpath}.name", "must be a non-empty string"))
                continue
            m = _measurement(sub, tpath, join_name(fw_name, suite_part, tname), f"{sname} {tname}", errors)
            if m is not None:
                out.add(tpath, json.dumps([*suite_identity, tname]), m)

    application = body.get("application")
    version = application.get("version") if isinstance(application, dict) else None
    metrics = out.finish("suites")
    return ParsedUpload(
        build=BuildInfo(version=version if isinstance(version, str) and version else None),
        metrics=metrics,
    )
