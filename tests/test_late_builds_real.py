"""Builds arriving late around the alerts of real series: the worker stores every alert streaming reports, exactly.

Each series of ``bench/data/real`` is uploaded through the API as its own metric (kind, direction, unit) with some
builds held back to the end (in a shuffled order): the builds within three of each build streaming raises an alert
on (one per alert, drawn), and five more anywhere. Then every alert ``detect_online`` reports streaming the whole
series must be stored as it reports it (culprit, direction, state, size, p-value, detection build); the worker may
keep more rows only withdrawn (alerts raised on the history that lacked the late builds, which someone may have
been notified of).

By default four series and one seed run. The whole corpus (every in-repo series with an online alert and at most
400 pushes, 70 series, about 12 minutes a seed on two cores):

    LATE_SERIES=all LATE_SEEDS=1,2,3 DATABASE_URL=... REDIS_URL=... .venv/bin/python -m pytest -q \\
        tests/test_late_builds_real.py -p no:cacheprovider
"""

from __future__ import annotations

import os
import random

import pytest

from tests.real_series import SOURCES, real_series, series_of
from tests.test_analysis_real import _stored_and_streamed, upload_values

pytestmark = pytest.mark.django_db(transaction=True)

DEFAULT_SERIES = ["mozilla7/autoland2/4520175", "mozilla8/mozilla-beta/4975361", "mongodb/mongodb/robust_series",
                  "otava/otava/tigerbeetle"]
MAX_PUSHES = 400


def _cases() -> list[str]:
    if os.environ.get("LATE_SERIES") != "all":
        return DEFAULT_SERIES
    from perfplatform.detect_cmd import detect_series

    return [f"{source}/{rec['id']}" for source in SOURCES for rec in series_of(source)
            if len(rec["points"]) <= MAX_PUSHES and detect_series(rec, online=True)["change_points"]]


SEEDS = [int(s) for s in os.environ.get("LATE_SEEDS", "4").split(",")]


@pytest.mark.parametrize("key", _cases())
@pytest.mark.parametrize("seed", SEEDS)
def test_it_stores_every_streamed_alert_of_a_real_series_whose_builds_arrive_late(upload, key, seed):
    from alerts.detection import detect_online
    from metrics.models import Series
    from perfplatform.detect_cmd import series_input

    source, sid = key.split("/", 1)
    rec = real_series(source, sid)
    points, kind, lower, config = series_input(rec)
    streamed = detect_online(points, kind=kind, lower_is_better=lower, config=config)
    rng = random.Random(seed)
    held = {cp.detected_at + rng.randint(-3, 3) for cp in streamed} | set(rng.sample(range(len(points)), 5))
    late = [i for i in sorted(held) if 0 <= i < len(points)]
    rng.shuffle(late)
    # as the record's own metric (a score higher is better, a counter of unit "" or "count"): the worker and
    # _stored_and_streamed read the stored metric's kind, direction and unit
    upload_values(upload, [p.value for p in points], [i for i in range(len(points)) if i not in late] + late,
                  kind=kind, unit=rec.get("unit") or "", lower_is_better=lower)
    got, want = _stored_and_streamed(Series.objects.get(), len(points))
    assert [w for w in want if w not in got] == []
    assert [g for g in got if g not in want and g[2] != "withdrawn"] == []
