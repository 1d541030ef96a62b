"""Which parser reads a body: chosen by name (``?format=``) or detected from the body's shape.

Detection (first match wins; only the top level and the first items are looked at, so any depth of
nesting is cheap):

* ``native`` - an object with a ``metrics`` list;
* ``perfherder`` - an object with ``framework`` and ``suites``;
* ``macrobenchmark`` - ``benchmarks`` is a list and an item has a ``className``, or a ``metrics`` /
  ``sampledMetrics`` object;
* ``google-benchmark`` - ``benchmarks`` is a list and an item has ``run_name``, ``real_time``,
  ``cpu_time``, ``time_unit``, ``run_type`` or ``iterations``; or ``context`` has ``executable`` or
  ``library_build_type``;
* ``bmf`` - a non-empty object whose values are all objects whose values are all objects with a
  ``value``.
"""

from __future__ import annotations

from collections.abc import Callable

from metrics.formats import bmf, google_benchmark, macrobenchmark, native, perfherder
from metrics.formats.base import FieldError, ParsedUpload, UploadInvalid

FORMATS: dict[str, Callable[[object], ParsedUpload]] = {
    "native": native.parse,
    "macrobenchmark": macrobenchmark.parse,
    "perfherder": perfherder.parse,
    "google-benchmark": google_benchmark.parse,
    "bmf": bmf.parse,
}

_GBENCH_ITEM_KEYS = ("run_name", "real_time", "cpu_time", "time_unit", "run_type", "iterations")


def _is_bmf(body: dict) -> bool:
    if not body:
        return False
    for measures in body.values():
        if not isinstance(measures, dict) or not measures:
            return False
        for result in measures.values():
            if not isinstance(result, dict) or "value" not in result:
                return False
    return True


def detect_format(body: object) -> str:
    """The name of the format ``body`` is in, or UploadInvalid at path ``""``."""
    if isinstance(body, dict):
        if isinstance(body.get("metrics"), list):
            return "native"
        if "framework" in body and "suites" in body:
            return "perfherder"
        benchmarks = body.get("benchmarks")
        if isinstance(benchmarks, list):
            items = [b for b in benchmarks if isinstance(b, dict)]
            if any(
                "className" in b
                or isinstance(b.get("metrics"), dict)
                or isinstance(b.get("sampledMetrics"), dict)
                for b in items
            ):
                return "macrobenchmark"
            context = body.get("context")
            if any(k in b for b in items for k in _GBENCH_ITEM_KEYS) or (
                isinstance(context, dict) and ("executable" in context or "library_build_type" in context)
            ):
                return "google-benchmark"
        if _is_bmf(body):
            return "bmf"
    raise UploadInvalid([FieldError("", "cannot tell the format; pass ?format=...")])


def parse(body: object, fmt: str | None = None) -> ParsedUpload:
    """Parse ``body`` as ``fmt`` (one of :data:`FORMATS`), or as the detected format when ``fmt`` is empty."""
    if not fmt:
        fmt = detect_format(body)
    parser = FORMATS.get(fmt) if isinstance(fmt, str) else None
    if parser is None:
        raise UploadInvalid(
            [FieldError("format", f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")]
        )
    return parser(body)
