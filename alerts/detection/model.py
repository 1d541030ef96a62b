"""Value types of the detection engine: input points, configuration, results and events.

Everything here is plain data (frozen dataclasses) so that the worker, the CLI and the tests can build and
compare them without any framework.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

KINDS = ("time", "memory", "size", "rate", "count", "score", "other")
#: Kinds whose values are positive amounts that change multiplicatively: analysed on the log scale.
LOG_KINDS = frozenset({"time", "memory", "size"})
#: Kinds measured by repeated runs inside a build (samples) with a shared per-build runner effect.
SAMPLED_KINDS = frozenset({"time", "memory"})

#: Default minimum relative change per kind (a policy floor on top of the statistical test).
DEFAULT_MIN_CHANGE = {"time": 0.01, "memory": 0.01, "size": 0.005, "rate": 0.10, "count": 0.01, "score": 0.01,
                      "other": 0.01}
#: Default absolute floor per (kind, unit): a change at least this large (metric unit) is reported even below
#: the relative min_change (a 100 kB step of a 150 MB installer is 0.07%, which owners still want to see).
DEFAULT_ABS_FLOOR = {("size", "bytes"): 100_000.0}

Direction = Literal["regression", "improvement"]
Shape = Literal["shift", "drift"]
EventType = Literal["raised", "refined", "confirmed", "withdrawn", "merged"]


@dataclass(frozen=True, slots=True)
class Point:
    """One build's measurement of one series.

    ``value`` is the per-build value (the median of ``samples`` for time/memory, ``count/total`` for rates).
    ``samples`` are the repeated runs of the build, ``count``/``total`` the events and trials of a rate.
    Invalid input raises :class:`ValueError` at construction.
    """

    value: float
    samples: np.ndarray | tuple | None = None
    count: int | None = None
    total: int | None = None

    def __post_init__(self) -> None:
        v = self.value
        if not isinstance(v, (int, float, np.floating, np.integer)) or isinstance(v, bool):
            raise ValueError(f"Point.value must be a number, got {v!r}")
        if not math.isfinite(v):
            raise ValueError(f"Point.value must be finite, got {v!r}")
        s = self.samples
        if s is not None:
            if len(s) == 0:
                raise ValueError("Point.samples is empty: omit it (None) or give at least one run")
            if isinstance(s, np.ndarray):
                if s.dtype.kind == "f" and s.dtype.itemsize > 8:  # wider than float64: finite as read (float64)
                    with np.errstate(over="ignore"):
                        s = s.astype(np.float64)
                ok = bool(np.isfinite(s).all())
            else:
                ok = math.isfinite(sum(s)) or all(math.isfinite(float(x)) for x in s)  # sum: fast path
            if not ok:
                raise ValueError("Point.samples contains NaN or infinite values")
        c, t = self.count, self.total
        if c is not None or t is not None:
            if c is None or t is None:
                raise ValueError("Point.count and Point.total must be given together")
            if c < 0 or t < 0:
                raise ValueError(f"Point.count and Point.total must be non-negative, got {c}/{t}")
            if c > t:
                raise ValueError(f"Point.count ({c}) exceeds Point.total ({t})")


@dataclass(frozen=True, slots=True)
class DetectorConfig:
    """Tuning of one series' detector; per-metric overrides replace fields (``with_overrides``).

    target_false_alarms_per_1000_builds
        Expected false alarms per 1000 builds of one series under the noise model. With 150 metrics per
        build the default 0.1 means about one false alarm every 67 builds of the whole app. It sets the
        per-build significance level ``alpha = target / 1000`` of the scan (see ``statistics.thresholds``).
    min_change
        Minimum relative change to alert on (``None``: the kind's default in ``DEFAULT_MIN_CHANGE``).
    abs_threshold
        Minimum absolute change (in the metric's unit) to alert on; ``None``: no absolute minimum.
    abs_floor
        An absolute change (metric unit) at or above this is reported even when below the relative
        ``min_change`` (significance still applies); ``None``: none. Defaults per kind and unit:
        :func:`default_abs_floor`.
    sensitivity
        Multiplier on the test's evidence: 2.0 halves the critical z value, 0.5 doubles it.
    window
        Builds of history the decision looks at (the worker must pass at least this many to ``resume``).
    max_after
        Longest post-change segment scanned for a new change (bounds the candidate culprits). An open alert
        whose post-change segment reaches it unconfirmed is withdrawn, so a new alert is raised only while
        it can still be confirmed before that (``evaluate.confirmable``: about ``2/3 * max_after`` builds).
    min_before
        Builds of stable history needed before a candidate change (``min_after`` for a change part of the way
        back from the one before it, or further the same way: ``evaluate.early_change``).
    min_after
        Builds at the new level needed before a noisy kind (everything but ``size``) alerts.
    confirm_after
        Builds at the new level after which an alert still supported by the data is confirmed.
    refine_radius
        How far (in builds) a culprit may move while its alert is unconfirmed.
    """

    target_false_alarms_per_1000_builds: float = 0.1
    min_change: float | None = None
    abs_threshold: float | None = None
    abs_floor: float | None = None
    sensitivity: float = 1.0
    window: int = 96
    max_after: int = 88
    min_before: int = 8
    min_after: int = 3
    confirm_after: int = 8
    refine_radius: int = 6

    def __post_init__(self) -> None:
        if not (self.target_false_alarms_per_1000_builds > 0):
            raise ValueError("target_false_alarms_per_1000_builds must be > 0")
        if self.sensitivity <= 0 or not math.isfinite(self.sensitivity):
            raise ValueError("sensitivity must be a positive finite number")
        if self.min_change is not None and not (0 <= self.min_change < 10):
            raise ValueError("min_change is a relative change, e.g. 0.02 for 2%")
        if self.abs_threshold is not None and self.abs_threshold < 0:
            raise ValueError("abs_threshold must be >= 0")
        if self.abs_floor is not None and not (self.abs_floor >= 0 and math.isfinite(self.abs_floor)):
            raise ValueError("abs_floor must be a finite number >= 0")
        if self.min_after < 1 or self.min_before < 2 or self.confirm_after < self.min_after:
            raise ValueError("need min_after >= 1, min_before >= 2 and confirm_after >= min_after")
        if self.window < self.min_before + self.max_after or self.max_after < self.confirm_after:
            raise ValueError("need window >= min_before + max_after and max_after >= confirm_after")

    @property
    def alpha(self) -> float:
        """Per-build, per-series false-alarm probability the thresholds are calibrated to."""
        return min(0.5, self.target_false_alarms_per_1000_builds / 1000.0)

    def min_change_for(self, kind: str) -> float:
        return self.min_change if self.min_change is not None else DEFAULT_MIN_CHANGE.get(kind, 0.0)

    def with_overrides(self, **overrides: object) -> DetectorConfig:
        """A copy with the given fields replaced; ``None`` values are ignored (unset overrides)."""
        return dataclasses.replace(self, **{k: v for k, v in overrides.items() if v is not None})


DEFAULT = DetectorConfig()


def default_abs_floor(kind: str, unit: str | None) -> float | None:
    """The absolute floor of a metric without an override: 100 kB for sizes in bytes, else none."""
    u = (unit or "").strip().lower()
    return DEFAULT_ABS_FLOOR.get((kind, "bytes" if u in ("b", "byte", "bytes") else u))


@dataclass(slots=True)
class ChangePoint:
    """A sustained shift: the culprit build and what changed.

    ``index`` is the first build measured at the new level; ``first_index..last_index`` the plausible
    culprits. ``before``/``after`` are the levels (in the metric's unit) with 95% confidence intervals,
    ``rel_change = after / before - 1``. ``p_value`` is that of ``test`` (already corrected for the
    scan over candidate culprits). ``detected_at`` is the build whose arrival raised the alert.
    """

    index: int
    first_index: int
    last_index: int
    direction: Direction
    rel_change: float
    abs_change: float
    before: float
    after: float
    before_ci: tuple[float, float]
    after_ci: tuple[float, float]
    p_value: float
    test: str
    detected_at: int
    withdrawn: bool = False
    confirmed: bool = False
    z: float = 0.0
    sensitivity: float | None = field(default=None)
    #: "shift": a step at ``index``; "drift": a gradual change over ``window_builds`` builds at
    #: ``slope_per_build`` (metric unit per build), ``before``/``after`` the levels at its two ends and
    #: ``first_index..last_index`` spanning its steps. ``index`` is its first step in hindsight, its latest
    #: step online (where the detector goes on reviewing it; the window ends there).
    shape: Shape = "shift"
    slope_per_build: float | None = None
    window_builds: int | None = None
    #: Online: ``index`` of the drift this change point became part of (it is then ``withdrawn`` too, as the
    #: worker's stored alert is); re-pointed when that drift is itself extended.
    merged_into: int | None = None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened to a change point on the arrival of build ``at``."""

    type: EventType
    change_point: ChangePoint
    at: int


def as_points(values: Sequence[Point | float]) -> list[Point]:
    """Accept plain numbers for convenience (tests, ad-hoc use)."""
    return [p if isinstance(p, Point) else Point(float(p)) for p in values]


def many_points(fields: Sequence[tuple[float, np.ndarray | None, int | None, int | None]]) -> list[Point]:
    """``[Point(*f) for f in fields]``: the same points, checked as ``Point`` checks them, for many builds at once.

    Resuming the detectors of a 150-metric build reads ~20,000 stored points; checked one by one (a numpy
    call for every build's runs) they cost more than the detectors' step. Here the runs of all builds are
    checked in one numpy call and the values and rate counts in a plain loop. Anything the fast check does
    not vouch for (an invalid field, a value that is not a Python float, runs that are not a float array)
    sends the whole list through ``Point`` one by one, so an error is exactly the one ``Point`` raises for the
    first bad build.
    """
    if not _plainly_valid(fields):
        return [Point(*f) for f in fields]
    new, put = object.__new__, object.__setattr__  # Point is frozen: its own __init__ sets fields this way
    out = []
    for v, s, c, t in fields:
        p = new(Point)
        put(p, "value", v)
        put(p, "samples", s)
        put(p, "count", c)
        put(p, "total", t)
        out.append(p)
    return out


def _plainly_valid(fields: Sequence[tuple[float, np.ndarray | None, int | None, int | None]]) -> bool:
    runs = []
    for v, s, c, t in fields:
        if type(v) is not float or not math.isfinite(v):
            return False
        if s is not None:
            if type(s) is not np.ndarray or s.dtype.kind != "f" or s.dtype.itemsize > 8 or s.ndim != 1 or not len(s):
                return False
            runs.append(s)
        if (c is not None or t is not None) and (
                type(c) is not int or type(t) is not int or not 0 <= c <= t):
            return False
    return not runs or bool(np.isfinite(np.concatenate(runs)).all())
