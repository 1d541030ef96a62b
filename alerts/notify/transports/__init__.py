"""One transport per channel kind, looked up by `Channel.kind`."""

from __future__ import annotations

from alerts.notify.transports.base import DeliveryError, PermanentError, TransientError, Transport
from alerts.notify.transports.email import EmailTransport
from alerts.notify.transports.slack import SlackTransport
from alerts.notify.transports.webhook import WebhookTransport

TRANSPORTS: dict[str, Transport] = {t.kind: t for t in (WebhookTransport(), SlackTransport(), EmailTransport())}

__all__ = ["TRANSPORTS", "DeliveryError", "PermanentError", "TransientError", "Transport"]
