"""Build page: every metric of a build, its analysis state, the change from the previous build."""

from __future__ import annotations

from metrics.models import Build
from tests.web.conftest import login


def test_it_lists_all_metrics_with_the_change_from_the_previous_build(client, world):
    login(client, world.outsider)
    r = client.get("/builds/com.example.shop/android/b30/")
    assert r.status_code == 200
    rows = {x["m"].series.metric.name: x for x in r.context["rows"]}
    assert set(rows) == set(world.series)
    assert rows["size.apk.download"]["change"] == "+0.0032%" and rows["size.apk.download"]["worse"] is True
    assert rows["crash.rate"]["runs"].endswith("/100000")
    # Only significant changes are coloured: the per-build noise of the runs is not.
    assert rows["memory.pss.steady"]["worse"] is None or rows["memory.pss.steady"]["p"] != ""
    # The alerts raised at this build, supplied by the alerts app through metrics.web.annotations.
    assert [n["text"] for n in rows["startup.cold.ttid"]["notes"]] == ["regression +20.0% · confirmed · untriaged"]
    assert rows["startup.cold.ttid"]["notes"][0]["url"] == f"/alerts/{world.groups['startup'].pk}/"
    assert rows["crash.rate"]["notes"] == []
    assert r.context["n_alerts"] == 2
    assert r.context["prev"].ext_id == "b29" and r.context["next"].ext_id == "b31"
    html = r.content.decode()
    assert "state-done" in html and "/compare/?a=b29&amp;b=b30" in html and "no alert" in html


def test_it_shows_a_pending_or_failed_analysis(client, world):
    Build.objects.filter(ext_id="b31").update(analysis="failed", analysis_error="boom")
    login(client, world.outsider)
    html = client.get("/builds/com.example.shop/android/b31/").content.decode()
    assert "state-failed" in html and "boom" in html


def test_it_answers_404_for_an_unknown_build(client, world):
    login(client, world.outsider)
    assert client.get("/builds/com.example.shop/android/nope/").status_code == 404


def test_it_never_names_a_requested_re_run_as_the_previous_or_next_build(client, world):
    from datetime import timedelta

    b29, b30 = world.builds[29], world.builds[30]
    Build.objects.create(app=world.app, platform="android", branch="main", ext_id="rerun-1", commit=b29.commit,
                         timestamp=b29.timestamp + timedelta(minutes=30), role="requested")
    login(client, world.outsider)
    r = client.get(f"/builds/com.example.shop/android/{b30.ext_id}/")
    assert r.context["prev"].ext_id == "b29"
    assert client.get("/builds/com.example.shop/android/b29/").context["next"].ext_id == "b30"
