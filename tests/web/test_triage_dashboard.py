"""Team dashboard for triage: URL filters, pagination, sparklines around the culprit, metric families,
bulk triage (CSRF, permissions, `next`), and a query count that does not grow with the groups shown."""

from __future__ import annotations

import json
import re
from datetime import timedelta

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from alerts.models import Alert, AlertGroup
from metrics.models import Build
from tests.web.conftest import SHIFT_AT, login


def sparklines(html: str) -> list[dict]:
    return [json.loads(m.replace("&quot;", '"')) for m in re.findall(r'data-sparkline="([^"]*)"', html)]


def more_groups(world, n: int) -> list[AlertGroup]:
    """n further open startup groups, one alert each, at the oldest builds that hold no group yet."""
    team = world.teams["startup-perf"]
    out = []
    for i in [i for i in range(1, 40) if i not in (20, SHIFT_AT)][:n]:
        b = world.builds[i]
        g = AlertGroup.objects.create(build=b, team=team)
        Alert.objects.create(series=world.series["startup.cold.ttid"], build=b, previous_build=world.builds[i - 1],
                             group=g, team=team, direction="regression", rel_change=0.1, abs_change=40, before=400,
                             after=440, test="t", detection="confirmed")
        out.append(g)
    return out


def test_it_draws_a_window_around_the_culprit_for_each_alert(client, world):
    login(client, world.member)
    html = client.get("/teams/startup-perf/").content.decode()
    alert_sparks = [s for s in sparklines(html) if s["c"] >= 0]
    assert len(alert_sparks) == 1
    spark = alert_sparks[0]
    # 40 builds up to the culprit b30 (only 31 exist) and the 9 after it, culprit marked.
    assert len(spark["v"]) == N_BUILDS and spark["c"] == SHIFT_AT
    assert min(spark["v"][SHIFT_AT:]) > max(spark["v"][:SHIFT_AT - 1]) * 1.05


N_BUILDS = 40


def test_it_filters_groups_by_app_platform_device_status_and_time(client, world):
    login(client, world.member)
    assert len(client.get("/teams/startup-perf/?platform=android").context["rows"]) == 1
    assert client.get("/teams/startup-perf/?platform=ios").context["rows"] == []
    assert client.get("/teams/startup-perf/?app=com.example.other").context["rows"] == []
    assert len(client.get("/teams/startup-perf/?device=pixel-6").context["rows"]) == 1
    assert client.get("/teams/startup-perf/?device=iphone-13").context["rows"] == []
    assert client.get("/teams/startup-perf/?status=resolved").context["rows"] == []
    # The demo builds are from October 2026; "within 7 days" of now holds none of them.
    Build.objects.filter(pk=world.builds[SHIFT_AT].pk).update(timestamp=world.builds[SHIFT_AT].timestamp - timedelta(days=3650))
    assert client.get("/teams/startup-perf/?since=7d").context["rows"] == []
    r = client.get("/teams/startup-perf/?platform=android&status=nonsense")
    assert r.context["f"].status == "open"
    assert 'value="android" selected' in r.content.decode() or "<option selected>android</option>" in r.content.decode()


def test_it_pages_groups_newest_first_and_keeps_the_filters(client, world):
    more_groups(world, 25)
    login(client, world.member)
    r = client.get("/teams/startup-perf/?platform=android")
    rows = r.context["rows"]
    assert len(rows) == 20 and r.context["total"] == 26
    stamps = [row["build"].timestamp for row in rows]
    assert stamps == sorted(stamps, reverse=True)
    assert r.context["next_query"] == "platform=android&page=2"
    second = client.get("/teams/startup-perf/?" + r.context["next_query"]).context["rows"]
    assert len(second) == 6 and second[-1]["build"].ext_id == "b1"


