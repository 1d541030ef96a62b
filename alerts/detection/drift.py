"""Slow drift: a train of same-direction level shifts read as one gradual change.

A series that creeps (a leak growing build after build, a trend in sensor or economic data) passes the
step test again and again as the level keeps moving, so the scan reports a shift every few builds. Owners
want one finding: the series drifts by ``slope_per_build`` over ``window_builds`` builds. ``collapse_drift``
merges runs of at least ``min_steps`` consecutive shifts in one direction, each starting within ``max_gap``
builds of the previous one, into one ``shape="drift"`` change point; isolated shifts are left as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from .model import ChangePoint

#: Fewer steps than this are separate changes (a change and a follow-up are common; three in a row is a trend).
MIN_STEPS = 3


def collapse_drift(cps: Sequence[ChangePoint], *, max_gap: int, min_steps: int = MIN_STEPS) -> list[ChangePoint]:
    """``cps`` (sorted by index) with every qualifying run of shifts replaced by one drift change point."""
    out: list[ChangePoint] = []
    run: list[ChangePoint] = []
    for cp in cps:
        if run and (cp.direction != run[-1].direction or cp.index - run[-1].index > max_gap
                    or cp.shape != "shift"):
            out.extend(_close(run, min_steps))
            run = []
        run.append(cp)
    out.extend(_close(run, min_steps))
    return out


def _close(run: list[ChangePoint], min_steps: int) -> list[ChangePoint]:
    if len(run) < min_steps:
        return list(run)
    first, last = run[0], run[-1]
    window = last.index - first.index + 1
    abs_change = last.after - first.before
    rel = last.after / first.before - 1.0 if first.before != 0 else 0.0
    return [dataclasses.replace(
        first, shape="drift", before=first.before, after=last.after, before_ci=first.before_ci,
        after_ci=last.after_ci, abs_change=abs_change, rel_change=rel, window_builds=window,
        slope_per_build=abs_change / window, p_value=max(cp.p_value for cp in run), test="drift",
        confirmed=any(cp.confirmed for cp in run), withdrawn=all(cp.withdrawn for cp in run),
        z=max(cp.z for cp in run))]
