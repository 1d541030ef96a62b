"""Hindsight detection: the whole history is known.

The online pass proposes change points (it already knows where the evidence first sufficed, which is kept
as ``detected_at``); hindsight then drops withdrawn alerts and re-examines each surviving change point with
all the data on both sides (from the previous to the next change point, up to ``config.window`` builds each
side): the culprit is relocated within ``refine_radius`` builds, the levels and p-value re-estimated, and a
change point that no longer passes the same test and gates is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

from .evaluate import build_series, point_fields, review_open, to_change_point
from .model import DEFAULT, ChangePoint, DetectorConfig, Point
from .online import OnlineDetector


def detect_hindsight(points: Sequence[Point], *, kind: str, lower_is_better: bool = True,
                     config: DetectorConfig = DEFAULT) -> list[ChangePoint]:
    """Change points of a complete history (no withdrawn ones), culprits located with data on both sides."""
    pts = list(points)
    det = OnlineDetector(kind, lower_is_better, config)
    det.run(pts)
    cps = [cp for cp in det.history if not cp.withdrawn]
    if not cps:
        return []
    fields = [point_fields(p, kind) for p in pts]
    out: list[ChangePoint] = []
    for i, cp in enumerate(cps):
        prev = out[-1].index if out else 0
        nxt = cps[i + 1].index if i + 1 < len(cps) else len(pts)
        lo = max(prev, cp.index - config.window)
        hi = min(nxt, cp.index + config.window)
        if cp.index - lo < 1 or hi - cp.index < 1:
            out.append(cp)
            continue
        window = fields[lo:hi]
        vals = [f[0] for f in window]
        cnts = [f[1] for f in window] if kind == "rate" else None
        tots = [f[2] for f in window] if kind == "rate" else None
        s = build_series(vals, cnts, tots, lo, kind, [f[3] for f in window])
        verdict, cand = review_open(s, lo, cp, kind, _relaxed(config), hi_excl=hi)
        if verdict == "withdraw":
            continue
        if cand is None:
            out.append(cp)
            continue
        new = to_change_point(cand, s, lower_is_better, cp.detected_at)
        new.confirmed = True
        new.sensitivity = cp.sensitivity
        out.append(new)
    return out


def _relaxed(config: DetectorConfig) -> DetectorConfig:
    """Hindsight sees the whole post-change segment: any length confirms."""
    return config.with_overrides(confirm_after=config.min_after, max_after=max(config.max_after,
                                                                                 config.min_after))
