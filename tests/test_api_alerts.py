"""GET /api/v1/alerts and PATCH /api/v1/alerts/{id}: filters, pagination, triage permissions."""

from __future__ import annotations

import pytest

from alerts.models import Alert, AlertGroup, Team
from metrics.models import App, UploadToken
from tests.factories import history_bodies

pytestmark = pytest.mark.django_db(transaction=True)

SHIFTS = {"startup.cold.ttid": (30, 0.20), "size.apk.download": (36, 0.03)}
FIELDS = {"id", "app", "platform", "branch", "device", "metric", "build", "previous_build", "direction",
          "rel_change", "before", "after", "p_value", "status", "team", "created", "url"}


@pytest.fixture
def alerts(upload, app_token):
    for body in history_bodies(45, shifts=SHIFTS):
        assert upload(body).status_code == 201
    return Alert.objects.exclude(detection="withdrawn")


def auth(app_token):
    return {"HTTP_AUTHORIZATION": f"Bearer {app_token[1]}"}


def test_it_lists_alerts_with_the_contract_fields(client, alerts, app_token):
    r = client.get("/api/v1/alerts?detection=confirmed", **auth(app_token))
    assert r.status_code == 200
    results = r.json()["results"]
    assert {a["metric"] for a in results} == {"startup.cold.ttid", "size.apk.download"}
    for a in results:
        assert FIELDS <= set(a)
        assert a["app"] == "com.example.shop" and a["platform"] == "android" and a["device"] == "pixel-6"
        assert a["url"].endswith(f"/alerts/{a['group']}/")
    ttid = next(a for a in results if a["metric"] == "startup.cold.ttid")
    assert (ttid["build"], ttid["previous_build"], ttid["commit"], ttid["previous_commit"]) == ("30", "29", "c30", "c29")
    assert ttid["status"] == "untriaged" and ttid["team"] == "central-perf"
    # planted steps are shifts; drift fields are additive and empty for them
    assert (ttid["shape"], ttid["slope_per_build"], ttid["window_builds"]) == ("shift", None, None)


@pytest.mark.parametrize(("query", "metrics"), [
    ("metric=startup.*", {"startup.cold.ttid"}),
    ("metric=size.apk.download", {"size.apk.download"}),
    ("team=nobody", set()),
    ("platform=ios", set()),
    ("status=untriaged&detection=confirmed", {"startup.cold.ttid", "size.apk.download"}),
])
def test_it_filters(client, alerts, app_token, query, metrics):
    r = client.get(f"/api/v1/alerts?{query}", **auth(app_token))
    assert {a["metric"] for a in r.json()["results"]} == metrics


def test_it_takes_the_contracts_empty_filters_and_refuses_an_unknown_status_with_its_path(client, alerts, app_token):
    r = client.get("/api/v1/alerts?app=&platform=&branch=&team=&status=&metric=&detection=", **auth(app_token))
    assert r.status_code == 200 and {a["metric"] for a in r.json()["results"]} == {"startup.cold.ttid",
                                                                                  "size.apk.download"}
    for param in ("status", "detection"):
        r = client.get(f"/api/v1/alerts?{param}=bogus", **auth(app_token))
        assert r.status_code == 400 and r.json()["errors"][0]["path"].endswith(param), r.json()


def test_it_paginates(client, alerts, app_token):
    r = client.get("/api/v1/alerts?limit=1", **auth(app_token)).json()
    assert len(r["results"]) == 1 and r["next"]
    second = client.get(r["next"], **auth(app_token)).json()
    assert second["results"][0]["id"] != r["results"][0]["id"]


def test_it_lets_the_owning_team_triage_and_derives_the_group_status(client, alerts, django_user_model):
    alert = alerts.get(series__metric__name="startup.cold.ttid")
    user = django_user_model.objects.create_user("alice", password="pw")
    Team.objects.get(pk=alert.team_id).members.add(user)
    client.force_login(user)
    r = client.patch(f"/api/v1/alerts/{alert.pk}", data={"status": "acknowledged", "note": "bisecting"},
                     content_type="application/json")
    assert r.status_code == 200, r.content
    assert r.json()["status"] == "acknowledged"
    alert.refresh_from_db()
    assert (alert.status, alert.note) == ("acknowledged", "bisecting")
    assert AlertGroup.objects.get(pk=alert.group_id).status == "investigating"
    client.patch(f"/api/v1/alerts/{alert.pk}", data={"status": "fixed"}, content_type="application/json")
    assert AlertGroup.objects.get(pk=alert.group_id).status == "resolved"


