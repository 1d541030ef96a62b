"""The team dashboard's query count does not grow with the number of alert groups or channels."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from alerts.models import Alert, AlertGroup, Channel
from tests.web.conftest import login


def add_groups(world, n: int) -> None:
    """n more startup alert groups, one per build, each with a live alert and its own channel."""
    team = world.teams["startup-perf"]
    series = world.series["startup.cold.ttid"]
    have = AlertGroup.objects.filter(team=team).count()
    for b in world.builds[1:]:
        if have >= n:
            break
        if AlertGroup.objects.filter(team=team, build=b).exists():
            continue
        g = AlertGroup.objects.create(build=b, team=team)
        Alert.objects.create(series=series, build=b, previous_build=world.builds[0], group=g, team=team,
                             direction="regression", rel_change=0.1, abs_change=40, before=400, after=440,
                             p_value=1e-5, test="t", detection="confirmed")
        Channel.objects.create(team=team, kind="webhook", key=f"http://127.0.0.1:9/{b.pk}",
                               config={"url": f"http://127.0.0.1:9/{b.pk}", "secret": "s"})
        have += 1


def queries_for_team_page(client) -> int:
    from django.core.cache import cache

    cache.clear()  # every request recomputes: the worst case
    with CaptureQueriesContext(connection) as ctx:
        r = client.get("/teams/startup-perf/")
    assert r.status_code == 200
    return len(ctx.captured_queries)


def test_it_answers_the_team_page_in_the_same_number_of_queries_at_10_and_50_groups(client, world):
    login(client, world.member)
    add_groups(world, 10)
    at_10 = queries_for_team_page(client)
    add_groups(world, 50)
    assert AlertGroup.objects.filter(team=world.teams["startup-perf"]).count() >= 39  # one per build at most
    at_50 = queries_for_team_page(client)
    assert at_50 == at_10, (at_10, at_50)
