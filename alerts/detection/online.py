"""Online detection: one build at a time, bounded work per build, resumable from a stored window.

State of an :class:`OnlineDetector` is exactly:

* the last ``config.window + NOISE_EVERY`` points (raw values, counts, totals) and the absolute index of
  the newest one (the noise estimate is refreshed every ``NOISE_EVERY`` builds from the ``window`` builds
  ending at that block boundary, or from the current segment's builds in them where those are much quieter,
  ``evaluate.segment_noise``, while the newest builds are not louder than they, ``_noise_returned``, so it too
  is a function of the stored points and the segment start);
* ``segment_start``: the culprit of the last *confirmed* change point (the current level starts there);
* the open (raised, not yet confirmed or withdrawn) change point, if any, and the segment start before it;
* the live confirmed change points whose culprit lies in the window (a new shift may continue them as a
  drift, ``drift.drift_run``).

Every decision is a pure function of that state (``evaluate.scan_new`` / ``evaluate.review_open`` on the
window), so a stateless worker that reloads the last ``window + NOISE_EVERY`` points and the change points whose culprit
lies inside that window, and calls :meth:`OnlineDetector.resume`, takes the same decisions as a detector
that streamed the whole history (tested in ``tests/detection``). Cost per build: O(window) numpy work,
independent of the history length.

Per build, with an open alert: re-test it at culprits within ``refine_radius`` (``refined`` whenever its culprit or
any estimate it shows changes), confirm it once
``confirm_after`` builds hold the new level and the test still passes, withdraw it when its one-sided
evidence drops below z = 1.645 (or it was an excursion, or it is unconfirmed after ``max_after`` builds, or a
later change back the other way leaves it unconfirmable on the builds before that change: ``review_open``).
A refine onto a build later than the one the alert was raised on withdraws it instead, and the same build is
scanned for that later change. Without an open alert: scan the current segment for a new shift (``size``:
the newest step; other kinds: culprits leaving at least ``min_after`` builds after them, with ``min_before`` of
the segment before them, or fewer for a change part of the way back from the one that opened the segment (a
reland after its revert) or further the same way (``evaluate.early_change``); one the same way that continues a
train of shifts or a drift is raised as the drift's next step at once, as any new shift is. An open drift's review
does not end its builds at such a change (an open shift's does).

Slow drift (every kind but ``size``, whose steps each have a culprit owners want): a new shift that
continues a train of confirmed same-direction shifts (``drift.MIN_STEPS`` with it, each within
``2 * confirm_after + min_before`` builds of the previous one) or a confirmed drift is raised as a drift
(``drift.as_online_drift``); once it is confirmed, the change points it continues are ``merged`` into it.
"""

from __future__ import annotations

import dataclasses
import math
from bisect import insort
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter

from .drift import as_online_drift, drift_run
from .evaluate import (
    Series,
    build_series,
    bulk_point_fields,
    point_fields,
    review_open,
    scan_new,
    segment_noise,
    series_noise,
    to_change_point,
    young_segment,
)
from .model import DEFAULT, SAMPLED_KINDS, ChangePoint, DetectorConfig, Event, Point
from .sensitivity import NoiseSummary, sensitivity_from_noise
from .statistics import (
    RATE_OFFSET,
    Noise,
    critical_z,
    fast_median,
    list_median,
    median_var_factor,
    noise_contrast,
)

#: The noise estimate is refreshed every this many builds (from the window ending at that build).
NOISE_EVERY = 16
#: The full scan over all candidate culprits runs every this many builds; in between, the quick screen
#: (post-culprit segments of up to QUICK_M builds against the block's reference level) decides whether to.
SCAN_EVERY = 8
QUICK_M = 8
QUICK_FRACTION = 0.5
#: A quiet segment's own noise is set aside once the newest ``NOISE_RETURN_BUILDS`` builds' differences (the largest
#: left out) have a mean square this many times a difference's under it (``OnlineDetector._noise_returned``): the 1%
#: point of a chi-square of their 14 degrees of freedom, over 14. Sixteen builds rather than eight: with eight, a
#: third of the builds 1.5% slower after a 0.4% segment raised twice the false alarms, and a step arriving with the
#: returning noise was missed more often (measured, docs/DETECTION.md, twentieth session).
NOISE_RETURN_RATIO = 2.08
NOISE_RETURN_BUILDS = 16


