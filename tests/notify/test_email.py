import email
import email.policy

import pytest
from aiosmtpd.controller import Controller

from alerts.models import Delivery, DeliveryAttempt
from alerts.notify.service import attempt_delivery
from tests.notify.fixtures import BASE_URL, add_channel, delivery_for, free_port

pytestmark = pytest.mark.django_db

TO = ["startup-perf@example.com", "oncall@example.com"]


class Collector:
    def __init__(self):
        self.envelopes = []
        self.data_reply = "250 OK"
        self.refuse = set()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802 - aiosmtpd hook
        if address in self.refuse:
            return "550 5.1.1 no such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd hook
        if self.data_reply.startswith("250"):
            self.envelopes.append(envelope)
        return self.data_reply


@pytest.fixture
def smtp(settings):
    handler = Collector()
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = port
    settings.EMAIL_USE_TLS = False
    settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = ""
    settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_TIMEOUT = 5
    settings.DEFAULT_FROM_EMAIL = "perf@example.com"
    yield handler
    controller.stop()


def _parts(message):
    text = message.get_body(preferencelist=("plain",)).get_content()
    html = message.get_body(preferencelist=("html",)).get_content()
    return text, html


def test_it_emails_the_team(scene, smtp):
    channel = add_channel(scene.team, "email", to=TO)
    delivery = delivery_for(channel)
    outcome = attempt_delivery(delivery.pk, final=False)
    assert (outcome.done, outcome.retry) == (True, False)

    assert len(smtp.envelopes) == 1
    envelope = smtp.envelopes[0]
    assert sorted(envelope.rcpt_tos) == sorted(TO)
    assert envelope.mail_from == "perf@example.com"
    message = email.message_from_bytes(envelope.content, policy=email.policy.default)
    assert message["Subject"] == "[perf] 1 regression, 1 improvement in com.example.shop android main build 4711"
    assert message["X-Perf-Delivery"] == str(delivery.pk)
    text, html = _parts(message)
    group_url = f"{BASE_URL}/alerts/{scene.group.pk}/"
    assert "startup.cold.ttid (pixel-6): 400 ms → 480 ms (+20.0%)" in text
    assert "a1b2c3d..e4f5a6b" in text
    assert group_url in text
    assert "400 ms → 480 ms" in html and "+20.0%" in html and group_url in html
    assert "crash.rate" not in text and "crash.rate" not in html

    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.SENT


def test_it_fails_refused_recipients_permanently(scene, smtp):
    smtp.refuse = set(TO)
    channel = add_channel(scene.team, "email", to=TO)
    delivery = delivery_for(channel)
    outcome = attempt_delivery(delivery.pk, final=False)
    assert not outcome.retry
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.FAILED and "refused" in delivery.error
    assert DeliveryAttempt.objects.get(delivery=delivery).status_code == 550


def test_it_retries_a_temporary_smtp_error(scene, smtp):
    smtp.data_reply = "451 4.3.0 try again later"
    channel = add_channel(scene.team, "email", to=TO)
    outcome = attempt_delivery(delivery_for(channel).pk, final=False)
    assert outcome.retry


def test_it_fails_a_permanent_smtp_error(scene, smtp):
    smtp.data_reply = "554 5.7.1 rejected"
    channel = add_channel(scene.team, "email", to=TO)
    delivery = delivery_for(channel)
    assert not attempt_delivery(delivery.pk, final=False).retry
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.FAILED and "554" in delivery.error


def test_it_retries_when_the_smtp_server_is_down(scene, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = free_port()  # nothing listens there
    settings.EMAIL_TIMEOUT = 2
    channel = add_channel(scene.team, "email", to=TO)
    delivery = delivery_for(channel)
    outcome = attempt_delivery(delivery.pk, final=False)
    assert (outcome.done, outcome.retry) == (False, True)
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.PENDING and "SMTP connection error" in delivery.error


def test_it_fails_an_email_channel_without_recipients(scene, smtp):
    channel = add_channel(scene.team, "email", to=[])
    delivery = delivery_for(channel)
    assert not attempt_delivery(delivery.pk, final=False).retry
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.FAILED
    assert smtp.envelopes == []


def test_it_emails_the_culprit_and_the_crossed_budgets(scene, smtp):
    from tests.notify.test_payload import _with_culprit_and_budget

    _with_culprit_and_budget(scene)
    delivery = delivery_for(add_channel(scene.team, "email", to=TO))
    assert attempt_delivery(delivery.pk, final=False).done
    text, html = _parts(email.message_from_bytes(smtp.envelopes[0].content, policy=email.policy.default))
    assert "  culprit d00dfee (found by bisection)" in text
    assert "- size.apk.* over its 30,000,000 bytes budget: 30,408,704 bytes (+408,704 bytes)" in text
    assert "culprit d00dfee (found by bisection)" in html
    assert "<li>size.apk.* over its 30,000,000 bytes budget" in html
