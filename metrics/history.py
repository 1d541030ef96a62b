"""Recent history of many series in one query: the read behind detection and graphs."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter
from typing import NamedTuple

import numpy as np
from django.db import connection
from django.db.models import F, Q, Window
from django.db.models.functions import RowNumber

from metrics.models import Build, Measurement, samples_array, unpack_samples


class HistoryPoint(NamedTuple):
    """One series' measurement on one build, as history reads return it.

    A named tuple, and the runs kept packed until asked for: analysing one build reads ~20,000 of these,
    and a frozen dataclass per point plus unpacking every point's runs into a list cost more than the
    query itself.
    """

    series_id: int
    build_id: int
    build_ext_id: str
    commit: str
    build_time: datetime
    value: float
    packed_samples: bytes | None  # as stored: little-endian float64 (`Measurement.samples`)
    count: int | None
    total: int | None

    @property
    def samples(self) -> list[float] | None:
        return unpack_samples(self.packed_samples)

    def sample_array(self) -> np.ndarray | None:
        """The runs as a read-only float64 array over the stored bytes (no copy); None without runs."""
        return samples_array(self.packed_samples)


def recent_points(
    series_ids: list[int],
    *,
    limit: int,
    before: datetime | None = None,
    until: datetime | None = None,
    with_samples: bool = True,
    before_build: int | None = None,
) -> dict[int, list[HistoryPoint]]:
    """The last `limit` points of each series, oldest first, ordered by (build time, build pk).

    `before` keeps points strictly earlier than a time, `until` points at or before it; with `before_build`
    (a build pk), `before` is a position instead: points earlier than (`before`, `before_build`) in that order,
    so that pages cut inside a run of builds with one time lose none of them. PostgreSQL
    walks the (series, build_time, build) index once per series with a LATERAL join and reads the
    builds in a second query; other databases use a ROW_NUMBER() window. Two queries at most, for
    any number of series.
    """
    if not series_ids:
        return {}
    if connection.vendor == "postgresql":
        rows = _lateral(series_ids, limit, before, until, with_samples, before_build)
    else:
        rows = _window(series_ids, limit, before, until, with_samples, before_build)
    out: dict[int, list[HistoryPoint]] = defaultdict(list)
    for r in rows:
        out[r.series_id].append(r)
    for points in out.values():
        points.sort(key=attrgetter("build_time", "build_id"))
    return dict(out)


def _lateral(ids, limit, before, until, with_samples, before_build=None) -> list[HistoryPoint]:
    m, b = Measurement._meta.db_table, Build._meta.db_table
    cond, params = "", []
    if before is not None and before_build is not None:
        cond += " AND (x.build_time < %s OR (x.build_time = %s AND x.build_id < %s))"
        params.extend([before, before, before_build])
    elif before is not None:
        cond += " AND x.build_time < %s"
        params.append(before)
    if until is not None:
        cond += " AND x.build_time <= %s"
        params.append(until)
    samples = "x.samples" if with_samples else "NULL"
    sql = f"""
        SELECT x.series_id, x.build_id, x.value, x.samples, x.count, x.total
        FROM unnest(%s::bigint[]) AS s(id)
        CROSS JOIN LATERAL (
            SELECT x.series_id, x.build_id, x.value, {samples} AS samples, x.count, x.total
            FROM {m} x WHERE x.series_id = s.id {cond}
            ORDER BY x.build_time DESC, x.build_id DESC LIMIT %s
        ) x
    """
    with connection.cursor() as cur:
        cur.execute(sql, [list(ids), *params, limit])
        rows = cur.fetchall()
        # The builds in a second query: joining them inside every LATERAL loop re-reads them per series.
        # Their timestamps stand for the rows' build_time (ingest keeps the two equal): decoding a few
        # hundred timestamps instead of one per row is most of this function's Python time.
        cur.execute(f"SELECT id, ext_id, commit, timestamp FROM {b} WHERE id = ANY(%s)", [list({r[1] for r in rows})])
        builds = {r[0]: (r[1], r[2], r[3]) for r in cur.fetchall()}
    return [HistoryPoint(r[0], r[1], *builds[r[1]], r[2], r[3], r[4], r[5]) for r in rows]


def _window(ids, limit, before, until, with_samples, before_build=None) -> list[HistoryPoint]:
    qs = Measurement.objects.filter(series_id__in=ids)
    if before is not None and before_build is not None:
        qs = qs.filter(Q(build_time__lt=before) | Q(build_time=before, build_id__lt=before_build))
    elif before is not None:
        qs = qs.filter(build_time__lt=before)
    if until is not None:
        qs = qs.filter(build_time__lte=until)
    qs = qs.annotate(
        rn=Window(RowNumber(), partition_by=[F("series_id")], order_by=[F("build_time").desc(), F("build_id").desc()])
    ).filter(rn__lte=limit)
    fields = ["series_id", "build_id", "build__ext_id", "build__commit", "build_time", "value", "count", "total"]
    if with_samples:
        fields.append("samples")
    return [
        HistoryPoint(
            r["series_id"], r["build_id"], r["build__ext_id"], r["build__commit"], r["build_time"], r["value"],
            bytes(r["samples"]) if with_samples and r["samples"] is not None else None,
            r["count"], r["total"],
        )
        for r in qs.values(*fields)
    ]


@dataclass(frozen=True)
class SeriesValues:
    """The recent points of one series as columns, oldest first (no samples, no build names)."""

    build_ids: np.ndarray  # int64
    values: np.ndarray  # float64
    counts: np.ndarray | None  # float64 (NaN where absent), only for series with count/total
    totals: np.ndarray | None


def recent_values(series_ids: list[int], *, limit: int) -> dict[int, SeriesValues]:
    """The last `limit` values of each series as numpy columns, in one query.

    For readers that need many series but neither samples nor build names (dashboard health, heat
    grids): PostgreSQL aggregates each series' window into arrays inside the LATERAL subquery, so 150
    series come back as 150 rows instead of 30,000, and no per-point Python object is built.
    """
    if not series_ids:
        return {}
    if connection.vendor != "postgresql":
        return {
            sid: _columns([p.build_id for p in pts], [p.value for p in pts], [p.count for p in pts],
                          [p.total for p in pts])
            for sid, pts in recent_points(series_ids, limit=limit, with_samples=False).items()
        }
    m = Measurement._meta.db_table
    # The aggregates read the subquery in its index order (newest first), as PostgreSQL documents for
    # a sorted subquery feeding an aggregate; re-sorting inside array_agg would cost a sort per series.
    sql = f"""
        SELECT s.id, x.b, x.v, x.c, x.t
        FROM unnest(%s::bigint[]) AS s(id)
        CROSS JOIN LATERAL (
            SELECT array_agg(r.build_id) AS b, array_agg(r.value) AS v,
                   array_agg(r.count) AS c, array_agg(r.total) AS t
            FROM (SELECT build_id, value, count, total FROM {m}
                  WHERE series_id = s.id ORDER BY build_time DESC, build_id DESC LIMIT %s) r
        ) x
        WHERE x.b IS NOT NULL
    """
    with connection.cursor() as cur:
        cur.execute(sql, [list(series_ids), limit])
        return {row[0]: _columns(row[1][::-1], row[2][::-1], row[3][::-1], row[4][::-1]) for row in cur.fetchall()}


def _columns(build_ids, values, counts, totals) -> SeriesValues:
    has_rates = any(t is not None for t in totals)
    return SeriesValues(
        build_ids=np.asarray(build_ids, dtype=np.int64),
        values=np.asarray(values, dtype=float),
        counts=np.asarray([np.nan if c is None else c for c in counts], dtype=float) if has_rates else None,
        totals=np.asarray([np.nan if t is None else t for t in totals], dtype=float) if has_rates else None,
    )
