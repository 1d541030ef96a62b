"""Generic signed webhook (docs/API.md section 5): the JSON body POSTed as is, with an HMAC-SHA256 signature."""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING, Any

from alerts.notify.payload import EVENT
from alerts.notify.transports.base import PermanentError, Transport, post

if TYPE_CHECKING:
    from alerts.models import Channel

SIGNATURE_HEADER = "X-Perf-Signature"
EVENT_HEADER = "X-Perf-Event"
DELIVERY_HEADER = "X-Perf-Delivery"


def sign(secret: str, body: bytes) -> str:
    """`sha256=<hex HMAC-SHA256 of body>`; an unset secret signs with the empty key."""
    digest = hmac.new((secret or "").encode("utf-8"), body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


class WebhookTransport(Transport):
    kind = "webhook"

    def send(self, channel: Channel, payload: dict[str, Any], body: bytes, *, delivery_id: int | None = None) -> None:
        url = (channel.config or {}).get("url")
        if not url:
            raise PermanentError("webhook channel has no url")
        secret = (channel.config or {}).get("secret") or ""
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: sign(secret, body),
            EVENT_HEADER: payload.get("event", EVENT),
        }
        if delivery_id is not None:
            headers[DELIVERY_HEADER] = str(delivery_id)
        post(url, body, headers)
