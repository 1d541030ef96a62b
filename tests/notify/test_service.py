import pytest

from alerts.models import Alert, AlertGroup, Channel, Delivery, DeliveryAttempt
from alerts.notify.service import RETRY_DELAYS, AttemptOutcome, attempt_delivery, plan_deliveries, retry_delay
from tests.notify.fixtures import Reply, add_channel, delivery_for, make_retry_due

pytestmark = pytest.mark.django_db


@pytest.fixture
def channels(scene, http_server):
    return [
        add_channel(scene.team, "webhook", url=http_server.url, secret="s"),
        add_channel(scene.team, "slack", url=http_server.url + "/slack"),
        add_channel(scene.team, "email", to=["team@example.com"]),
    ]


def test_it_plans_one_delivery_per_channel(scene, channels):
    ids = plan_deliveries(scene.group.pk)
    assert len(ids) == 3
    assert sorted(Delivery.objects.filter(group=scene.group).values_list("channel_id", flat=True)) == sorted(
        c.pk for c in channels)
    assert all(d.status == Delivery.Status.PENDING and d.attempts == 0 for d in Delivery.objects.all())
    scene.group.refresh_from_db()
    assert scene.group.notified is not None


def test_it_plans_idempotently(scene, channels):
    first = plan_deliveries(scene.group.pk)
    scene.group.refresh_from_db()
    notified = scene.group.notified
    second = plan_deliveries(scene.group.pk)
    assert first == second
    assert Delivery.objects.count() == 3
    scene.group.refresh_from_db()
    assert scene.group.notified == notified


def test_it_returns_only_pending_deliveries_on_a_second_plan(scene, channels, http_server):
    ids = plan_deliveries(scene.group.pk)
    webhook = Delivery.objects.get(channel=channels[0])
    assert attempt_delivery(webhook.pk, final=False).done
    assert plan_deliveries(scene.group.pk) == [i for i in ids if i != webhook.pk]
    assert Delivery.objects.count() == 3


def test_it_adds_a_delivery_for_a_channel_added_later(scene, channels):
    plan_deliveries(scene.group.pk)
    late = add_channel(scene.team, "webhook", url="http://127.0.0.1:9/late")
    ids = plan_deliveries(scene.group.pk)
    assert Delivery.objects.get(channel=late).pk in ids
    assert Delivery.objects.count() == 4


def test_it_plans_nothing_for_a_group_of_withdrawn_alerts(scene, channels):
    Alert.objects.filter(group=scene.group).update(detection=Alert.Detection.WITHDRAWN)
    assert plan_deliveries(scene.group.pk) == []
    assert Delivery.objects.count() == 0
    scene.group.refresh_from_db()
    assert scene.group.notified is None


def test_it_plans_nothing_for_a_missing_group_or_a_team_without_channels(scene):
    assert plan_deliveries(scene.group.pk + 1000) == []
    assert plan_deliveries(scene.group.pk) == []
    assert Delivery.objects.count() == 0


def test_it_records_an_attempt_for_every_try(scene, http_server):
    channel = add_channel(scene.team, "webhook", url=http_server.url)
    http_server.reply(Reply(503), Reply(429, headers={"Retry-After": "7"}), Reply(200))
    delivery = delivery_for(channel)
    outcomes = []
    for _ in range(3):
        outcomes.append(attempt_delivery(delivery.pk, final=False))
        make_retry_due(Delivery, delivery.pk)
    # retry_in: the backoff's first step, then its second, longer than the receiver's Retry-After (a minimum)
    assert outcomes == [
        AttemptOutcome(done=False, retry=True, retry_after=None, retry_in=float(RETRY_DELAYS[0])),
        AttemptOutcome(done=False, retry=True, retry_after=7.0, retry_in=float(RETRY_DELAYS[1])),
        AttemptOutcome(done=True, retry=False, retry_after=None),
    ]
    attempts = list(DeliveryAttempt.objects.filter(delivery=delivery).order_by("pk"))
    assert [(a.ok, a.status_code) for a in attempts] == [(False, 503), (False, 429), (True, None)]
    assert all(a.duration_ms >= 0 for a in attempts)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.error) == (Delivery.Status.SENT, 3, "")
    assert delivery.last_attempt is not None and delivery.sent is not None


