"""Alert group page: the notification's content, triage with a note, reassignment, permissions."""

from __future__ import annotations

import json
import re

from django.test import Client

from alerts.models import Alert, AlertGroup
from tests.web.conftest import SHIFT_AT, login


def test_it_shows_what_the_notification_says(client, world):
    login(client, world.outsider)
    g = world.groups["startup"]
    r = client.get(f"/alerts/{g.pk}/")
    html = r.content.decode()
    assert r.status_code == 200
    assert "startup-perf" in html and "startup.cold.ttid" in html and "+20.0%" in html
    assert 'href="/builds/com.example.shop/android/b29/"' in html and 'href="/builds/com.example.shop/android/b30/"' in html
    assert f"{29:040x}"[:10] in html and f"{30:040x}"[:10] in html  # the commit range
    assert "/compare/?a=b29&amp;b=b30" in html
    assert f'href="/series/{world.series["startup.cold.ttid"].pk}/"' in html
    assert "only members of startup-perf or staff can triage" in html
    assert 'name="status"' not in html  # no triage controls for a reader


def test_it_triages_one_alert_with_a_note(client, world):
    login(client, world.member)
    g, a = world.groups["startup"], world.alerts["startup"]
    html = client.get(f"/alerts/{g.pk}/").content.decode()
    assert f'for="status-{a.pk}"' in html and f'for="note-{a.pk}"' in html
    r = client.post(f"/alerts/{g.pk}/", {"alert": a.pk, "status": "wontfix", "note": "accepted: new feature"})
    assert r.status_code == 302
    a.refresh_from_db()
    assert (a.status, a.note) == ("wontfix", "accepted: new feature")
    assert AlertGroup.objects.get(pk=g.pk).status == "resolved"
    assert "accepted: new feature" in client.get(f"/alerts/{g.pk}/").content.decode()


def test_it_rejects_bad_triage_input(client, world):
    login(client, world.staff)
    g = world.groups["startup"]
    assert client.post(f"/alerts/{g.pk}/", {"alert": "all", "status": "bogus"}).status_code == 400
    assert client.post(f"/alerts/{g.pk}/", {"alert": world.alerts["size"].pk, "status": "fixed"}).status_code == 404


def test_it_refuses_non_members_and_enforces_csrf(world):
    g, a = world.groups["startup"], world.alerts["startup"]
    c = Client(enforce_csrf_checks=True)
    c.force_login(world.outsider)
    c.get(f"/alerts/{g.pk}/")
    token = c.cookies["csrftoken"].value
    r = c.post(f"/alerts/{g.pk}/", {"alert": a.pk, "status": "invalid", "csrfmiddlewaretoken": token})
    assert r.status_code == 403
    c.force_login(world.member)
    assert c.post(f"/alerts/{g.pk}/", {"alert": a.pk, "status": "invalid"}).status_code == 403  # no token
    c.get(f"/alerts/{g.pk}/")
    token = c.cookies["csrftoken"].value
    r = c.post(f"/alerts/{g.pk}/", {"alert": a.pk, "status": "invalid"}, HTTP_X_CSRFTOKEN=token)
    assert r.status_code == 302
    a.refresh_from_db()
    assert a.status == "invalid"


def test_it_offers_other_builds_groups_and_reassigns_through_the_api(client, world):
    login(client, world.member)
    g, a, target = world.groups["startup"], world.alerts["startup"], world.groups["older"]
    r = client.get(f"/alerts/{g.pk}/")
    assert target.pk in [c.pk for c in r.context["candidates"]]
    assert f'data-reassign="{a.pk}"' in r.content.decode()
    r = client.patch(f"/api/v1/alerts/{a.pk}", data=json.dumps({"status": "reassigned", "reassigned_to": target.pk}),
                     content_type="application/json")
    assert r.status_code == 200
    a.refresh_from_db()
    assert (a.status, a.reassigned_to_id) == ("reassigned", target.pk)
    html = client.get(f"/alerts/{g.pk}/").content.decode()
    assert f'href="/alerts/{target.pk}/">build b20</a>' in html


def test_it_lets_staff_triage_and_lists_withdrawn_alerts_apart(client, world):
    login(client, world.staff)
    g = world.groups["older"]
    r = client.get(f"/alerts/{g.pk}/")
    assert r.context["allowed"] is True and r.context["counts"]["withdrawn"] == 1
    assert 'class="withdrawn"' in r.content.decode()
    assert client.post(f"/alerts/{world.groups['size'].pk}/", {"alert": "all", "status": "fixed"}).status_code == 302
    assert set(Alert.objects.filter(group=world.groups["size"]).values_list("status", flat=True)) == {"fixed"}


