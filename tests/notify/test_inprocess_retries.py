"""Deliveries with tasks in-process (no broker holds a retry's countdown): a failed attempt waits out its backoff
in its row and the periodic sweep (`alerts.sweeps`) sends it again."""

from __future__ import annotations

from datetime import timedelta

import pytest

from alerts import sweeps, tasks
from alerts.models import Delivery
from alerts.notify.service import RETRY_DELAYS
from tests.notify.fixtures import Reply, add_channel, delivery_for, make_retry_due

pytestmark = pytest.mark.django_db


@pytest.fixture
def webhook(scene, http_server, settings):
    settings.PERF_WEBHOOK_ALLOW_PRIVATE = True
    return delivery_for(add_channel(scene.team, "webhook", url=http_server.url, secret="s"))


def test_it_retries_a_failed_delivery_in_process_only_once_its_backoff_is_over(webhook, http_server, settings):
    http_server.reply(Reply(503), Reply(200))
    tasks.deliver_notification.apply_async(args=[webhook.pk])
    d = Delivery.objects.get(pk=webhook.pk)
    # One attempt: an eager retry would have run at once, countdown ignored, inside the failing request.
    assert d.status == Delivery.Status.PENDING and d.attempts == 1 and len(http_server.requests) == 1
    sweeps.run(in_process=True)
    assert Delivery.objects.get(pk=webhook.pk).attempts == 1 and len(http_server.requests) == 1
    d = Delivery.objects.get(pk=webhook.pk)
    assert d.next_attempt == d.last_attempt + timedelta(seconds=RETRY_DELAYS[0])
    make_retry_due(Delivery, webhook.pk)
    sweeps.run(in_process=True)
    d = Delivery.objects.get(pk=webhook.pk)
    assert d.status == Delivery.Status.SENT and d.attempts == 2 and len(http_server.requests) == 2


def test_it_gives_up_on_a_delivery_at_its_last_attempt_in_process(webhook, http_server):
    http_server.reply(Reply(503))
    Delivery.objects.filter(pk=webhook.pk).update(attempts=len(RETRY_DELAYS))
    tasks.deliver_notification.apply_async(args=[webhook.pk])
    d = Delivery.objects.get(pk=webhook.pk)
    assert d.status == Delivery.Status.FAILED and d.attempts == len(RETRY_DELAYS) + 1
