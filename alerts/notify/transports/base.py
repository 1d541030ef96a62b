"""The transport contract, its two kinds of failure, and a small urllib-based HTTP poster.

A transport either returns (delivered) or raises:
- PermanentError: retrying cannot help (4xx other than 408/429, redirects, bad channel config);
- TransientError: it may work later (timeouts, connection errors, 5xx, 408, 429), maybe with the
  server's Retry-After.
"""

from __future__ import annotations

import email.utils
import http.client
import time
import urllib.error
import urllib.parse
import urllib.request
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


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102 - urllib hook
        return None  # surfaces as HTTPError(3xx), classified as permanent


def _snippet(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return text[:200]


def post(url: str, body: bytes, headers: dict[str, str], *, timeout: float | None = None) -> int:
    """POST `body` to `url`; return the 2xx status or raise PermanentError / TransientError."""
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise PermanentError(f"channel URL is not an http(s) URL: {url!r}")
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError when out of range
    except ValueError as exc:
        raise PermanentError(f"bad channel URL: {exc}") from None
    if not parts.hostname:
        raise PermanentError(f"channel URL has no host: {url!r}")
    from alerts.notify.destinations import check_destination  # imports this module's errors

    check_destination(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("User-Agent", USER_AGENT)
    for name, value in headers.items():
        request.add_header(name, value)
    opener = urllib.request.build_opener(_NoRedirect)
    limit = timeout_seconds() if timeout is None else timeout
    started = time.monotonic()
    try:
        with opener.open(request, timeout=limit) as response:
            response.read(64 * 1024)
            return response.status
    except urllib.error.HTTPError as exc:
        try:
            detail = _snippet(exc.read(2048))
        except Exception:  # the body of an error answer is only informative
            detail = ""
        finally:
            exc.close()
        raise error_for_status(exc.code, detail or str(exc.reason or ""), exc.headers) from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            raise TransientError(f"timed out after {time.monotonic() - started:.1f}s connecting to {url}") from None
        if isinstance(reason, str) and "unknown url type" in reason:
            raise PermanentError(f"bad channel URL: {reason}") from None
        raise TransientError(f"cannot connect: {reason}") from None
    except TimeoutError:
        raise TransientError(f"timed out after {time.monotonic() - started:.1f}s waiting for {url}") from None
    except (http.client.HTTPException, OSError) as exc:
        raise TransientError(f"connection error: {exc.__class__.__name__}: {exc}") from None
    except ValueError as exc:  # malformed URL (bad port, control characters)
        raise PermanentError(f"bad channel URL: {exc}") from None
