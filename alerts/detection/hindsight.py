"""Hindsight detection: the whole history is known.

The online pass proposes change points (it already knows where the evidence first sufficed, which is kept
as ``detected_at``). Hindsight re-examines every proposal, withdrawn ones included, with all the data on both
sides (from the previous kept change point to the next proposal, up to ``config.window`` builds each side):
the culprit is relocated within ``refine_radius`` builds and the levels and p-value re-estimated. A proposal
is kept when it passes the same test and gates on that data, or when the online pass confirmed it; duplicate
proposals of one shift (withdrawn, then raised again; or a small step the online pass withdrew when its culprit
moved onto a larger one right after it) are merged, the kept change point carrying the detection of the
proposal that had seen its culprit (``_detected_at``); a withdrawn proposal whose window the next kept one cut
short is left withdrawn when the builds after that show its backout (``_backed_out_before``); and a train of
same-direction shifts is reported as one drift (``drift.collapse_drift``; not for ``size``, as online), left
out when it runs from the start of the history (``_trend_from_start``). The online pass proposes plain shifts
(``drift=False``): hindsight groups them itself, with the whole history.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from .drift import collapse_drift
from .evaluate import (
    BACKOUT_WITHIN,
    Candidate,
    Series,
    backout_at,
    build_series,
    point_fields,
    review_open,
    to_change_point,
)
from .model import DEFAULT, ChangePoint, DetectorConfig, Point
from .online import OnlineDetector


def detect_hindsight(points: Sequence[Point], *, kind: str, lower_is_better: bool = True,
                     config: DetectorConfig = DEFAULT) -> list[ChangePoint]:
    """Change points of a complete history (no withdrawn ones), culprits located with data on both sides."""
    pts = list(points)
    det = OnlineDetector(kind, lower_is_better, config, drift=False)
    det.run(pts)
    proposals = sorted(det.history, key=lambda cp: (cp.index, cp.detected_at))
    if not proposals:
        return []
    fields = [point_fields(p, kind) for p in pts]
    relaxed = _relaxed(config)
    out: list[ChangePoint] = []
    last: ChangePoint | None = None  # the proposal behind out[-1]
    for i, cp in enumerate(proposals):
        if out and last is not None and _same_shift(last, cp, config):
            continue  # the same shift proposed twice (withdrawn, then raised again)
        prev = out[-1].index if out else 0
        # the review window ends at the next kept proposal: beyond refine_radius, or nearer when both were kept
        # online (two shifts, e.g. a revert and a step right after it). A withdrawn proposal's window reaches
        # past a near one, so an excursion the online pass withdrew keeps the evidence of its return.
        nxt = next((p.index for p in proposals[i + 1:] if _kept(p) and (
            p.index > cp.index + config.refine_radius or (p.index > cp.index and _kept(cp)))), len(pts))
        lo = max(prev, cp.index - config.window)
        hi = min(nxt, cp.index + config.window)
        verdict, cand, s = "keep", None, None
        if cp.index - lo >= 2 and hi - cp.index >= 1:
            s = _window(fields, lo, hi, kind)
            verdict, cand = review_open(s, lo, cp, kind, relaxed, hi_excl=hi)
        if verdict == "confirm" and cand is not None and s is not None and not _kept(cp) and _backed_out_before(
                cand, s, proposals[i + 1:], fields, lo, hi, kind, relaxed):
            continue  # an excursion whose backout the window cut off: withdrawn, as online
        if verdict == "confirm" and cand is not None and s is not None:
            new = to_change_point(cand, s, lower_is_better, _detected_at(cp, cand.index, proposals[i + 1:], config))
            new.confirmed = True
            new.sensitivity = cp.sensitivity
            out.append(new)
            last = cp
        elif cp.confirmed:
            kept = dataclasses.replace(cp)
            out.append(kept)
            last = cp
    if kind == "size":
        return out  # each size step has a culprit owners want, as online (``OnlineDetector.drift``)
    return [c for c in collapse_drift(out, max_gap=_drift_gap(config)) if not _trend_from_start(c, config)]


def _window(fields: list, lo: int, hi: int, kind: str) -> Series:
    """The builds ``lo..hi-1`` as a ``Series`` (``point_fields`` of each)."""
    window = fields[lo:hi]
    return build_series([f[0] for f in window], [f[1] for f in window] if kind == "rate" else None,
                        [f[2] for f in window] if kind == "rate" else None, lo, kind, [f[3] for f in window])


def _backed_out_before(cand: Candidate, s: Series, later: Sequence[ChangePoint], fields: list, lo: int, hi: int,
                       kind: str, config: DetectorConfig) -> bool:
    """Whether the change a withdrawn proposal's review confirmed (``cand``, in the window ``s`` of builds
    ``lo..hi-1``) was backed out before the next kept proposal, which ended that window at ``hi`` within
    ``_return_reach`` builds of it.

    Such a window holds the excursion and the first builds back, but not what the backout rules need after
    them: ``min_after`` builds back, or the builds of a step after the return (``evaluate._return_before_step``).
    The review then confirmed the excursion as a change of its own beside the next one, with no revert between
    them, and levels that do not chain (+20% from 110, then +10% from 117 "from 185", the old level); planted
    into real series (+-20% for 5 builds, 2 back, then +-10% either way) 52-76 times in 138. The window that
    reaches on to the kept proposal after the next one has those builds; a backout found there
    (``evaluate.backout_at``) leaves the proposal withdrawn, as the online pass left it, which had them."""
    if hi > cand.index + _return_reach(config) or not any(_kept(p) and p.index == hi for p in later):
        return False
    hi2 = min(next((p.index for p in later if _kept(p) and p.index > hi), len(fields)), cand.index + config.window)
    longer = _window(fields, lo, hi2, kind)
    if (longer.mode, longer.log) != (s.mode, s.log):
        return False  # the review's levels are on another scale (a value <= 0 after hi, a size window now jittery)
    return backout_at(longer, lo, cand.index, config, cand.test) is not None


def _return_reach(config: DetectorConfig) -> int:
    """Builds after a culprit within which the next change can cut off what the backout rules read: the builds
    whose side of the levels' midpoint they judge (``evaluate._before_side``), then ``min_after`` of a step."""
    return BACKOUT_WITHIN + max(BACKOUT_WITHIN, config.min_after) + config.min_after


