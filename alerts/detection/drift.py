"""Slow drift: a train of same-direction level shifts read as one gradual change.

A series that creeps (a leak growing build after build, a trend in sensor or economic data) passes the
step test again and again as the level keeps moving, so the scan reports a shift every few builds. Owners
want one finding: the series drifts by ``slope_per_build`` over ``window_builds`` builds. ``collapse_drift``
merges runs of at least ``min_steps`` consecutive shifts in one direction, each starting within ``max_gap``
builds of the previous one, into one ``shape="drift"`` change point; isolated shifts are left as they are.

Online (``drift_run`` / ``as_online_drift``, used by ``OnlineDetector``), the detector cannot take back the
alerts it already raised, so the third step of such a train is raised as a drift instead: at its own culprit
(the latest step, where the detector reviews it), with ``before`` the level where the train started,
``window_builds`` counted back from it, and the steps it continues merged into it once it is confirmed.
Later steps continue the drift the same way, so a series shows one live drift however long it creeps.
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


def drift_run(confirmed: Sequence[ChangePoint], cp: ChangePoint, *, max_gap: int,
              min_steps: int = MIN_STEPS) -> list[ChangePoint]:
    """The confirmed change points (oldest first) that the new shift ``cp`` continues as a drift; ``[]``
    when it is a change of its own.

    ``confirmed`` are the series' live confirmed change points before ``cp``, oldest first. Walking back
    from ``cp``, each member is in ``cp``'s direction and within ``max_gap`` builds of the next one; a drift
    ends the walk (it already holds the steps before it). A run of plain shifts needs ``min_steps - 1``
    members (``cp`` is the last step); a drift needs only itself.
    """
    run: list[ChangePoint] = []
    nxt = cp.index
    for prev in reversed(confirmed):
        if prev.direction != cp.direction or not (0 < nxt - prev.index <= max_gap):
            break
        run.append(prev)
        if prev.shape == "drift":
            break
        nxt = prev.index
    run.reverse()
    if run and run[0].shape == "drift":
        return run
    return run if len(run) + 1 >= min_steps else []


def drift_start(cp: ChangePoint) -> int:
    """First build of a change: its culprit for a shift, the first step's culprit for an online drift."""
    if cp.shape == "drift" and cp.window_builds:
        return cp.index - cp.window_builds + 1
    return cp.index


def as_online_drift(cp: ChangePoint, run: Sequence[ChangePoint]) -> None:
    """Turn the newest step ``cp`` (in place) into the drift from ``run[0]``'s start to ``cp``'s culprit.

    ``before``/``before_ci`` are the level where the run started, ``after`` the new level; ``window_builds``
    counts from the run's first culprit to ``cp.index``, and ``first_index`` is that culprit
    (``cp.index - window_builds + 1``); the test and p-value stay those of ``cp``'s own step.

    ``first_index`` is not the first step's own ``first_index`` (its plausible range may start a build or three
    sooner): a drift longer than the builds the worker loads keeps its stored culprit and ``window_builds``, but its
    first step's range is gone with those builds, and the resumed detector placed the drift's start otherwise than
    the streaming one (17 of 120 simulated creeping series).
    """
    head = run[0]
    start = drift_start(head)
    window = cp.index - start + 1
    cp.shape = "drift"
    cp.first_index = start
    cp.before, cp.before_ci = head.before, head.before_ci
    cp.abs_change = cp.after - head.before
    cp.rel_change = cp.after / head.before - 1.0 if head.before != 0 else 0.0
    cp.window_builds = window
    cp.slope_per_build = cp.abs_change / window


def _close(run: list[ChangePoint], min_steps: int) -> list[ChangePoint]:
    if len(run) < min_steps:
        return list(run)
    first, last = run[0], run[-1]
    window = last.index - first.index + 1
    abs_change = last.after - first.before
    rel = last.after / first.before - 1.0 if first.before != 0 else 0.0
    return [dataclasses.replace(
        first, shape="drift", last_index=max(first.last_index, last.last_index), before=first.before,
        after=last.after, before_ci=first.before_ci, after_ci=last.after_ci, abs_change=abs_change,
        rel_change=rel, window_builds=window, slope_per_build=abs_change / window,
        p_value=max(cp.p_value for cp in run), test="drift", confirmed=any(cp.confirmed for cp in run),
        withdrawn=all(cp.withdrawn for cp in run), z=max(cp.z for cp in run))]