class OnlineDetector:
    """Streaming detector of one series. ``step(point)`` returns the events raised by that build."""

    def __init__(self, kind: str, lower_is_better: bool = True, config: DetectorConfig = DEFAULT, *,
                 drift: bool = True) -> None:
        self.kind = kind
        #: hindsight proposes plain shifts and groups drifts itself, over the whole history
        self.drift = drift and kind != "size"
        self.lower_is_better = lower_is_better
        self.config = config
        self._keep = config.window + NOISE_EVERY
        self._vals: list[float] = []
        self._cnts: list[float] = []
        self._tots: list[float] = []
        self._logs: list[float] = []  # log values of the last QUICK_M builds: all the quick screen reads
        self._wvs: list[float] = []
        # how many kept builds have runs (a within-build variance, not NaN): without any, windows are built without
        # the runs' column, which would be all NaN (the same Series, less work on every build)
        self._runs = 0
        self._noise_at = -1
        self._noise: Noise | None = None  # the window's, at block boundary _noise_at
        self._noise_scale: tuple[str, bool] = ("", False)  # (mode, log) of the window _noise was estimated on
        self._noise_src: Series | None = None  # the window it was estimated on (None: the stored one at _noise_at)
        self._noise_src_runs = False  # whether kept builds had runs when _noise_src was built (its runs' column)
        self._seg_noise_key: tuple[int, int] | None = None  # (block boundary, segment start) of _seg_noise
        self._seg_noise: Noise | None = None  # what the scan and the review use: segment_noise of _noise
        self._block: _Block | None = None
        self.index = -1
        self.segment_start = 0
        self.open: ChangePoint | None = None
        self._open_prev_start = 0
        self._confirmed: list[ChangePoint] = []
        self.history: list[ChangePoint] = []

    # -- resuming -------------------------------------------------------------------------------------------
    @classmethod
    def resume(cls, points: Sequence[Point], change_points: Iterable[ChangePoint] = (), *, start_index: int,
               kind: str, lower_is_better: bool = True, config: DetectorConfig = DEFAULT) -> OnlineDetector:
        """A detector as it was after the build ``start_index + len(points) - 1``.

        ``points`` are consecutive builds starting at absolute index ``start_index`` (pass at least
        ``config.window + NOISE_EVERY`` of them, or the whole history if shorter). ``change_points`` are the stored
        alerts of the series (confirmed and open; withdrawn ones are ignored): the latest confirmed one sets
        the segment start, an open one (neither confirmed nor withdrawn) is reviewed on the next ``step``.
        """
        det = cls(kind, lower_is_better, config)
        fields = bulk_point_fields(points[-det._keep:], kind)
        if fields:
            det._vals, det._cnts, det._tots, det._wvs = (list(col) for col in zip(*fields, strict=True))
            det._runs = len(det._wvs) - sum(map(math.isnan, det._wvs))  # a generator costs 1.6x this per resume
            # inline, the rule of _append: a function call per stored build costs ~0.4 ms per 150-metric build
            det._logs = [math.log(v) if v > 0 else math.nan for v in det._vals[-QUICK_M:]]
        det.index = start_index + len(points) - 1
        live = sorted((cp for cp in change_points if not cp.withdrawn), key=lambda cp: cp.index)
        confirmed = [cp for cp in live if cp.confirmed]
        opened = [cp for cp in live if not cp.confirmed]
        det.segment_start = confirmed[-1].index if confirmed else 0
        det._confirmed = [dataclasses.replace(cp) for cp in confirmed]
        if opened:
            det.open = dataclasses.replace(opened[-1])
            det._open_prev_start = det.segment_start
        return det

    # -- streaming ------------------------------------------------------------------------------------------
    def _bounds(self, end: int) -> tuple[int, int, int]:
        """``(lo, hi, index0)``: the stored lists' slice of the last ``window`` builds up to absolute index ``end``
        (inclusive), and the absolute index of its first build."""
        first = self.index - len(self._vals) + 1
        hi = end - first + 1
        lo = max(0, hi - self.config.window)
        return lo, hi, first + lo

    def _series(self, end: int) -> Series:
        """The last ``window`` builds up to absolute index ``end`` (inclusive)."""
        lo, hi, index0 = self._bounds(end)
        rate = self.kind == "rate"
        return build_series(self._vals[lo:hi], self._cnts[lo:hi] if rate else None,
                            self._tots[lo:hi] if rate else None, index0, self.kind,
                            self._wvs[lo:hi] if self._runs else None)

    def _noise_for(self, s: Series) -> Noise:
        """Noise of the window ending at the last block boundary ``b`` (every ``NOISE_EVERY`` builds; every
        build during the first ``NOISE_EVERY``), or of the current segment's builds in it where they are much
        quieter (``evaluate.segment_noise``), or, where ``s`` is on another scale than that window (a
        non-positive value has entered it, or a size window's steps are no longer deterministic), of ``s`` itself:
        a pure function of the stored points and the segment start."""
        k = self.index
        b = k if k < NOISE_EVERY else k - k % NOISE_EVERY
        if b != self._noise_at or self._noise is None:
            if b == k:  # the window is s itself, built already: estimated from it (the block's next build caches it)
                noise, src = series_noise(s), s
            else:
                src, noise = _window(*self._window_key(b))
            self._noise, self._noise_scale, self._noise_src, self._noise_at = noise, (src.mode, src.log), src, b
            self._noise_src_runs = self._runs > 0
        if (s.mode, s.log) != self._noise_scale:
            # The block's noise is in other units (log differences for a linear window, or a size step's creep for a
            # level window): read from s on every such build, as a resumed detector does. Kept for the block, it
            # gave a timing a p-value of 1e-149 for an 8% step once a zero value entered the window (1e-8 resumed).
            return series_noise(s)
        # the segment the scan or the open alert's review reads: an open alert's own culprit is not a level change
        # yet (streaming moves segment_start onto it while reviewing it; a resumed detector does not)
        own = self._segment_noise(b, self._open_prev_start if self.open is not None else self.segment_start)
        if own is not self._noise and self._noise_returned(own, s.log):
            return self._noise
        return own

    def _noise_returned(self, own: Noise, log: bool) -> bool:
        """Whether the newest ``NOISE_RETURN_BUILDS`` builds are noisier than the quiet segment's own noise ``own``
        says: the mean square of their build-to-build differences (on the analysis scale), the largest left out,
        beyond ``NOISE_RETURN_RATIO`` times that of a difference under ``own`` (``2 sigma^2``). The largest may be a
        step, which the segment's noise is there to judge. The segment's estimate stops at the block boundary and
        trims its largest differences, so noise coming back after it was judged on the quiet noise: 2% noise, a -4%
        change, 40 builds at 0.4%, then 2% again raised a lasting false alarm in 13 of 60 series (1 on the window's
        noise alone). Where it has come back, the window's noise is used, as before the segment's was read. A pure
        function of the stored builds, as the worker resumes them."""
        ys = self._vals[-NOISE_RETURN_BUILDS:]
        if log:
            ys = [math.log(v) if v > 0 else math.nan for v in ys]
        d = sorted((ys[i] - ys[i - 1]) ** 2 for i in range(1, len(ys)))
        return len(d) >= 2 and not sum(d[:-1]) <= NOISE_RETURN_RATIO * 2.0 * own.sigma**2 * (len(d) - 1)

    def _segment_noise(self, b: int, seg: int) -> Noise:
        """``evaluate.segment_noise`` of the block's noise (``_noise``, at ``b``) for the segment from ``seg``, once
        per block and segment."""
        if self._seg_noise_key != (b, seg) or self._seg_noise is None:
            if self._noise_src is None:  # the block's noise came from the stored window at b (_cached_block)
                self._seg_noise = _cached_segment_noise(self._window_key(b), seg)
            else:
                assert self._noise is not None
                self._seg_noise = segment_noise(self._noise_src, self._noise, seg)
            self._seg_noise_key = (b, seg)
        return self._seg_noise

    def _window_key(self, end: int) -> tuple:
        """The stored fields of the window ending at absolute index ``end`` (``_series``'s), as ``_window``'s key."""
        lo, hi, index0 = self._bounds(end)
        rate = self.kind == "rate"
        return (tuple(self._vals[lo:hi]), tuple(self._cnts[lo:hi]) if rate else None,
                tuple(self._tots[lo:hi]) if rate else None,
                tuple(self._wvs[lo:hi]) if self.kind in SAMPLED_KINDS and self._runs else None, index0,
                self.kind)

    def _append(self, point: Point) -> None:
        v, c, t, w = point_fields(point, self.kind)
        self._wvs.append(w)
        if w == w:
            self._runs += 1
        self._vals.append(v)
        self._cnts.append(c)
        self._tots.append(t)
        self._logs.append(math.log(v) if v > 0 else math.nan)
        if len(self._logs) > QUICK_M:
            del self._logs[0]
        if len(self._vals) > self._keep:
            if self._wvs[0] == self._wvs[0]:
                self._runs -= 1
            del self._vals[0], self._cnts[0], self._tots[0], self._wvs[0]

    def _block_for(self) -> _Block | None:
        """Frozen per-block summary (noise, reference level of the segment) used by the quick screen."""
        k = self.index
        b = k - k % NOISE_EVERY
        blk = self._block
        if blk is not None and blk.at == b and blk.seg_start == self.segment_start:
            return blk
        if self._noise_at == b and self._noise is not None:
            # the block's noise is already known (a review or scan of this block estimated it): as it is, with the
            # window it was estimated on (the one ending at b) where that was built from the same inputs as the
            # window built now (whether kept builds have runs decides its runs' column, which the noiseless-block
            # rule reads)
            src = self._noise_src
            if src is None or self._noise_src_runs != (self._runs > 0):
                src = self._series(b)
            self._block = _block_summary(src, self.segment_start, b, self.config, self._noise,
                                         self._segment_noise(b, self.segment_start))
            return self._block
        self._block = _cached_block(self._window_key(b), self.segment_start, b, self.config)
        if self._block.noise is not None:
            self._noise, self._noise_scale, self._noise_src, self._noise_at = (
                self._block.noise, (self._block.mode, self._block.log), None, b)
        return self._block

    def _quiet(self) -> bool:
        """Quick screen (pure Python, O(1)): True when no short post-culprit segment (up to ``QUICK_M``
        builds) deviates from the block's reference level by half the evidence an alert needs (nor, in a young
        segment, from the segment's first builds: ``_young_moved``; in a noiseless block whose segment is one
        value: no build since the block boundary differs from it). Long segments are scanned every
        ``SCAN_EVERY`` builds regardless, and a new series' first builds only once a culprit is admissible."""
        if self.index < NOISE_EVERY:
            # No block yet. Before the series' first culprit is admissible the scan can find nothing: a level
            # test needs ``min_before`` builds before the culprit and ``min_after`` from it (a size step needs
            # only the previous build and is scanned from the start).
            return (self.segment_start == 0 and self.kind != "size"
                    and self.index + 1 < self.config.min_before + self.config.min_after)
        if self.index % SCAN_EVERY == 0:
            return False
        blk = self._block_for()
        if blk is None or blk.noise is None:
            # The segment was too short for a level scan at the block's boundary (a change was confirmed just
            # before it), so the block has no reference level. Quiet only while no culprit is admissible yet: the
            # segment grows during the block, and a change a few builds after the confirmed one (a reland after
            # its revert) was otherwise scanned only every SCAN_EVERY builds until the next block, whose noise
            # estimate then held it too. A size step needs only the previous build.
            if blk is None or self.kind == "size":
                return False
            return self.index - self.segment_start + 1 < self.config.min_before + self.config.min_after
        noise = blk.noise
        ys = self._logs if blk.log else self._vals
        if blk.mode == "rate":
            ca = ta = 0.0
            cs, ts = self._cnts, self._tots
            for m in range(1, QUICK_M + 1):
                ca += cs[-m]
                ta += ts[-m]
                if m < self.config.min_after:
                    continue
                d = math.log((ca + RATE_OFFSET) / max(ta, 1.0)) - blk.ref
                var = 1.0 / (ca + RATE_OFFSET) + 1.0 / (blk.cref + RATE_OFFSET) + noise.phi * (1 / m + 1 / blk.nb)
                if d * d >= QUICK_FRACTION**2 * blk.zc**2 * var:
                    return False
            return True
        if blk.mode == "step":
            d = ys[-1] - ys[-2]
            return d == d and abs(d) < blk.limits[0]
        if blk.flat and not self._runs:
            # The segment up to the block boundary is one value; while every build since has the boundary build's
            # value, the window's segment is one value too, every split of it a change of zero, which no scan
            # raises (``passes_gates``): quiet. The first build off it is scanned. Only while no kept build has
            # runs: the flaky model, which replaces values, works only on windows with them.
            vals = self._vals
            since = self.index - blk.at
            v = vals[-since - 1]
            return all(x == v for x in vals[-since:])
        if not blk.limits:
            return False
        last = ys[-QUICK_M:]
        ref = blk.ref
        m0 = self.config.min_after
        n = len(last)
        # the medians of the newest m builds, m = m0..QUICK_M, from one sorted list grown by the next older build
        # (insort) instead of a sort per m: the same values for a fraction of the work. With a NaN among them (a
        # non-positive value of a log block) the order of a sort is undefined: a sort per m, as list_median does.
        # A log block's values hold one NaN object, ``math.nan`` (``_logs``), which ``in`` finds by identity; a linear
        # block's are checked value by value (``Point`` keeps NaN out of them, but the screen must never sort one).
        has_nan = math.nan in last if blk.log else any(v != v for v in last)
        srt = None if has_nan else sorted(last[n - m0:])
        for m in range(m0, min(QUICK_M, n) + 1):
            if srt is None:
                med = list_median(last[-m:])
            else:
                if m > m0:
                    insort(srt, last[n - m])
                h = m // 2
                med = srt[h] if m % 2 else 0.5 * (srt[h - 1] + srt[h])
            if not (abs(med - ref) < blk.limits[m - m0]):
                return False
        return not self._young_moved(blk, ys)

    def _young_moved(self, blk: _Block, ys: list[float]) -> bool:
        """Whether, in a young segment (``evaluate.young_segment``), the newest ``min_after`` builds (of ``ys``, the
        screen's newest values on the block's scale) have moved from the segment's first ``min_after`` by the
        screen's first limit: a change part of the way back from the confirmed one, or further the same way
        (``evaluate.early_change``), which the block's reference, holding builds on both sides of it, may not see
        (two test relands were never raised)."""
        if self.segment_start <= 0 or not young_segment(self.segment_start, self.index, self.config):
            return False
        back = self.index - self.segment_start + 1  # the segment's first build, counted from the newest
        m0 = self.config.min_after
        if back > len(self._vals):  # a detector resumed on fewer builds than asked for
            return False
        first = self._vals[-back:len(self._vals) - back + m0]
        if blk.log:
            first = [math.log(v) if v > 0 else math.nan for v in first]
        return not (abs(list_median(ys[-m0:]) - list_median(first)) < blk.limits[0])

    def step(self, point: Point) -> list[Event]:
        """Feed the next build; returns the events it caused (possibly none)."""
        self._append(point)
        self.index += 1
        if self.open is None and self._quiet():
            return []
        s = self._series(self.index)
        noise = self._noise_for(s)
        if self.open is not None:
            return self._review(s, noise)
        return self._scan(s, noise)

    def _opened_from(self, s: Series) -> float | None:
        """The level (analysis scale of ``s``) before the confirmed change that opened the current segment, for
        ``scan_new``'s early change; None without one."""
        if not self._confirmed or self._confirmed[-1].index != self.segment_start or s.mode != "level":
            return None
        before = self._confirmed[-1].before
        if s.log:
            return math.log(before) if before > 0 else None
        return before

    def _scan(self, s: Series, noise: Noise) -> list[Event]:
        young = self.segment_start > 0 and young_segment(self.segment_start, self.index, self.config)
        cand = scan_new(s, self.segment_start, self.kind, self.config, noise, self._opened_from(s) if young else None)
        if cand is None:
            return []
        cp = to_change_point(cand, s, self.lower_is_better, self.index)
        cp.sensitivity = sensitivity_from_noise(NoiseSummary.of(cand.noise, s), self.kind, self.config)
        self._as_drift(cp)
        self.open = cp
        self._open_prev_start = self.segment_start
        self.segment_start = cp.index
        self.history.append(cp)
        return [Event("raised", dataclasses.replace(cp), self.index)]

    def _review(self, s: Series, noise: Noise) -> list[Event]:
        cp = self.open
        assert cp is not None
        # An open drift is not cut at a same-way change a few builds on: the scan raises that as its next step
        # anyway, and cut there its culprit moved back and it was re-raised sooner (19 accelerating trends: 233
        # alerts raised against 227).
        verdict, cand = review_open(s, self._open_prev_start, cp, self.kind, self.config, noise=noise,
                                    same_way=cp.shape != "drift")
        if verdict == "withdraw":
            return self._withdraw(cp)
        if cand is None:
            return []
        new = to_change_point(cand, s, self.lower_is_better, cp.detected_at)
        if new.index > cp.detected_at:
            # Refined onto a build that had not arrived when the alert was raised: a later change came within the
            # refine radius (an alert raised on build 65 for +3% at 61 became +20% at 71, reported six builds
            # before its culprit). What the alert was raised for is not what the builds now show: withdraw it and
            # scan anew, which raises the later change at its own culprit.
            return self._withdraw(cp) + self._scan(s, noise)
        shown = _shown(cp)
        _update(cp, new)
        run = self._as_drift(cp)
        self.segment_start = cp.index
        if verdict == "confirm":
            cp.confirmed = True
            self.open = None
            events = [Event("confirmed", dataclasses.replace(cp), self.index)]
            events += self._merge(cp, run)
            if s.mode == "step":  # a size step on the confirming build itself is scanned at once
                events += self._scan(s, noise)
            return events
        # Every change of what the alert shows is an event, not only a moved culprit: the worker stores the alert
        # only on events and resumes from what it stored, so an estimate refined in place alone was lost there (an
        # alert withdrawn later kept its raise-time size and p-value in the database, +5.6% where streaming had +3.9%).
        return [Event("refined", dataclasses.replace(cp), self.index)] if _shown(cp) != shown else []

    def _withdraw(self, cp: ChangePoint) -> list[Event]:
        cp.withdrawn = True
        self.open = None
        self.segment_start = self._open_prev_start
        return [Event("withdrawn", dataclasses.replace(cp), self.index)]

    def _drift_gap(self) -> int:
        return 2 * self.config.confirm_after + self.config.min_before

    def _as_drift(self, cp: ChangePoint) -> list[ChangePoint]:
        """Re-derive the shape of ``cp`` (raised or refined) from the confirmed change points it continues;
        returns those (``[]``: a shift of its own)."""
        if not self.drift:
            return []
        run = drift_run(self._confirmed, cp, max_gap=self._drift_gap())
        if run:
            as_online_drift(cp, run)
        else:
            cp.shape, cp.window_builds, cp.slope_per_build = "shift", None, None
        return run

    def _merge(self, cp: ChangePoint, run: list[ChangePoint]) -> list[Event]:
        """``cp`` was confirmed: the change points ``run`` its drift continues are merged into it.

        In ``history`` they become withdrawn and point at ``cp`` (as the worker's stored alerts do,
        ``lifecycle.merge_into``), and what was merged into them points at ``cp`` now."""
        gone = {id(m) for m in run}
        self._confirmed = [c for c in self._confirmed if id(c) not in gone
                           and c.index > self.index - self._keep] + [dataclasses.replace(cp)]
        merged = {(m.index, m.direction) for m in run}
        for h in self.history:
            if h is cp:
                continue
            if h.confirmed and not h.withdrawn and (h.index, h.direction) in merged:
                h.withdrawn, h.merged_into = True, cp.index
            elif h.merged_into is not None and (h.merged_into, h.direction) in merged:
                h.merged_into = cp.index
        return [Event("merged", dataclasses.replace(m), self.index) for m in run]

    def run(self, points: Iterable[Point]) -> list[Event]:
        events: list[Event] = []
        for p in points:
            events.extend(self.step(p))
        return events


