"""Series page: compact arrays for uPlot, the spread band, alerts by series from the API."""

from __future__ import annotations

import json
import re

import numpy as np

from metrics.models import Measurement
from tests.web.conftest import N_BUILDS, login


def embedded(html: str, element_id: str) -> dict:
    m = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html, re.S)
    assert m, element_id
    return json.loads(m.group(1))


def test_it_sends_compact_arrays_with_the_sample_spread(client, world):
    login(client, world.outsider)
    s = world.series["startup.cold.ttid"]
    r = client.get(f"/series/{s.pk}/")
    assert r.status_code == 200
    html = r.content.decode()
    data = embedded(html, "series-data")
    assert set(data) == {"x", "v", "lo", "hi", "b", "c"}
    assert len(data["v"]) == N_BUILDS and data["b"][0] == "b0" and data["b"][-1] == f"b{N_BUILDS - 1}"
    samples = Measurement.objects.get(series=s, build=world.builds[0]).sample_list()
    assert data["lo"][0] == float(f"{np.percentile(samples, 10):.6g}")
    assert data["hi"][0] == float(f"{np.percentile(samples, 90):.6g}")
    assert data["x"] == sorted(data["x"])
    assert "uPlot.iife.min.js" in html and f"/api/v1/alerts?series={s.pk}" in html
    assert 'role="img"' in html and 'data-zoom="50"' in html


def test_it_uses_a_binomial_interval_for_rates_and_no_band_for_sizes(client, world):
    login(client, world.outsider)
    rate = embedded(client.get(f"/series/{world.series['crash.rate'].pk}/").content.decode(), "series-data")
    assert all(lo <= v <= hi for lo, v, hi in zip(rate["lo"], rate["v"], rate["hi"], strict=True))
    size = embedded(client.get(f"/series/{world.series['size.apk.download'].pk}/").content.decode(), "series-data")
    assert set(size["lo"]) == {None}


def test_it_limits_the_points_on_request(client, world):
    login(client, world.outsider)
    data = embedded(client.get(f"/series/{world.series['startup.cold.ttid'].pk}/?n=10").content.decode(), "series-data")
    assert data["b"] == [f"b{i}" for i in range(N_BUILDS - 10, N_BUILDS)]


def test_it_filters_the_alerts_api_by_series(client, world):
    login(client, world.outsider)
    s = world.series["startup.cold.ttid"]
    r = client.get(f"/api/v1/alerts?series={s.pk}")
    assert {a["id"] for a in r.json()["results"]} == {world.alerts["startup"].pk, world.alerts["older"].pk}
    r = client.get(f"/api/v1/alerts?series={world.series['size.apk.download'].pk}")
    assert [a["id"] for a in r.json()["results"]] == [world.alerts["size"].pk]


def test_it_answers_404_for_an_unknown_series(client, world):
    login(client, world.outsider)
    assert client.get("/series/999999/").status_code == 404