def test_it_reads_the_same_number_of_queries_for_2_and_12_groups(client, world):
    login(client, world.member)
    client.get("/teams/startup-perf/")  # warm the cached aggregates
    with CaptureQueriesContext(connection) as few:
        client.get("/teams/startup-perf/")
    more_groups(world, 10)
    client.get("/teams/startup-perf/")
    with CaptureQueriesContext(connection) as many:
        r = client.get("/teams/startup-perf/")
    assert len(r.context["rows"]) == 11
    assert len(many.captured_queries) == len(few.captured_queries), [q["sql"][:150] for q in many.captured_queries]


def test_it_collapses_the_metric_list_by_family_with_a_health_mark(client, world):
    login(client, world.member)
    html = client.get("/teams/central-perf/").content.decode()
    fams = re.findall(r'<details class="family" data-family="(\w+)"', html)
    assert fams == ["frames", "memory", "crash"]
    assert len([s for s in sparklines(html) if s["c"] == -1]) == 3
    startup = client.get("/teams/startup-perf/").content.decode()
    assert '<details class="family" data-family="startup">' in startup  # collapsed: the list stays short
    assert 'badge health-regressed" title="worst health in the family"' in startup


def test_it_triages_several_groups_with_one_note(client, world):
    extra = more_groups(world, 2)
    login(client, world.member)
    ids = [world.groups["startup"].pk, extra[0].pk]
    r = client.post("/teams/startup-perf/triage/", {"group": ids, "status": "wontfix", "note": "known, accepted",
                                                    "next": "/teams/startup-perf/?platform=android"})
    assert r.status_code == 302 and r["Location"] == "/teams/startup-perf/?platform=android"
    for g in ids:
        assert set(Alert.objects.filter(group_id=g).values_list("status", "note")) == {("wontfix", "known, accepted")}
        assert AlertGroup.objects.get(pk=g).status == "resolved"
    assert Alert.objects.get(group=extra[1]).status == "untriaged"
    r = client.post("/teams/startup-perf/triage/", {"group": [extra[1].pk], "status": "acknowledged"},
                    HTTP_ACCEPT="application/json")
    assert r.status_code == 200 and r.json()["groups"] == {str(extra[1].pk): "investigating"}


def test_it_refuses_bad_bulk_triage_and_never_redirects_off_site(client, world):
    login(client, world.member)
    g = world.groups["startup"].pk
    url = "/teams/startup-perf/triage/"
    assert client.post(url, {"group": [g], "status": "reassigned"}).status_code == 400
    assert client.post(url, {"status": "invalid"}).status_code == 400
    assert client.post(url, {"group": ["x1"], "status": "invalid"}).status_code == 400
    # A group of another team is not triaged through this team's page.
    assert client.post(url, {"group": [g, world.groups["size"].pk], "status": "invalid"}).status_code == 404
    assert Alert.objects.get(pk=world.alerts["startup"].pk).status == "untriaged"
    for evil in ("https://evil.example/", "//evil.example/x", "javascript:alert(1)"):
        r = client.post(url, {"group": [g], "status": "acknowledged", "next": evil})
        assert r.status_code == 302 and r["Location"] == "/teams/startup-perf/"
    login(client, world.outsider)
    assert client.post(url, {"group": [g], "status": "invalid"}).status_code == 403
    assert Alert.objects.get(pk=world.alerts["startup"].pk).status == "acknowledged"