@dataclass(frozen=True, slots=True)
class _Block:
    at: int
    seg_start: int
    noise: Noise | None
    ref: float
    nb: int
    zc: float
    cref: float
    tref: float
    mode: str
    log: bool
    limits: tuple[float, ...]
    flat: bool  # a noiseless level block whose segment is one value


def _quick_se(m: int, nb: int, noise: Noise, before: float) -> float:
    """``before``: ``median_var_factor(nb) / nb``, the same for every ``m`` of a block."""
    iid = 1.0 / m + 1.0 / nb
    v = (median_var_factor(m) / m + before) * noise_contrast(noise, m, nb) / iid
    return math.sqrt(v)


def _block_summary(s: Series, segment_start: int, b: int, config: DetectorConfig, noise: Noise,
                   screen: Noise) -> _Block:
    """The quick screen's summary of the window ``s`` ending at the block boundary ``b``, whose noise is ``noise``
    (kept as the block's); its limits are those of ``screen``, the noise the scan reads (``segment_noise``)."""
    seg_lo = max(segment_start, s.index0)
    j0 = seg_lo - s.index0
    nb = s.y.size - j0
    if nb < config.min_before:
        return _Block(b, segment_start, None, 0.0, 0, 0.0, 0.0, 0.0, "", False, (), False)
    zc = critical_z(config.alpha, 1, screen.df, config.sensitivity)
    seg = s.y[j0:]
    cref = tref = 0.0
    if s.mode == "rate":
        cref, tref = float(s.counts[j0:].sum()), float(s.totals[j0:].sum())
        ref = math.log((cref + RATE_OFFSET) / max(tref, 1.0))
    else:
        ref = fast_median(seg)
    limits: tuple[float, ...] = ()
    if s.mode == "step":
        limits = (QUICK_FRACTION * zc * noise.sigma,)
    elif s.mode == "level" and screen.sigma > 0:
        before = median_var_factor(nb) / nb
        limits = tuple(QUICK_FRACTION * zc * screen.sigma * _quick_se(m, nb, screen, before)
                       for m in range(config.min_after, QUICK_M + 1))
    # A noiseless block has no limits, so every build was scanned. Where its segment is one value (a counter that
    # holds still) it is quiet while the builds keep that value (``_quiet``). Only without runs: with them the
    # window's values are the flaky model's, not the stored ones.
    flat = s.mode == "level" and noise.sigma == 0 and s.within is None and bool(seg.min() == seg.max())
    return _Block(b, segment_start, noise, ref, nb, zc, cref, tref, s.mode, s.log, limits, flat)


