"""Distribution view: a histogram of each build's runs over common value bins."""

from __future__ import annotations

import numpy as np

from tests.web.conftest import N_BUILDS, login
from tests.web.test_series_page import embedded


def test_it_bins_every_run_of_every_build(client, world):
    login(client, world.outsider)
    s = world.series["startup.cold.ttid"]
    r = client.get(f"/series/{s.pk}/distribution/?bins=20")
    assert r.status_code == 200
    d = embedded(r.content.decode(), "dist-data")
    assert d["bins"] == 20 and len(d["b"]) == N_BUILDS
    counts = np.array(d["counts"]).reshape(N_BUILDS, 20)
    assert counts.sum(axis=1).tolist() == d["n"] == [15] * N_BUILDS
    # After the planted +20% shift the runs sit in higher bins.
    centre = (counts * np.arange(20)).sum(axis=1) / 15
    assert centre[30:].mean() > centre[:30].mean() + 3
    assert len(r.context["flaky"]) == 5
    assert '<canvas id="heat"' in r.content.decode()


def test_it_shows_single_value_series_as_one_cell_per_build(client, world):
    login(client, world.outsider)
    r = client.get(f"/series/{world.series['size.apk.download'].pk}/distribution/")
    d = embedded(r.content.decode(), "dist-data")
    assert d["n"] == [1] * N_BUILDS
    assert r.context["has_runs"] is False and "one value per build" in r.content.decode()
