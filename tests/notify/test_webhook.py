import hashlib
import hmac
import json

import pytest

from alerts.models import Channel, Delivery, DeliveryAttempt
from alerts.notify.service import attempt_delivery
from alerts.notify.transports.base import PermanentError, TransientError
from alerts.notify.transports.webhook import sign
from tests.notify.fixtures import BASE_URL, Reply, add_channel, delivery_for, make_retry_due

pytestmark = pytest.mark.django_db

SECRET = "s3cret"


@pytest.fixture
def channel(scene, http_server):
    return add_channel(scene.team, "webhook", url=http_server.url, secret=SECRET)


def test_it_posts_one_signed_json_body(scene, channel, http_server):
    delivery = delivery_for(channel)
    outcome = attempt_delivery(delivery.pk, final=False)
    assert (outcome.done, outcome.retry) == (True, False)

    assert len(http_server.requests) == 1
    request = http_server.requests[0]
    assert request.method == "POST" and request.path == "/hook"
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["X-Perf-Event"] == "alerts.created"
    assert request.headers["X-Perf-Delivery"] == str(delivery.pk)
    expected = "sha256=" + hmac.new(SECRET.encode(), request.body, hashlib.sha256).hexdigest()
    assert request.headers["X-Perf-Signature"] == expected

    body = json.loads(request.body)
    assert body["event"] == "alerts.created"
    assert (body["app"], body["platform"], body["branch"], body["build"]) == (
        "com.example.shop", "android", "main", "4711")
    assert [a["metric"] for a in body["alerts"]] == ["startup.cold.ttid", "size.apk.download"]
    assert body["group"]["id"] == scene.group.pk
    assert body["commits"] == {"from": "a1b2c3d", "to": "e4f5a6b", "parent": "c0ffee1", "previous_build": "4710"}
    assert body["url"].startswith(BASE_URL)

    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.SENT and delivery.attempts == 1 and delivery.sent is not None
    attempt = DeliveryAttempt.objects.get(delivery=delivery)
    assert attempt.ok and attempt.error == ""


def test_it_signs_with_the_empty_key_when_no_secret_is_set(scene, http_server):
    channel = add_channel(scene.team, "webhook", url=http_server.url)
    attempt_delivery(delivery_for(channel).pk, final=False)
    request = http_server.requests[0]
    assert request.headers["X-Perf-Signature"] == "sha256=" + hmac.new(b"", request.body, hashlib.sha256).hexdigest()
    assert request.headers["X-Perf-Signature"] == sign("", request.body)


def test_it_retries_a_server_error(channel, http_server):
    http_server.reply(Reply(500, b"boom"))
    delivery = delivery_for(channel)
    outcome = attempt_delivery(delivery.pk, final=False)
    assert (outcome.done, outcome.retry, outcome.retry_after) == (False, True, None)
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.PENDING and delivery.attempts == 1
    assert "HTTP 500" in delivery.error
    attempt = DeliveryAttempt.objects.get(delivery=delivery)
    assert not attempt.ok and attempt.status_code == 500


def test_it_raises_transient_for_5xx_and_permanent_for_4xx(scene, channel, http_server):
    from alerts.notify.transports import TRANSPORTS

    transport = TRANSPORTS["webhook"]
    http_server.reply(Reply(503))
    with pytest.raises(TransientError) as info:
        transport.send(channel, {"event": "alerts.created"}, b"{}")
    assert info.value.status_code == 503
    for status in (400, 404, 410):
        http_server.reply(Reply(status))
        with pytest.raises(PermanentError) as perm:
            transport.send(channel, {"event": "alerts.created"}, b"{}")
        assert perm.value.status_code == status
    for status in (408, 429):
        http_server.reply(Reply(status))
        with pytest.raises(TransientError):
            transport.send(channel, {"event": "alerts.created"}, b"{}")


@pytest.mark.parametrize("status", [404, 410])
def test_it_fails_a_permanent_error_without_retry(channel, http_server, status):
    http_server.reply(Reply(status, b"gone"))
    delivery = delivery_for(channel)
    outcome = attempt_delivery(delivery.pk, final=False)
    assert (outcome.done, outcome.retry) == (True, False)
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.FAILED
    assert f"HTTP {status}" in delivery.error
    assert DeliveryAttempt.objects.get(delivery=delivery).status_code == status
    # Nothing more is sent for a failed delivery.
    assert attempt_delivery(delivery.pk, final=False).done
    assert len(http_server.requests) == 1