def _detected_at(cp: ChangePoint, index: int, later: Sequence[ChangePoint], config: DetectorConfig) -> int:
    """When the online pass had the evidence for a change at ``index``: ``cp``'s detection, unless the review
    moved the culprit past the build ``cp`` was raised on (a withdrawn small step relocated onto a larger one
    right after it); then that of the later proposal of the same shift, raised once its builds had arrived, or
    with none, the culprit's own build."""
    if index <= cp.detected_at:
        return cp.detected_at
    return next((p.detected_at for p in later if _same_shift(cp, p, config) and p.detected_at >= index),
                max(cp.detected_at, index))


def _kept(cp: ChangePoint) -> bool:
    return cp.confirmed or not cp.withdrawn


def _same_shift(a: ChangePoint, b: ChangePoint, config: DetectorConfig) -> bool:
    """Two proposals of one shift: same direction, culprits within ``refine_radius``, and one of them
    withdrawn online (a shift withdrawn, then raised again, or withdrawn when a larger one came). Two proposals
    the online pass both kept are two shifts however close: a change backed out a few builds after it landed
    leaves a revert, and a real step right after that revert, in the same direction, is a change of its own
    with its own culprit."""
    return (a.direction == b.direction and abs(a.index - b.index) <= config.refine_radius
            and not (_kept(a) and _kept(b)))


def _trend_from_start(cp: ChangePoint, config: DetectorConfig) -> bool:
    """A drift whose first step is as early as a change can be found (``min_before`` builds of history,
    plus the ``refine_radius`` its culprit may move): the series was already moving when its history begins,
    so there is no level it left and no change point in the history, only its trend (economic series that
    grow from their first observation, a counter that climbs from the first build). The online path still
    alerts on it: a metric that creeps from its first build is worth a look."""
    return cp.shape == "drift" and cp.index <= config.min_before + config.refine_radius


def _drift_gap(config: DetectorConfig) -> int:
    """Shifts closer than this (builds) can be one drift: about twice the post-change evidence a shift needs."""
    return 2 * config.confirm_after + config.min_before


def _relaxed(config: DetectorConfig) -> DetectorConfig:
    """Hindsight sees the whole post-change segment: any length confirms."""
    return config.with_overrides(confirm_after=config.min_after, max_after=max(config.max_after,
                                                                                 config.min_after))