#: Windows (and block summaries) kept per process. The worker resumes a detector per metric for every build (the
#: stateless resume), and each resumed detector estimated its block's noise again (the flaky-build model, the lag
#: scales, the quick screen's limits) on every build of the block: 40% of a 150-metric build's CPU. They are pure
#: functions of the block's window, so they are looked up by its stored fields (values equal as floats, 0.0 and
#: -0.0 alike): the same estimates, for ~3 kB a window (6 MB when full).
WINDOW_CACHE_SIZE = 2048


@lru_cache(maxsize=WINDOW_CACHE_SIZE)
def _window(vals: tuple[float, ...], cnts: tuple[float, ...] | None, tots: tuple[float, ...] | None,
            wvs: tuple[float, ...] | None, index0: int, kind: str) -> tuple[Series, Noise]:
    """The window of these stored fields (``build_series``) and its noise (``series_noise``). The Series is
    shared by every caller: read it, never change it."""
    s = build_series(vals, cnts, tots, index0, kind, wvs)
    return s, series_noise(s)


@lru_cache(maxsize=WINDOW_CACHE_SIZE)
def _cached_block(key: tuple, segment_start: int, b: int, config: DetectorConfig) -> _Block:
    """``_block_summary`` of the window with these stored fields (``_window``'s key) for this segment start."""
    s, noise = _window(*key)
    return _block_summary(s, segment_start, b, config, noise, _cached_segment_noise(key, segment_start))


