"""Units a metric's values are converted between rather than refused: the time units.

A metric's unit is fixed by its first upload (`metrics.ingest`); an upload in another unit of the same
quantity (Google Benchmark's ``time_unit`` is the benchmark author's choice and can change between runs) is
stored in the metric's unit, scaled. Units of different quantities, or ones whose scale is ambiguous (kB as
1000 or 1024 bytes), are still refused.
"""

from __future__ import annotations

_TIME_IN_NS = {"ns": 1.0, "us": 1e3, "\u00b5s": 1e3, "\u03bcs": 1e3, "ms": 1e6, "s": 1e9}


def conversion(from_unit: str, to_unit: str) -> float | None:
    """The factor that turns a value in ``from_unit`` into ``to_unit`` (1 when equal), or None when the two
    are not both time units."""
    if from_unit == to_unit:
        return 1.0
    a, b = _TIME_IN_NS.get(from_unit), _TIME_IN_NS.get(to_unit)
    return a / b if a is not None and b is not None else None
