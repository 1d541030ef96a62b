"""Team dashboard: open groups newest first, health and sensitivity, triage permissions and CSRF."""

from __future__ import annotations

import re

from django.test import Client

from alerts.models import Alert, AlertGroup
from tests.web.conftest import login


def test_it_lists_open_groups_with_range_and_changes(client, world):
    login(client, world.member)
    r = client.get("/teams/startup-perf/")
    assert r.status_code == 200
    rows = r.context["rows"]
    # The older group's only alert is withdrawn, so it is not open.
    assert [row["group"].pk for row in rows] == [world.groups["startup"].pk]
    row = rows[0]
    assert row["build"].ext_id == "b30" and row["previous"].ext_id == "b29"
    assert row["alerts"][0]["pct"] == "+20.0%"
    html = r.content.decode()
    assert "400 ms → 480 ms" in html and "com.example.shop · android · build b30" in html


def test_it_orders_open_groups_newest_first(client, world):
    from alerts import lifecycle

    Alert.objects.filter(pk=world.alerts["older"].pk).update(detection="confirmed")
    lifecycle.refresh_groups([world.groups["older"].pk])
    login(client, world.member)
    rows = client.get("/teams/startup-perf/").context["rows"]
    assert [row["build"].ext_id for row in rows] == ["b30", "b20"]


def metric_rows(html: str) -> list[tuple[str, str, str]]:
    """(metric, health, sensitivity) of the team's metrics table."""
    table = html[html.index('id="families"'):]
    return re.findall(r'<a href="/series/\d+/">([^<]+)</a>.*?badge health-(\w+).*?<td class="num">([^<]*)</td>', table, re.S)


def test_it_marks_the_teams_metric_health_and_sensitivity(client, world):
    login(client, world.member)
    r = client.get("/teams/startup-perf/")
    assert metric_rows(r.content.decode()) == [("startup.cold.ttid", "regressed", "4.0%")]
    assert r.context["health_counts"] == {"regressed": 1}
    central = metric_rows(client.get("/teams/central-perf/").content.decode())
    assert {m for m, _, _ in central} == {"memory.pss.steady", "crash.rate", "frames.feed.janky"}
    assert all(h in {"stable", "noisy", "improved", "regressed"} for _, h, _ in central)


def test_it_shows_triage_buttons_to_members_and_staff_only(client, world):
    for user, expected in ((world.member, True), (world.staff, True), (world.outsider, False)):
        login(client, user)
        r = client.get("/teams/startup-perf/")
        assert r.context["can_triage"] is expected
        assert ('value="acknowledged"' in r.content.decode()) is expected


def test_it_triages_a_whole_group_from_the_dashboard(client, world):
    login(client, world.member)
    g = world.groups["startup"]
    r = client.post(f"/alerts/{g.pk}/", {"alert": "all", "status": "acknowledged", "note": "bisecting",
                                         "next": "/teams/startup-perf/"})
    assert r.status_code == 302 and r["Location"] == "/teams/startup-perf/"
    a = Alert.objects.get(pk=world.alerts["startup"].pk)
    assert (a.status, a.note) == ("acknowledged", "bisecting")
    assert AlertGroup.objects.get(pk=g.pk).status == "investigating"


def test_it_refuses_triage_by_a_non_member(client, world):
    login(client, world.outsider)
    g = world.groups["startup"]
    r = client.post(f"/alerts/{g.pk}/", {"alert": "all", "status": "invalid"})
    assert r.status_code == 403
    assert Alert.objects.get(pk=world.alerts["startup"].pk).status == "untriaged"


def test_it_enforces_csrf_on_triage(world):
    c = Client(enforce_csrf_checks=True)
    c.force_login(world.member)
    g = world.groups["startup"]
    assert c.post(f"/alerts/{g.pk}/", {"alert": "all", "status": "invalid"}).status_code == 403
    assert Alert.objects.get(pk=world.alerts["startup"].pk).status == "untriaged"
    c.get("/teams/startup-perf/")
    token = c.cookies["csrftoken"].value
    r = c.post(f"/alerts/{g.pk}/", {"alert": "all", "status": "invalid", "csrfmiddlewaretoken": token})
    assert r.status_code == 302
    assert Alert.objects.get(pk=world.alerts["startup"].pk).status == "invalid"


def test_it_answers_fetch_triage_with_json(client, world):
    login(client, world.staff)
    g = world.groups["size"]
    r = client.post(f"/alerts/{g.pk}/", {"alert": "all", "status": "fixed"}, HTTP_ACCEPT="application/json")
    assert r.status_code == 200
    assert r.json()["group_status"] == "resolved"
    login(client, world.outsider)
    r = client.post(f"/alerts/{g.pk}/", {"alert": "all", "status": "fixed"}, HTTP_ACCEPT="application/json")
    assert r.status_code == 403 and "error" in r.json()


def test_it_reflects_triage_in_health_after_invalidation(client, world):
    login(client, world.member)
    assert client.get("/teams/startup-perf/").context["health_counts"] == {"regressed": 1}
    client.post(f"/alerts/{world.groups['startup'].pk}/", {"alert": "all", "status": "invalid"})
    assert "regressed" not in client.get("/teams/startup-perf/").context["health_counts"]


def test_it_answers_404_for_an_unknown_team(client, world):
    login(client, world.member)
    assert client.get("/teams/nobody/").status_code == 404


def test_it_shows_a_failing_notification_channel(client, django_user_model):
    from alerts.models import Channel, Team

    team = Team.objects.create(name="size-team")
    Channel.objects.create(team=team, kind="webhook", key="https://hooks.example/x",
                           config={"url": "https://hooks.example/x"}, consecutive_failures=4, flagged=True)
    client.force_login(django_user_model.objects.create_user("reader", password="pw"))
    r = client.get("/teams/size-team/")
    assert r.status_code == 200
    assert "failing (4 failures in a row)" in r.content.decode()
