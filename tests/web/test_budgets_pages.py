"""Size budgets end to end on the ORM world: a crossing raises one BudgetAlert in the team's group,
the team and size pages show headroom, triage and notification payloads include the budget."""

from __future__ import annotations

import pytest

from alerts import budget_alerts, lifecycle
from alerts.models import AlertGroup, BudgetAlert, SizeBudget, Team
from metrics.models import Measurement, Metric, Series
from tests.web.conftest import SHIFT_AT, login

STEP = 60_000.0


@pytest.fixture
def budgeted(world):
    """Two parts of the checkout module; the images part grows by STEP at the shift build."""
    checkout = Team.objects.create(name="checkout")
    world.teams["checkout"] = checkout
    for name, base in (("size.module.checkout.code", 250_000.0), ("size.module.checkout.images", 160_000.0)):
        m = Metric.objects.create(app=world.app, name=name, kind="size", unit="bytes")
        s = Series.objects.create(signature=Series.signature_of(world.app.name, "android", "main", "pixel-6", name),
                                  app=world.app, platform="android", branch="main", device="pixel-6", metric=m)
        Measurement.objects.bulk_create([
            Measurement(series=s, build=b, build_time=b.timestamp,
                        value=base + (STEP if name.endswith("images") and i >= SHIFT_AT else 0.0))
            for i, b in enumerate(world.builds)])
    SizeBudget.objects.create(position=1, metric="size.module.checkout.*", max_bytes=450_000, team=checkout)
    SizeBudget.objects.create(position=2, metric="size.apk.*", max_bytes=40_000_000, team=world.teams["app-size"])
    return world


def test_it_raises_one_budget_alert_where_the_budget_is_crossed(budgeted):
    groups = budget_alerts.raise_for_builds(list(budgeted.builds))
    lifecycle.refresh_groups(sorted(groups))
    [alert] = BudgetAlert.objects.all()
    assert alert.build == budgeted.builds[SHIFT_AT] and alert.previous_build == budgeted.builds[SHIFT_AT - 1]
    assert (alert.total, alert.previous_total, alert.max_bytes) == (470_000, 410_000, 450_000)
    assert alert.team.name == "checkout" and alert.group.team.name == "checkout"
    assert AlertGroup.objects.get(pk=alert.group_id).status == "untriaged"  # a group of budgets only is kept
    budget_alerts.raise_for_builds(list(budgeted.builds))  # idempotent
    assert BudgetAlert.objects.count() == 1
    # A later build that stays over does not alert again.
    budget_alerts.raise_for_builds([budgeted.builds[-1]])
    assert BudgetAlert.objects.count() == 1


def test_it_raises_the_budget_alert_when_the_crossing_build_is_analysed(budgeted):
    from alerts.analysis import analyse_build

    assert analyse_build(budgeted.builds[SHIFT_AT].pk) == "done"
    assert BudgetAlert.objects.get().build_id == budgeted.builds[SHIFT_AT].pk


def test_it_shows_budgets_with_headroom_on_the_team_and_size_pages(client, budgeted):
    login(client, budgeted.staff)
    team = client.get("/teams/checkout/").content.decode()
    assert 'data-budget="size.module.checkout.*" data-state="over"' in team
    assert "470.0 kB / 450.0 kB" in team and "−20.0 kB over" in team
    size = client.get(f"/builds/com.example.shop/android/b{SHIFT_AT - 1}/size/").content.decode()
    assert 'data-budget="size.module.checkout.*" data-state="near"' in size  # 410 of 450 kB: 91%
    assert "40.0 kB</td>" in size  # headroom
    assert 'data-budget="size.apk.*" data-state="ok"' in size


def test_it_triages_and_notifies_a_crossed_budget_with_its_group(client, budgeted):
    from alerts.notify.payload import group_payload, headline

    lifecycle.refresh_groups(sorted(budget_alerts.raise_for_builds(list(budgeted.builds))))
    alert = BudgetAlert.objects.get()
    payload = group_payload(alert.group, base_url="https://perf.example")
    assert payload["budgets"][0] | {"url": ""} == {
        "id": alert.pk, "metric": "size.module.checkout.*", "max_bytes": 450_000, "total": 470_000.0,
        "previous_total": 410_000.0, "over_by": 20_000.0, "status": "untriaged", "team": "checkout", "url": ""}
    assert headline(payload).startswith("1 size budget crossed in com.example.shop")
    from alerts.notifications import _unnotified

    assert AlertGroup.objects.filter(_unnotified(), pk=alert.group_id).exists()
    login(client, budgeted.staff)
    html = client.get("/teams/checkout/").content.decode()
    assert f'data-budget-alert="{alert.pk}"' in html and "+20.0 kB over" in html
    r = client.post("/teams/checkout/triage/", {"group": [alert.group_id], "status": "wontfix", "note": "accepted"})
    assert r.status_code == 302
    alert.refresh_from_db()
    assert (alert.status, alert.note) == ("wontfix", "accepted")
    assert AlertGroup.objects.get(pk=alert.group_id).status == "resolved"
    assert f'data-budget-alert="{alert.pk}"' in client.get(f"/alerts/{alert.group_id}/").content.decode()