def test_it_enforces_csrf_on_bulk_triage(world):
    c = Client(enforce_csrf_checks=True)
    c.force_login(world.member)
    g = world.groups["startup"].pk
    assert c.post("/teams/startup-perf/triage/", {"group": [g], "status": "invalid"}).status_code == 403
    html = c.get("/teams/startup-perf/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    r = c.post("/teams/startup-perf/triage/", {"group": [g], "status": "invalid", "csrfmiddlewaretoken": token})
    assert r.status_code == 302
    assert Alert.objects.get(pk=world.alerts["startup"].pk).status == "invalid"


def test_it_shows_the_bisection_state_and_culprit_commit(client, world):
    Alert.objects.filter(pk=world.alerts["startup"].pk).update(confirmation="bisected", culprit_commit="c0ffee1234abcdef",
                                                                range_commits=5)
    login(client, world.member)
    html = client.get("/teams/startup-perf/").content.decode()
    assert 'class="badge bisect-bisected" title="bisection and confirmation runs">bisected</span>' in html
    assert '<code title="culprit commit">c0ffee1234</code>' in html
    Alert.objects.filter(pk=world.alerts["startup"].pk).update(confirmation="requested", culprit_commit="")
    html = client.get("/teams/startup-perf/").content.decode()
    assert ">requested</span> <span class=\"muted\">5 commits in range</span>" in html


def test_it_links_recent_pull_request_checks_of_the_teams_metrics(client, world):
    from django.utils import timezone

    from alerts.models import Check

    pr = Build.objects.create(app=world.app, platform="android", branch="pr/9", ext_id="pr-9", commit="9" * 40,
                              timestamp=world.builds[-1].timestamp, role="pr", base_commit=world.builds[-2].commit)
    Check.objects.create(build=pr, app=world.app, platform="android", base_branch="main", base_commit=pr.base_commit,
                         status="fail", requested=timezone.now(),
                         metrics=[{"metric": "startup.cold.ttid", "verdict": "regression"},
                                  {"metric": "size.apk.download", "verdict": "same"}])
    login(client, world.member)
    html = client.get("/teams/startup-perf/").content.decode()
    assert 'href="/checks/com.example.shop/android/pr-9/"' in html and "1 metric of ours, 1 regression" in html
    assert "/checks/com.example.shop/android/pr-9/" not in client.get("/teams/central-perf/").content.decode()
    assert 'href="/checks/com.example.shop/android/pr-9/"' in client.get("/overview/").content.decode()


def test_it_filters_groups_by_metric_and_direction_and_orders_them_by_size(client, world):
    team = world.teams["startup-perf"]
    extra = []
    for i, (name, direction, rel) in enumerate([("startup.warm.ttid", "improvement", -0.30),
                                                 ("frames.feed.janky", "regression", 0.05)]):
        b = world.builds[5 + i]
        g = AlertGroup.objects.create(build=b, team=team)
        series = world.series["startup.cold.ttid"] if name.startswith("startup") else world.series[name]
        Alert.objects.create(series=series, build=b, previous_build=world.builds[4 + i], group=g, team=team,
                             direction=direction, rel_change=rel, abs_change=rel * 400, before=400,
                             after=400 * (1 + rel), test="t", detection="confirmed", note="looking into it")
        extra.append(g)
    login(client, world.member)

    def shown(query: str) -> list[int]:
        return [row["group"].pk for row in client.get(f"/teams/startup-perf/?{query}").context["rows"]]

    startup = world.groups["startup"].pk  # +20% startup regression at b30
    assert shown("") == [startup, extra[1].pk, extra[0].pk]  # newest culprit first
    assert shown("metric=frames") == [extra[1].pk]
    assert shown("metric=STARTUP.*") == [startup, extra[0].pk]
    assert shown("metric=*.janky") == [extra[1].pk]
    assert shown("direction=improvements") == [extra[0].pk]
    assert shown("direction=regressions") == [startup, extra[1].pk]
    assert shown("sort=largest") == [extra[0].pk, startup, extra[1].pk]  # |-30%| > 20% > 5%
    r = client.get("/teams/startup-perf/?metric=startup.*&direction=regressions&sort=largest&page=1")
    assert r.context["f"].query() == "metric=startup.%2A&direction=regressions&sort=largest"  # shareable
    assert client.get("/teams/startup-perf/?direction=bogus&sort=bogus").context["f"].query() == ""
    assert "looking into it" in client.get("/teams/startup-perf/?metric=frames").content.decode()
