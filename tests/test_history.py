"""metrics.history.recent_points: the one-query read of many series' recent points."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from metrics.history import recent_points
from metrics.models import Build, Series
from tests.factories import BASE_TIME, native_body

pytestmark = pytest.mark.django_db


def test_it_returns_the_last_n_points_of_each_series_in_at_most_two_queries(upload):
    for b in range(1, 13):
        upload(native_body(b))
    ids = list(Series.objects.values_list("pk", flat=True))
    with CaptureQueriesContext(connection) as q:
        got = recent_points(ids, limit=5)
    assert len(q.captured_queries) <= 2
    assert set(got) == set(ids)
    for points in got.values():
        assert [p.build_ext_id for p in points] == ["8", "9", "10", "11", "12"]


def test_it_cuts_at_a_time_before_or_until(upload):
    for b in range(1, 6):
        upload(native_body(b))
    sid = Series.objects.get(metric__name="size.apk.download").pk
    at3 = Build.objects.get(ext_id="3").timestamp
    assert [p.build_ext_id for p in recent_points([sid], limit=10, before=at3)[sid]] == ["1", "2"]
    assert [p.build_ext_id for p in recent_points([sid], limit=10, until=at3)[sid]] == ["1", "2", "3"]
    assert recent_points([sid], limit=10, before=BASE_TIME - timedelta(days=1)) == {}


def test_it_unpacks_samples_exactly(upload):
    body = native_body(1)
    body["metrics"][0]["samples"] = [0.1, 1e-300, 1.7976931348623157e308, -0.0]
    upload(body)
    sid = Series.objects.get(metric__name="startup.cold.ttid").pk
    (p,) = recent_points([sid], limit=1)[sid]
    assert p.samples == [0.1, 1e-300, 1.7976931348623157e308, -0.0]
    runs = p.sample_array()
    assert runs.dtype == np.float64 and runs.tolist() == p.samples
    assert np.signbit(runs[3])  # -0.0 kept, bit for bit
    (bare,) = recent_points([sid], limit=1, with_samples=False)[sid]
    assert bare.samples is None and bare.sample_array() is None


def test_it_reads_the_same_recent_values_as_columns(upload):
    from metrics.history import recent_values

    for b in range(1, 13):
        upload(native_body(b))
    ids = list(Series.objects.values_list("pk", flat=True))
    with CaptureQueriesContext(connection) as q:
        cols = recent_values(ids, limit=5)
    assert len(q.captured_queries) <= 2
    points = recent_points(ids, limit=5, with_samples=False)
    for sid in ids:
        assert cols[sid].build_ids.tolist() == [p.build_id for p in points[sid]]
        assert cols[sid].values.tolist() == [p.value for p in points[sid]]
        if points[sid][0].total is not None:
            assert cols[sid].counts.tolist() == [p.count for p in points[sid]]
            assert cols[sid].totals.tolist() == [p.total for p in points[sid]]
        else:
            assert cols[sid].counts is None
