"""The transport contract, its two kinds of failure, and a small urllib-based HTTP poster.

A transport either returns (delivered) or raises:
- PermanentError: retrying cannot help (4xx other than 408/429, redirects, bad channel config);
- TransientError: it may work later (timeouts, connection errors, 5xx, 408, 429), maybe with the
  server's Retry-After.
"""

from __future__ import annotations

import email.utils
from abc import ABC, abstractmethod
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings

if TYPE_CHECKING:
    from alerts.models import Channel

USER_AGENT = "perfplatform-notify/1"
MAX_RETRY_AFTER = 6 * 3600.0


class DeliveryError(Exception):
    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code

    def __str__(self) -> str:
        return self.message


class PermanentError(DeliveryError):
    """The channel rejected the notification or is misconfigured: do not retry."""


class TransientError(DeliveryError):
    """The channel could not be reached or is overloaded: retry later (after `retry_after` if given)."""

    def __init__(self, message: str, status_code: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message, status_code)
        self.retry_after = retry_after


class Transport(ABC):
    """One kind of channel. Stateless: one instance serves every channel of its kind."""

    kind: str

    @abstractmethod
    def send(self, channel: Channel, payload: dict[str, Any], body: bytes, *, delivery_id: int | None = None) -> None:
        """Deliver `payload` (whose exact JSON encoding is `body`) to `channel`, or raise a DeliveryError."""


def timeout_seconds() -> float:
    return float(getattr(settings, "PERF_NOTIFY_TIMEOUT_SECONDS", 10))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date); None if absent or invalid."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def error_for_status(status: int, reason: str, headers: Any = None) -> DeliveryError:
    """Classify a non-2xx HTTP answer."""
    message = f"HTTP {status}" + (f": {reason}" if reason else "")
    if status in (408, 429) or status >= 500:
        retry_after = parse_retry_after(headers.get("Retry-After")) if headers is not None else None
        return TransientError(message, status_code=status, retry_after=retry_after)
    if 300 <= status < 400:
        return PermanentError(message + " (redirects are not followed; fix the channel URL)", status_code=status)
    if 400 <= status < 500:
        return PermanentError(message, status_code=status)
    return TransientError(message, status_code=status)


def _snippet(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return text[:200]


def post(url: str, body: bytes, headers: dict[str, str], *, timeout: float | None = None) -> int:
    """POST `body` to `url` through the pinned, SSRF-checked connection of alerts/outbound.py; return the
    2xx status or raise PermanentError / TransientError (redirects are not followed: permanent)."""
    from alerts.outbound import send  # imports this module's errors

    limit = timeout_seconds() if timeout is None else timeout
    response = send("POST", url, body=body, headers={"User-Agent": USER_AGENT, **headers}, timeout=limit)
    if 200 <= response.status < 300:
        return response.status
    raise error_for_status(response.status, _snippet(response.body[:2048]), response.headers)