def test_it_refuses_triage_by_other_users_and_tokens(client, alerts, app_token, django_user_model):
    alert = alerts.first()
    r = client.patch(f"/api/v1/alerts/{alert.pk}", data={"status": "invalid"}, content_type="application/json",
                     **auth(app_token))
    assert r.status_code == 403
    client.force_login(django_user_model.objects.create_user("mallory", password="pw"))
    r = client.patch(f"/api/v1/alerts/{alert.pk}", data={"status": "invalid"}, content_type="application/json")
    assert r.status_code == 403
    alert.refresh_from_db()
    assert alert.status == "untriaged"


def test_it_lets_staff_triage_and_rejects_an_unknown_status(client, alerts, django_user_model):
    alert = alerts.first()
    client.force_login(django_user_model.objects.create_user("root", password="pw", is_staff=True))
    r = client.patch(f"/api/v1/alerts/{alert.pk}", data={"status": "bogus"}, content_type="application/json")
    assert r.status_code == 400
    assert r.json()["errors"][0]["path"] == "status"
    r = client.patch(f"/api/v1/alerts/{alert.pk}", data={"status": "wontfix"}, content_type="application/json")
    assert r.status_code == 200


def test_it_reassigns_to_another_builds_group(client, alerts, django_user_model):
    a, b = list(alerts.order_by("build__timestamp"))[:2]
    client.force_login(django_user_model.objects.create_user("root", password="pw", is_staff=True))
    r = client.patch(f"/api/v1/alerts/{b.pk}", data={"status": "reassigned", "reassigned_to": a.group_id},
                     content_type="application/json")
    assert r.status_code == 200
    b.refresh_from_db()
    assert b.reassigned_to_id == a.group_id
    r = client.patch(f"/api/v1/alerts/{b.pk}", data={"status": "reassigned"}, content_type="application/json")
    assert r.status_code == 400 and r.json()["errors"][0]["path"] == "reassigned_to"


def test_it_hides_other_apps_alerts_from_a_token(client, alerts):
    _, other = UploadToken.issue(App.objects.create(name="com.example.other"))
    r = client.get("/api/v1/alerts", HTTP_AUTHORIZATION=f"Bearer {other}")
    assert r.json()["results"] == []


def test_it_requires_the_csrf_token_for_triage_from_a_browser_session(alerts, django_user_model):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(django_user_model.objects.create_user("root", password="pw", is_staff=True))
    alert = alerts.first()
    r = browser.patch(f"/api/v1/alerts/{alert.pk}", data={"status": "fixed"}, content_type="application/json")
    assert r.status_code == 403
    assert r.json()["errors"][0]["path"] == "X-CSRFToken"
    browser.get("/accounts/login/")  # sets the csrftoken cookie
    token = browser.cookies["csrftoken"].value
    r = browser.patch(f"/api/v1/alerts/{alert.pk}", data={"status": "fixed"}, content_type="application/json",
                      HTTP_X_CSRFTOKEN=token)
    assert r.status_code == 200


def test_it_gives_levels_without_the_float_noise_of_their_computation(client, alerts, app_token):
    from alerts.models import Alert
    from alerts.notify.payload import group_payload

    a = Alert.objects.get(series__metric__name="size.apk.download")
    Alert.objects.filter(pk=a.pk).update(before=19999999.999999978, after=20999999.99999998, abs_change=999999.999999999)
    doc = client.get(f"/api/v1/alerts/{a.pk}", **auth(app_token)).json()
    assert (doc["before"], doc["after"], doc["abs_change"]) == (20000000.0, 21000000.0, 1000000.0)
    sent = next(x for x in group_payload(a.group, base_url="")["alerts"] if x["metric"] == "size.apk.download")
    assert (sent["before"], sent["after"]) == (20000000.0, 21000000.0)