def test_it_draws_each_live_alert_around_its_culprit(client, world):
    login(client, world.member)
    html = client.get(f"/alerts/{world.groups['startup'].pk}/").content.decode()
    section = html[html.index('id="graphs-h"'):html.index("</section>", html.index('id="graphs-h"'))]
    sparks = [json.loads(m.replace("&quot;", '"')) for m in re.findall(r'data-sparkline="([^"]*)"', section)]
    assert len(sparks) == 1
    assert sparks[0]["c"] == SHIFT_AT and len(sparks[0]["v"]) == 40  # 31 builds up to the culprit, 9 after
    # The withdrawn group draws nothing.
    assert 'id="graphs-h"' not in client.get(f"/alerts/{world.groups['older'].pk}/").content.decode()


def test_it_shows_a_drift_with_its_window_and_slope(client, world):
    login(client, world.outsider)
    g = world.groups["startup"]
    a = g.alerts.exclude(detection="withdrawn").first()
    Alert.objects.filter(pk=a.pk).update(shape="drift", slope_per_build=1.25, window_builds=32)
    html = client.get(f"/alerts/{g.pk}/").content.decode()
    assert 'data-shape="drift"' in html and "drift over 32 builds, 1.25" in html
    Alert.objects.filter(pk=a.pk).update(shape="shift", slope_per_build=None, window_builds=None)
    assert 'data-shape="drift"' not in client.get(f"/alerts/{g.pk}/").content.decode()


def test_it_links_a_merged_alert_to_the_drift_it_became_part_of(client, world):
    login(client, world.outsider)
    older, drift = world.alerts["older"], world.alerts["startup"]
    Alert.objects.filter(pk=drift.pk).update(shape="drift", slope_per_build=2.0, window_builds=20)
    html = client.get(f"/alerts/{world.groups['older'].pk}/").content.decode()
    assert "data-merged-into" not in html
    Alert.objects.filter(pk=older.pk).update(merged_into=drift)
    html = client.get(f"/alerts/{world.groups['older'].pk}/").content.decode()
    assert f'data-merged-into="{drift.pk}"' in html
    assert f'href="/alerts/{world.groups["startup"].pk}/#alert-{drift.pk}"' in html
    assert f"drift at build {drift.build.ext_id}" in html


def test_it_says_why_a_due_group_was_not_sent(client, world):
    from django.utils import timezone

    login(client, world.outsider)
    g = world.groups["startup"]
    AlertGroup.objects.filter(pk=g.pk).update(notified=timezone.now(),
                                              not_sent="repeats a drift already sent, not grown 1.5x since")
    html = client.get(f"/alerts/{g.pk}/").content.decode()
    assert "not sent: repeats a drift already sent, not grown 1.5x since" in html
    assert "; notified " not in html


def test_it_keeps_a_reassignment_when_the_alerts_note_is_saved(client, world):
    login(client, world.member)
    g, a, target = world.groups["startup"], world.alerts["startup"], world.groups["older"]
    client.patch(f"/api/v1/alerts/{a.pk}", data=json.dumps({"status": "reassigned", "reassigned_to": target.pk}),
                 content_type="application/json")
    html = client.get(f"/alerts/{g.pk}/").content.decode()
    assert '<option value="reassigned" selected>' in html  # the form shows the alert's own status
    r = client.post(f"/alerts/{g.pk}/", {"alert": a.pk, "status": "reassigned", "note": "culprit is b20's"})
    assert r.status_code == 302
    a.refresh_from_db()
    assert (a.status, a.reassigned_to_id, a.note) == ("reassigned", target.pk, "culprit is b20's")
    # Its target group gone (emptied and deleted), the form no longer offers to keep the reassignment.
    Alert.objects.filter(pk=a.pk).update(reassigned_to=None)
    html = client.get(f"/alerts/{g.pk}/").content.decode()
    assert '<option value="reassigned" selected>' not in html and "reassigned to is gone" in html
    # Reassigning from the note form (an alert not reassigned yet) is still refused: that takes a target.
    other = world.alerts["size"]
    login(client, world.staff)
    r = client.post(f"/alerts/{world.groups['size'].pk}/", {"alert": other.pk, "status": "reassigned"})
    assert r.status_code == 400


def test_it_offers_the_groups_of_the_builds_around_the_culprit_for_reassignment(client, world):
    from alerts.models import AlertGroup
    from alerts.web.group import reassign_candidates

    # Groups on every build but the culprit (b30): the nearest ones, both sides, are offered, not the latest.
    for b in world.builds:
        if b.ext_id not in ("b30", "b20"):
            AlertGroup.objects.create(build=b, team=world.teams["central-perf"])
    got = [c.build.ext_id for c in reassign_candidates(world.groups["startup"], each_side=3)]
    assert got == ["b33", "b32", "b31", "b29", "b28", "b27"]
    login(client, world.member)
    html = client.get(f"/alerts/{world.groups['startup'].pk}/").content.decode()
    assert '<option value="">choose a build</option>' in html  # nothing chosen for the user
