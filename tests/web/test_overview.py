"""Overview: open regressions per team per app x platform, the health heat grid, metric search."""

from __future__ import annotations

from tests.web.conftest import login


def test_it_counts_open_regressions_per_team(client, world):
    login(client, world.outsider)
    r = client.get("/overview/")
    rows = r.context["rows"]
    assert [(x["app"], x["platform"], x["open"], x["teams"]) for x in rows] == [
        ("com.example.shop", "android", 2, [("app-size", 1), ("startup-perf", 1)])]


def test_it_draws_a_heat_grid_of_metric_health(client, world):
    login(client, world.outsider)
    r = client.get("/overview/")
    assert r.context["families"] == ["startup", "frames", "memory", "size", "crash"]
    cells = {c["family"]: c for c in r.context["rows"][0]["cells"]}
    assert cells["startup"]["worst"] == "regressed" and cells["startup"]["regressed"] == 1
    assert cells["size"]["worst"] == "regressed"
    html = r.content.decode()
    assert 'class="cell health-regressed"' in html and "aria-label=\"startup on com.example.shop android" in html


def test_it_searches_metrics(client, world):
    login(client, world.outsider)
    r = client.get("/overview/?q=crash")
    assert [x["h"].metric for x in r.context["results"]] == ["crash.rate"]
    assert r.context["results"][0]["team"] == "central-perf"
    r = client.get("/overview/?q=startup.&platform=ios")
    assert r.context["results"] == []
    assert "No metric matches." in r.content.decode()


def test_it_caches_the_overview_and_recomputes_after_a_bump(client, world, django_assert_max_num_queries):
    from metrics import dashcache

    login(client, world.outsider)
    client.get("/overview/")
    before = dashcache.compute_count("overview")
    with django_assert_max_num_queries(4):  # session, user, teams list; no aggregate queries
        client.get("/overview/")
    assert dashcache.compute_count("overview") == before
    dashcache.bump()
    client.get("/overview/")
    assert dashcache.compute_count("overview") == before + 1
