"""One triage service (alerts/triage.py) behind the API, the alert page and bulk triage."""

from __future__ import annotations

import pytest

from alerts.models import Alert
from alerts.triage import TriageError, triage
from tests.web.conftest import login


@pytest.mark.parametrize("target", ["//evil.example/", "https://evil.example/x", "/\\evil.example", "javascript:alert(1)"])
def test_it_never_redirects_a_triage_to_another_site(client, world, target):
    login(client, world.member)
    g = world.groups["startup"]
    r = client.post(f"/alerts/{g.pk}/", {"alert": "all", "status": "acknowledged", "next": target})
    assert r.status_code == 302
    assert r["Location"] == g.get_absolute_url()


def test_it_follows_a_same_site_next_after_triage(client, world):
    login(client, world.member)
    g = world.groups["startup"]
    r = client.post(f"/alerts/{g.pk}/", {"alert": "all", "status": "acknowledged", "next": "/teams/startup-perf/?page=2"})
    assert r["Location"] == "/teams/startup-perf/?page=2"


def test_it_writes_nothing_when_one_alert_of_the_set_belongs_to_another_team(world):
    startup, size = world.alerts["startup"], world.alerts["size"]
    with pytest.raises(TriageError) as err:
        triage([startup.pk, size.pk], status="invalid", note="n", user_id=world.member.pk, is_staff=False)
    assert err.value.status == 403
    assert set(Alert.objects.filter(pk__in=[startup.pk, size.pk]).values_list("status", flat=True)) == {"untriaged"}


def test_it_keeps_notes_on_a_whole_group_triage_without_one(client, world):
    a = world.alerts["startup"]
    Alert.objects.filter(pk=a.pk).update(note="bisected to 1234abc")
    login(client, world.member)
    client.post(f"/alerts/{world.groups['startup'].pk}/", {"alert": "all", "status": "acknowledged", "note": ""})
    a.refresh_from_db()
    assert (a.status, a.note) == ("acknowledged", "bisected to 1234abc")


def test_it_triages_through_the_api_with_the_same_rules(client, world):
    login(client, world.member)
    size = world.alerts["size"]
    r = client.patch(f"/api/v1/alerts/{size.pk}", {"status": "invalid"}, content_type="application/json")
    assert r.status_code == 403
    startup = world.alerts["startup"]
    r = client.patch(f"/api/v1/alerts/{startup.pk}", {"status": "reassigned"}, content_type="application/json")
    assert r.status_code == 400 and r.json()["errors"][0]["path"] == "reassigned_to"
    r = client.patch(f"/api/v1/alerts/{startup.pk}", {"status": "fixed", "note": "backed out"},
                     content_type="application/json")
    assert r.status_code == 200 and r.json()["status"] == "fixed"
    assert Alert.objects.get(pk=startup.pk).note == "backed out"
    assert client.patch("/api/v1/alerts/999999", {"status": "fixed"}, content_type="application/json").status_code == 404