def test_it_treats_a_timeout_as_transient(settings, channel, http_server):
    settings.PERF_NOTIFY_TIMEOUT_SECONDS = 0.2
    http_server.reply(Reply(200, delay=1.0))
    delivery = delivery_for(channel)
    outcome = attempt_delivery(delivery.pk, final=False)
    assert outcome.retry and not outcome.done
    delivery.refresh_from_db()
    assert "timed out" in delivery.error
    assert DeliveryAttempt.objects.get(delivery=delivery).duration_ms < 1000


def test_it_treats_a_closed_port_as_transient(scene):
    from tests.notify.fixtures import free_port

    channel = add_channel(scene.team, "webhook", url=f"http://127.0.0.1:{free_port()}/hook", secret=SECRET)
    outcome = attempt_delivery(delivery_for(channel).pk, final=False)
    assert outcome.retry


def test_it_honours_retry_after(channel, http_server):
    http_server.reply(Reply(429, headers={"Retry-After": "120"}))
    outcome = attempt_delivery(delivery_for(channel).pk, final=False)
    assert outcome.retry and outcome.retry_after == 120.0


def test_it_fails_a_transient_error_on_the_final_attempt(channel, http_server):
    http_server.reply(Reply(502))
    delivery = delivery_for(channel)
    outcome = attempt_delivery(delivery.pk, final=True)
    assert (outcome.done, outcome.retry) == (True, False)
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.FAILED


def test_it_does_not_follow_redirects(channel, http_server):
    http_server.reply(Reply(301, headers={"Location": "http://127.0.0.1:1/elsewhere"}))
    delivery = delivery_for(channel)
    outcome = attempt_delivery(delivery.pk, final=False)
    assert not outcome.retry
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.FAILED and "redirect" in delivery.error


def test_it_flags_a_channel_after_three_failures_and_a_success_clears_it(channel, http_server):
    http_server.reply(Reply(500), Reply(500), Reply(500), Reply(200))
    delivery = delivery_for(channel)
    for n in (1, 2):
        assert attempt_delivery(delivery.pk, final=False).retry
        channel.refresh_from_db()
        assert (channel.consecutive_failures, channel.flagged) == (n, False)
        make_retry_due(Delivery, delivery.pk)
    assert attempt_delivery(delivery.pk, final=False).retry
    channel.refresh_from_db()
    assert (channel.consecutive_failures, channel.flagged) == (3, True)

    make_retry_due(Delivery, delivery.pk)
    assert attempt_delivery(delivery.pk, final=False).done
    channel.refresh_from_db()
    assert (channel.consecutive_failures, channel.flagged) == (0, False)
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.SENT and delivery.attempts == 4
    assert list(delivery.attempt_log.order_by("pk").values_list("ok", flat=True)) == [False, False, False, True]


def test_it_never_sends_a_sent_delivery_twice(channel, http_server):
    delivery = delivery_for(channel)
    assert attempt_delivery(delivery.pk, final=False).done
    again = attempt_delivery(delivery.pk, final=False)
    assert (again.done, again.retry) == (True, False)
    assert attempt_delivery(delivery.pk, final=True).done
    assert len(http_server.requests) == 1
    delivery.refresh_from_db()
    assert delivery.attempts == 1
    assert DeliveryAttempt.objects.filter(delivery=delivery).count() == 1
    assert Channel.objects.get(pk=channel.pk).consecutive_failures == 0


def test_it_parses_retry_after_in_seconds_or_as_a_date():
    from email.utils import format_datetime

    from django.utils import timezone

    from alerts.notify.transports.base import parse_retry_after

    assert parse_retry_after("30") == 30.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("-5") == 0.0
    in_a_minute = format_datetime(timezone.now() + timezone.timedelta(seconds=60), usegmt=True)
    assert 50 <= parse_retry_after(in_a_minute) <= 61


@pytest.mark.parametrize("url", ["", "ftp://example.com/hook", "http://127.0.0.1:99999/hook"])
def test_it_fails_a_bad_url_permanently(scene, url):
    channel = add_channel(scene.team, "webhook", url=url) if url else add_channel(scene.team, "webhook", secret="x")
    delivery = delivery_for(channel)
    assert not attempt_delivery(delivery.pk, final=False).retry
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.FAILED