def test_it_fails_a_channel_of_unknown_kind_permanently(scene):
    channel = add_channel(scene.team, "pager", url="http://127.0.0.1:9/")
    delivery = delivery_for(channel)
    assert attempt_delivery(delivery.pk, final=False) == AttemptOutcome(done=True, retry=False)
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.FAILED and "no transport" in delivery.error
    assert Channel.objects.get(pk=channel.pk).consecutive_failures == 1


def test_it_does_not_send_when_every_alert_was_withdrawn_since_planning(scene, http_server):
    channel = add_channel(scene.team, "webhook", url=http_server.url)
    delivery = delivery_for(channel)
    Alert.objects.filter(group=scene.group).update(detection=Alert.Detection.WITHDRAWN)
    outcome = attempt_delivery(delivery.pk, final=False)
    assert outcome.done and not outcome.retry
    assert http_server.requests == []
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.FAILED and "withdrawn" in delivery.error
    assert Channel.objects.get(pk=channel.pk).consecutive_failures == 0


def test_it_skips_a_missing_delivery():
    assert attempt_delivery(123456, final=False) == AttemptOutcome(done=True, retry=False)


def test_it_honours_the_flag_threshold_setting(scene, settings, http_server):
    settings.PERF_CHANNEL_FLAG_AFTER = 1
    http_server.reply(Reply(500))
    channel = add_channel(scene.team, "webhook", url=http_server.url)
    attempt_delivery(delivery_for(channel).pk, final=False)
    assert Channel.objects.get(pk=channel.pk).flagged


def test_it_backs_off():
    assert [retry_delay(n, None) for n in range(len(RETRY_DELAYS))] == [10.0, 60.0, 300.0, 1800.0]
    assert retry_delay(10, None) == 1800.0
    assert retry_delay(0, 120.0) == 120.0  # a receiver asking for longer than the backoff gets it
    # A short Retry-After is a minimum, not a replacement: the backoff still spreads the attempts.
    assert retry_delay(3, 0.0) == 1800.0 and retry_delay(1, 2.0) == 60.0
    assert retry_delay(0, 10**9) == 6 * 3600.0


def test_it_keeps_the_group_untouched_apart_from_notified(scene, channels):
    before = AlertGroup.objects.get(pk=scene.group.pk)
    plan_deliveries(scene.group.pk)
    after = AlertGroup.objects.get(pk=scene.group.pk)
    assert (after.status, after.build_id, after.team_id) == (before.status, before.build_id, before.team_id)


class Probe:
    """A transport that records what the database looked like while it was sending."""

    kind = "webhook"

    def __init__(self, during=None):
        self.seen: list[dict] = []
        self.during = during

    def send(self, channel, payload, body, *, delivery_id=None):
        from django.db import connection

        d = Delivery.objects.get(pk=delivery_id)
        self.seen.append({"atomic": connection.in_atomic_block, "claimed": d.claimed_until is not None})
        if self.during:
            self.seen[-1]["nested"] = self.during(delivery_id)


@pytest.mark.django_db(transaction=True)
def test_it_sends_with_no_transaction_open_and_a_claim_that_stops_a_twin(monkeypatch, settings):
    from alerts.notify import service
    from tests.notify.fixtures import make_scene

    settings.PERF_WEBHOOK_ALLOW_PRIVATE = True
    scene = make_scene()
    channel = add_channel(scene.team, "webhook", url="http://127.0.0.1:9/hook", secret="s")
    delivery = Delivery.objects.create(group=scene.group, channel=channel)
    probe = Probe(during=lambda pk: attempt_delivery(pk, final=False))  # a redelivered twin, mid-send
    monkeypatch.setitem(service.TRANSPORTS, "webhook", probe)
    outcome = attempt_delivery(delivery.pk, final=False)
    assert outcome.done and not outcome.retry
    assert probe.seen[0]["atomic"] is False and probe.seen[0]["claimed"] is True
    twin = probe.seen[0]["nested"]
    assert twin.retry and not twin.done and twin.retry_after > 0
    assert len(probe.seen) == 1  # the twin sent nothing
    d = Delivery.objects.get(pk=delivery.pk)
    assert (d.status, d.attempts, d.claimed_until) == (Delivery.Status.SENT, 1, None)
    assert DeliveryAttempt.objects.filter(delivery=d).count() == 1
