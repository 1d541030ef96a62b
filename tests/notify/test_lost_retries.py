"""A retry lives in its row (`Delivery.next_attempt`), not only in the broker: with a broker, the beat sweep
re-publishes a retry still pending a grace after it was due (its publish failed, or Redis lost it); anywhere, an
attempt before the retry is due sends nothing, so a retry published twice is sent once; and the receiver's
Retry-After holds in-process as it does under Celery."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from alerts import handoff, sweeps, tasks
from alerts.models import Delivery
from alerts.notify.service import RETRY_DELAYS, AttemptOutcome, attempt_delivery
from tests.notify.fixtures import Reply, add_channel, delivery_for, make_retry_due

pytestmark = pytest.mark.django_db


@pytest.fixture
def webhook(scene, http_server, settings):
    settings.PERF_WEBHOOK_ALLOW_PRIVATE = True
    return delivery_for(add_channel(scene.team, "webhook", url=http_server.url, secret="s"))


def published_deliveries(**sweep_args) -> list[int]:
    seen: list[tuple[str, int]] = []
    with handoff.use_publisher(lambda kind, pk: seen.append((kind, pk))):
        sweeps.run(**sweep_args)
    return [pk for kind, pk in seen if kind == handoff.DELIVERY]


def test_it_republishes_a_retry_the_broker_lost_once_its_grace_is_over(webhook, http_server, settings):
    settings.PERF_SWEEP_MIN_AGE_SECONDS = 30
    http_server.reply(Reply(503))
    assert attempt_delivery(webhook.pk, final=False).retry
    assert published_deliveries() == []  # the broker holds the retry until it is due
    due = timezone.now() - timedelta(seconds=20)
    Delivery.objects.filter(pk=webhook.pk).update(next_attempt=due)
    assert published_deliveries() == []  # due, but within the grace: the broker's own retry may be queued
    Delivery.objects.filter(pk=webhook.pk).update(next_attempt=due - timedelta(seconds=11))
    assert published_deliveries() == [webhook.pk]


def test_it_sends_a_retry_published_twice_once(webhook, http_server):
    http_server.reply(Reply(503), Reply(200), Reply(200))
    first = attempt_delivery(webhook.pk, final=False)
    assert first.retry and first.retry_in == RETRY_DELAYS[0]
    # The sweep's copy comes before the retry is due: nothing is sent, and nothing more is asked of the task.
    assert attempt_delivery(webhook.pk, final=False) == AttemptOutcome(done=False, retry=False)
    assert len(http_server.requests) == 1
    make_retry_due(Delivery, webhook.pk)
    assert attempt_delivery(webhook.pk, final=False).done
    assert attempt_delivery(webhook.pk, final=False).done  # the other copy, later: already sent
    d = Delivery.objects.get(pk=webhook.pk)
    assert (d.status, d.attempts, d.next_attempt, len(http_server.requests)) == (Delivery.Status.SENT, 2, None, 2)


def test_it_waits_for_the_receivers_retry_after_in_process(webhook, http_server):
    http_server.reply(Reply(429, headers={"Retry-After": "120"}), Reply(200))
    tasks.deliver_notification.apply_async(args=[webhook.pk])
    d = Delivery.objects.get(pk=webhook.pk)
    assert d.next_attempt == d.last_attempt + timedelta(seconds=120)
    # Past the backoff's first step (10 s) but not the 120 s the receiver asked for: not sent yet.
    Delivery.objects.filter(pk=webhook.pk).update(last_attempt=d.last_attempt - timedelta(seconds=RETRY_DELAYS[0] + 1),
                                                  next_attempt=d.next_attempt - timedelta(seconds=RETRY_DELAYS[0] + 1))
    sweeps.run(in_process=True)
    assert len(http_server.requests) == 1
    make_retry_due(Delivery, webhook.pk)
    sweeps.run(in_process=True)
    d = Delivery.objects.get(pk=webhook.pk)
    assert d.status == Delivery.Status.SENT and len(http_server.requests) == 2


class Retried(Exception):
    pass


@pytest.fixture
def broker_task(monkeypatch):
    """deliver_notification as a worker runs it (not eager), its retry captured instead of published."""
    countdowns: list[float] = []

    def retry(countdown=None, **kw):
        countdowns.append(countdown)
        return Retried()

    task = tasks.deliver_notification
    monkeypatch.setattr(task, "retry", retry)
    task.push_request(is_eager=False, retries=0)
    yield task, countdowns
    task.pop_request()


def test_it_retries_under_a_broker_when_the_row_says_and_ends_by_the_rows_count(webhook, http_server, broker_task):
    task, countdowns = broker_task
    http_server.reply(Reply(503, headers={"Retry-After": "42"}), Reply(503))
    with pytest.raises(Retried):
        task(webhook.pk)
    assert countdowns == [42.0]
    # A copy the sweep re-published starts the task's own count at zero (retries=0 here): the row's count
    # says this attempt is the last, so it fails the delivery instead of retrying again.
    Delivery.objects.filter(pk=webhook.pk).update(attempts=len(RETRY_DELAYS))
    make_retry_due(Delivery, webhook.pk)
    assert task(webhook.pk) is True
    d = Delivery.objects.get(pk=webhook.pk)
    assert d.status == Delivery.Status.FAILED and d.next_attempt is None and countdowns == [42.0]


def test_it_republishes_a_lost_first_delivery_after_the_sweeps_age_but_not_one_in_flight(webhook, settings):
    settings.PERF_SWEEP_MIN_AGE_SECONDS = 30
    old = timezone.now() - timedelta(seconds=31)
    Delivery.objects.filter(pk=webhook.pk).update(status=Delivery.Status.PENDING, attempts=0, created=old,
                                                   claimed_until=timezone.now() + timedelta(seconds=60))
    assert published_deliveries() == []  # being sent right now: its sender records it
    Delivery.objects.filter(pk=webhook.pk).update(claimed_until=None)
    assert published_deliveries() == [webhook.pk]  # its hand-off was lost (it was 5 minutes before)
