"""Values of many series around anchor times, in one query: the data behind dashboard sparklines.

A sparkline shows a series around a culprit build: `before` points up to and including the anchor
and `after` points following it. The team dashboard draws one per alert of every group it shows,
so the read must not grow in queries with the number of groups: PostgreSQL walks the
(series, build_time, build) index twice per anchor inside one LATERAL query; other databases
(the SQLite demo) read the anchors' series once and cut the windows in Python.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import connection

from metrics.history import recent_values
from metrics.models import Measurement

Anchor = tuple[int, datetime]  # (series id, build time of the culprit)


@dataclass(frozen=True)
class Spark:
    """A compact window: values oldest first and the index of the anchor build (or -1)."""

    values: list[float | None]
    mark: int

    def as_json(self) -> dict:
        return {"v": self.values, "c": self.mark}


def _compact(v: float | None) -> float | None:
    if v is None or not math.isfinite(v):
        return None
    return float(f"{v:.4g}") if v else 0.0


def around(anchors: Iterable[Anchor], *, before: int = 40, after: int = 20) -> dict[Anchor, Spark]:
    """Windows of `before` points up to the anchor (inclusive) and `after` points following it."""
    anchors = list(dict.fromkeys(anchors))
    if not anchors:
        return {}
    if connection.vendor == "postgresql":
        rows = _lateral(anchors, before, after)
    else:
        rows = _scan(anchors, before, after)
    out = {}
    for key in anchors:
        pts = rows.get(key, [])
        pts.sort()
        mark = max((i for i, (t, _, _) in enumerate(pts) if t <= key[1]), default=-1)
        out[key] = Spark([_compact(v) for _, _, v in pts], mark)
    return out


def _lateral(anchors: list[Anchor], before: int, after: int) -> dict[Anchor, list]:
    m = Measurement._meta.db_table
    sql = f"""
        SELECT a.i, x.build_time, x.build_id, x.value
        FROM unnest(%s::bigint[], %s::timestamptz[]) WITH ORDINALITY AS a(sid, t, i)
        CROSS JOIN LATERAL (
            (SELECT build_time, build_id, value FROM {m}
              WHERE series_id = a.sid AND build_time <= a.t ORDER BY build_time DESC, build_id DESC LIMIT %s)
            UNION ALL
            (SELECT build_time, build_id, value FROM {m}
              WHERE series_id = a.sid AND build_time > a.t ORDER BY build_time, build_id LIMIT %s)
        ) x
    """
    out: dict[Anchor, list] = defaultdict(list)
    with connection.cursor() as cur:
        cur.execute(sql, [[s for s, _ in anchors], [t for _, t in anchors], before, after])
        for i, t, b, v in cur.fetchall():
            out[anchors[i - 1]].append((t, b, v))
    return out


def _scan(anchors: list[Anchor], before: int, after: int) -> dict[Anchor, list]:
    by_series: dict[int, list[datetime]] = defaultdict(list)
    for sid, t in anchors:
        by_series[sid].append(t)
    rows: dict[int, list] = defaultdict(list)
    for sid, t, b, v in (Measurement.objects.filter(series_id__in=list(by_series))
                         .order_by("series_id", "build_time", "build_id")
                         .values_list("series_id", "build_time", "build_id", "value")):
        rows[sid].append((t, b, v))
    out: dict[Anchor, list] = {}
    for sid, t in anchors:
        pts = rows.get(sid, [])
        cut = sum(1 for p in pts if p[0] <= t)
        out[(sid, t)] = pts[max(0, cut - before):cut + after]
    return out


def latest(series_ids: Iterable[int], *, limit: int = 60) -> dict[int, list[float | None]]:
    """The last `limit` values of each series, oldest first, compacted for JSON."""
    return {sid: [_compact(float(v)) for v in cols.values]
            for sid, cols in recent_values(list(series_ids), limit=limit).items()}