@lru_cache(maxsize=WINDOW_CACHE_SIZE)
def _cached_segment_noise(key: tuple, seg_start: int) -> Noise:
    """``evaluate.segment_noise`` of the window with these stored fields (``_window``'s key) and its noise."""
    s, noise = _window(*key)
    return segment_noise(s, noise, seg_start)


#: The estimates a review refines in place (``_update``, with ``z``).
_ESTIMATES = ("index", "first_index", "last_index", "direction", "rel_change", "abs_change", "before", "after",
              "before_ci", "after_ci", "p_value", "test")
#: What an alert shows and the worker stores of a change point (``alerts.lifecycle``): the estimates but ``z``, and
#: the shape ``_as_drift`` derives from them.
_shown = attrgetter(*_ESTIMATES, "shape", "slope_per_build", "window_builds")


def _update(cp: ChangePoint, new: ChangePoint) -> None:
    """Refine ``cp`` in place with the estimates of ``new`` (keeps identity, detected_at and flags)."""
    for f in (*_ESTIMATES, "z"):
        setattr(cp, f, getattr(new, f))


def detect_online(points: Sequence[Point], *, kind: str, lower_is_better: bool = True,
                  config: DetectorConfig = DEFAULT) -> list[ChangePoint]:
    """Every change point ever alerted while feeding ``points`` one by one (withdrawn ones included)."""
    det = OnlineDetector(kind, lower_is_better, config)
    for p in points:
        det.step(p)
    return [dataclasses.replace(cp) for cp in det.history]
