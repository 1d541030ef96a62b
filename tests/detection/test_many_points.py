"""model.many_points: the points of many stored builds, checked at once, exactly as Point checks them one by one."""

from __future__ import annotations

import numpy as np
import pytest

from alerts.detection.model import Point, many_points


def _fields(n: int = 40) -> list[tuple]:
    rng = np.random.default_rng(3)
    out: list[tuple] = []
    for i in range(n):
        if i % 3 == 0:
            out.append((float(rng.normal(100, 2)), rng.normal(100, 2, size=5 + i % 7), None, None))
        elif i % 3 == 1:
            out.append((0.01 * i, None, i, 100 * i))
        else:
            out.append((float(i), None, None, None))
    return out


def test_it_builds_the_points_point_builds():
    fields = _fields()
    got = many_points(fields)
    want = [Point(*f) for f in fields]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert type(g) is Point
        assert (g.value, g.count, g.total) == (w.value, w.count, w.total)
        assert g.samples is w.samples  # the caller's arrays, not copies
    assert many_points([]) == []


def test_its_points_are_frozen():
    (p,) = many_points([(1.0, None, None, None)])
    with pytest.raises(AttributeError):
        p.value = 2.0  # type: ignore[misc]


def test_numbers_it_cannot_vouch_for_go_through_point():
    # numpy scalars, ints and object arrays are checked by Point itself: the same points, or Point's error
    fields = [(np.float64(1.5), None, None, None), (3, np.array([1.0, 2.0]), None, None)]
    got = many_points(fields)
    assert [p.value for p in got] == [1.5, 3]
    with pytest.raises(ValueError, match="must be a number"):
        many_points([(1.0, None, None, None), (True, None, None, None)])


@pytest.mark.parametrize("bad, message", [
    ((float("nan"), None, None, None), "Point.value must be finite"),
    ((float("inf"), None, None, None), "Point.value must be finite"),
    ((1.0, np.array([]), None, None), "Point.samples is empty"),
    ((1.0, np.array([1.0, np.nan]), None, None), "Point.samples contains NaN"),
    ((1.0, np.array([1.0, -np.inf]), None, None), "Point.samples contains NaN"),
    ((0.5, None, 5, None), "must be given together"),
    ((0.5, None, -1, 10), "must be non-negative"),
    ((0.5, None, 11, 10), r"Point.count \(11\) exceeds Point.total \(10\)"),
])
def test_a_bad_build_raises_points_own_error(bad, message):
    fields = _fields(9)
    fields.insert(4, bad)
    with pytest.raises(ValueError, match=message) as many:
        many_points(fields)
    with pytest.raises(ValueError) as one:
        Point(*bad)
    assert str(many.value) == str(one.value)
