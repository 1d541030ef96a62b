"""Online detection: one build at a time, bounded work per build, resumable from a stored window.

State of an :class:`OnlineDetector` is exactly:

* the last ``config.window`` points (raw values, counts, totals) and the absolute index of the newest one;
* ``segment_start``: the culprit of the last *confirmed* change point (the current level starts there);
* the open (raised, not yet confirmed or withdrawn) change point, if any, and the segment start before it.

Every decision is a pure function of that state (``evaluate.scan_new`` / ``evaluate.review_open`` on the
window), so a stateless worker that reloads the last ``window`` points and the change points whose culprit
lies inside that window, and calls :meth:`OnlineDetector.resume`, takes the same decisions as a detector
that streamed the whole history (tested in ``tests/detection``). Cost per build: O(window) numpy work,
independent of the history length.

Per build, with an open alert: re-test it at culprits within ``refine_radius`` (refine), confirm it once
``confirm_after`` builds hold the new level and the test still passes, withdraw it when its one-sided
evidence drops below z = 1.645. Without an open alert: scan the current segment for a new shift
(``size``: the newest step; other kinds: culprits leaving at least ``min_after`` builds after them).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterable, Sequence

from .evaluate import Series, build_series, point_fields, review_open, scan_new, to_change_point
from .model import DEFAULT, ChangePoint, DetectorConfig, Event, Point
from .sensitivity import NoiseSummary, sensitivity_from_noise


class OnlineDetector:
    """Streaming detector of one series. ``step(point)`` returns the events raised by that build."""

    def __init__(self, kind: str, lower_is_better: bool = True, config: DetectorConfig = DEFAULT) -> None:
        self.kind = kind
        self.lower_is_better = lower_is_better
        self.config = config
        w = config.window
        self._vals: deque[float] = deque(maxlen=w)
        self._cnts: deque[float] = deque(maxlen=w)
        self._tots: deque[float] = deque(maxlen=w)
        self.index = -1
        self.segment_start = 0
        self.open: ChangePoint | None = None
        self._open_prev_start = 0
        self.history: list[ChangePoint] = []

    # -- resuming -------------------------------------------------------------------------------------------
    @classmethod
    def resume(cls, points: Sequence[Point], change_points: Iterable[ChangePoint] = (), *, start_index: int,
               kind: str, lower_is_better: bool = True, config: DetectorConfig = DEFAULT) -> OnlineDetector:
        """A detector as it was after the build ``start_index + len(points) - 1``.

        ``points`` are consecutive builds starting at absolute index ``start_index`` (pass at least
        ``config.window`` of them, or the whole history if shorter). ``change_points`` are the stored
        alerts of the series (confirmed and open; withdrawn ones are ignored): the latest confirmed one sets
        the segment start, an open one (neither confirmed nor withdrawn) is reviewed on the next ``step``.
        """
        det = cls(kind, lower_is_better, config)
        for p in points[-config.window:]:
            v, c, t = point_fields(p)
            det._vals.append(v)
            det._cnts.append(c)
            det._tots.append(t)
        det.index = start_index + len(points) - 1
        live = sorted((cp for cp in change_points if not cp.withdrawn), key=lambda cp: cp.index)
        confirmed = [cp for cp in live if cp.confirmed]
        opened = [cp for cp in live if not cp.confirmed]
        det.segment_start = confirmed[-1].index if confirmed else 0
        if opened:
            det.open = dataclasses.replace(opened[-1])
            det._open_prev_start = det.segment_start
        return det

    # -- streaming ------------------------------------------------------------------------------------------
    def _series(self) -> Series:
        rate = self.kind == "rate"
        return build_series(self._vals, self._cnts if rate else None, self._tots if rate else None,
                            self.index - len(self._vals) + 1, self.kind)

    def step(self, point: Point) -> list[Event]:
        """Feed the next build; returns the events it caused (possibly none)."""
        v, c, t = point_fields(point)
        self._vals.append(v)
        self._cnts.append(c)
        self._tots.append(t)
        self.index += 1
        s = self._series()
        if self.open is not None:
            return self._review(s)
        cand = scan_new(s, self.segment_start, self.kind, self.config)
        if cand is None:
            return []
        cp = to_change_point(cand, s, self.lower_is_better, self.index)
        cp.sensitivity = sensitivity_from_noise(NoiseSummary.of(cand.noise, s), self.kind, self.config)
        self.open = cp
        self._open_prev_start = self.segment_start
        self.segment_start = cp.index
        self.history.append(cp)
        return [Event("raised", dataclasses.replace(cp), self.index)]

    def _review(self, s: Series) -> list[Event]:
        cp = self.open
        assert cp is not None
        verdict, cand = review_open(s, self._open_prev_start, cp, self.kind, self.config)
        if verdict == "withdraw":
            cp.withdrawn = True
            self.open = None
            self.segment_start = self._open_prev_start
            return [Event("withdrawn", dataclasses.replace(cp), self.index)]
        if cand is None:
            return []
        new = to_change_point(cand, s, self.lower_is_better, cp.detected_at)
        changed = new.index != cp.index or new.direction != cp.direction
        _update(cp, new)
        self.segment_start = cp.index
        if verdict == "confirm":
            cp.confirmed = True
            self.open = None
            return [Event("confirmed", dataclasses.replace(cp), self.index)]
        return [Event("refined", dataclasses.replace(cp), self.index)] if changed else []

    def run(self, points: Iterable[Point]) -> list[Event]:
        events: list[Event] = []
        for p in points:
            events.extend(self.step(p))
        return events


def _update(cp: ChangePoint, new: ChangePoint) -> None:
    """Refine ``cp`` in place with the estimates of ``new`` (keeps identity, detected_at and flags)."""
    for f in ("index", "first_index", "last_index", "direction", "rel_change", "abs_change", "before", "after",
              "before_ci", "after_ci", "p_value", "test", "z"):
        setattr(cp, f, getattr(new, f))


def detect_online(points: Sequence[Point], *, kind: str, lower_is_better: bool = True,
                  config: DetectorConfig = DEFAULT) -> list[ChangePoint]:
    """Every change point ever alerted while feeding ``points`` one by one (withdrawn ones included)."""
    det = OnlineDetector(kind, lower_is_better, config)
    for p in points:
        det.step(p)
    return [dataclasses.replace(cp) for cp in det.history]
