"""Compare page: change and significance per metric kind, checked against scipy."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from metrics.models import Measurement
from metrics.web.compare import two_proportion_p
from tests.web.conftest import login


def rows(client, a="b10", b="b35", **extra):
    q = "&".join(f"{k}={v}" for k, v in {"a": a, "b": b, **extra}.items())
    r = client.get(f"/compare/?{q}")
    assert r.status_code == 200
    return {x["metric"].name: x for x in r.context["rows"]}, r


def m(world, name, build):
    return Measurement.objects.get(series=world.series[name], build__ext_id=build)


def test_it_uses_mann_whitney_for_times_and_matches_scipy(client, world):
    login(client, world.outsider)
    got, _ = rows(client)
    x, y = m(world, "startup.cold.ttid", "b10"), m(world, "startup.cold.ttid", "b35")
    expected = stats.mannwhitneyu(x.sample_list(), y.sample_list(), alternative="two-sided").pvalue
    row = got["startup.cold.ttid"]
    assert row["sig"].test == "Mann-Whitney U"
    assert row["sig"].p == pytest.approx(expected, rel=1e-12)
    assert row["sig"].significant and row["direction"] == "worse"
    assert row["rel"] == pytest.approx((y.value - x.value) / x.value)


def test_it_uses_welch_for_memory_and_matches_scipy(client, world):
    login(client, world.outsider)
    got, _ = rows(client)
    x, y = m(world, "memory.pss.steady", "b10"), m(world, "memory.pss.steady", "b35")
    expected = stats.ttest_ind(x.sample_list(), y.sample_list(), equal_var=False).pvalue
    assert got["memory.pss.steady"]["sig"].test == "Welch t-test"
    assert got["memory.pss.steady"]["sig"].p == pytest.approx(expected, rel=1e-12)


def test_it_uses_a_two_proportion_test_for_rates(client, world):
    login(client, world.outsider)
    got, _ = rows(client)
    x, y = m(world, "crash.rate", "b10"), m(world, "crash.rate", "b35")
    # Reference: the pooled z-test via scipy's chi-square on the 2x2 table without continuity correction.
    table = [[x.count, x.total - x.count], [y.count, y.total - y.count]]
    expected = stats.chi2_contingency(table, correction=False)[1]
    assert got["crash.rate"]["sig"].test == "two-proportion z-test"
    assert got["crash.rate"]["sig"].p == pytest.approx(expected, rel=1e-9)
    assert two_proportion_p(10, 1000, 10, 1000) == pytest.approx(1.0)


def test_it_compares_sizes_exactly_and_counts_with_a_poisson_test(client, world):
    login(client, world.outsider)
    got, _ = rows(client)
    size = got["size.apk.download"]
    assert size["sig"].test == "exact" and size["sig"].p is None and size["sig"].significant
    assert size["direction"] == "worse"
    same, _ = rows(client, a="b31", b="b35")
    assert same["size.apk.download"]["sig"].significant is False
    janky = got["frames.feed.janky"]
    x, y = m(world, "frames.feed.janky", "b10"), m(world, "frames.feed.janky", "b35")
    expected = stats.binomtest(int(y.value), int(x.value + y.value), 0.5).pvalue
    assert janky["sig"].p == pytest.approx(expected) and not math.isnan(janky["sig"].p)


def test_it_renders_a_sortable_filterable_table(client, world):
    login(client, world.outsider)
    _, r = rows(client, app="com.example.shop", platform="android")
    html = r.content.decode()
    assert 'class="sortable"' in html and 'data-sort="num"' in html and 'data-filter-table="compare-table"' in html
    assert 'data-sig="1"' in html and 'for="filter"' in html


def test_it_reports_unknown_builds(client, world):
    login(client, world.outsider)
    r = client.get("/compare/?a=b1&b=zzz")
    assert r.status_code == 200 and r.context["rows"] == []
    assert "no build &#x27;zzz&#x27;" in r.content.decode()
    r = client.get("/compare/")
    assert r.status_code == 200 and r.context["errors"] == []


def test_it_compares_two_ranges_by_pooling_runs_and_counts(client, world):
    login(client, world.outsider)
    got, r = rows(client, a="b20..b29", b="b30..b39")
    assert len(r.context["a_builds"]) == 10 and len(r.context["b_builds"]) == 10
    before = Measurement.objects.filter(series=world.series["startup.cold.ttid"], build__ext_id__in=[f"b{i}" for i in range(20, 30)])
    after = Measurement.objects.filter(series=world.series["startup.cold.ttid"], build__ext_id__in=[f"b{i}" for i in range(30, 40)])
    xs = [v for m in before for v in m.sample_list()]
    ys = [v for m in after for v in m.sample_list()]
    assert got["startup.cold.ttid"]["sig"].p == pytest.approx(stats.mannwhitneyu(xs, ys, alternative="two-sided").pvalue)
    assert got["startup.cold.ttid"]["runs"] == "150 / 150"
    c1 = sum(m.count for m in Measurement.objects.filter(series=world.series["crash.rate"], build__ext_id__in=[f"b{i}" for i in range(20, 30)]))
    c2 = sum(m.count for m in Measurement.objects.filter(series=world.series["crash.rate"], build__ext_id__in=[f"b{i}" for i in range(30, 40)]))
    assert got["crash.rate"]["sig"].p == pytest.approx(two_proportion_p(c1, 1_000_000, c2, 1_000_000))
    assert got["crash.rate"]["direction"] == "worse"
    assert got["size.apk.download"]["sig"].test == "Mann-Whitney U (per-build values)"
    assert "10 builds of com.example.shop android" in r.content.decode()


def test_it_pairs_a_pull_request_build_with_its_base_metric_by_metric(client, world):
    from metrics.models import Build, Series

    base = world.builds[20]
    pr = Build.objects.create(app=world.app, platform="android", branch="pr/7", ext_id="pr-7", commit="f" * 40,
                              timestamp=base.timestamp, role="pr", base_commit=base.commit, base_branch="main")
    src = world.series["size.apk.download"]
    pr_series = Series.objects.create(signature="pr-size", app=world.app, platform="android", branch="pr/7",
                                      device=src.device, metric=src.metric, scope="pr")
    Measurement.objects.create(series=pr_series, build=pr, build_time=pr.timestamp, value=31_500_000.0)
    login(client, world.outsider)
    got, r = rows(client, a="b20", b="pr-7")
    assert got["size.apk.download"]["change"] != "" and got["size.apk.download"]["direction"] == "worse"
    assert len(r.context["rows"]) == len(world.series)  # one row per metric, not one per series and side


def test_it_pools_only_the_branchs_own_builds_and_caps_a_long_range(client, world, monkeypatch):
    from datetime import timedelta

    from metrics.models import Build
    from metrics.web import compare

    b12 = world.builds[12]
    Build.objects.create(app=world.app, platform="android", branch="main", ext_id="rerun-1", commit=b12.commit,
                         timestamp=b12.timestamp + timedelta(minutes=30), role="requested")
    login(client, world.outsider)
    _, r = rows(client, a="b10..b14", b="b30..b34")
    assert [b.ext_id for b in r.context["a_builds"]] == ["b10", "b11", "b12", "b13", "b14"]
    assert r.context["notes"] == []
    monkeypatch.setattr(compare, "MAX_RANGE_BUILDS", 3)
    _, r = rows(client, a="b10..b14", b="b30..b34")
    assert [b.ext_id for b in r.context["a_builds"]] == ["b12", "b13", "b14"]
    assert r.context["notes"][0].startswith("b10..b14 holds more than 3 builds") and len(r.context["notes"]) == 2
