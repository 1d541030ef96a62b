"""The `runs.requested` call to an app's CI: body, signature, the one outbound HTTP function.

Body exactly as docs/API.md section 7; header ``X-Perf-Signature: sha256=<HMAC-SHA256 of the body with the
app's CI secret>`` (the webhook scheme of section 5). Each attempt is appended to the request's
``attempt_log``; the secret is never logged or stored anywhere else.
"""

from __future__ import annotations

import json
import math
import time
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from alerts.models import RunRequest
from alerts.notify.service import EARLY_SECONDS
from alerts.notify.service import retry_delay as notify_retry_delay
from alerts.notify.transports.base import DeliveryError, PermanentError, TransientError, timeout_seconds
from alerts.notify.transports.webhook import SIGNATURE_HEADER, sign

EVENT = "runs.requested"
USER_AGENT = "perfplatform-bisect/1"
MAX_ATTEMPTS = 6
RETRY_DELAYS = (10, 60, 300, 900, 1800)


def ci_of(app) -> object | None:
    """The app's AppIntegration when it has a CI endpoint (a missing row reads as None: the related
    object's DoesNotExist is an AttributeError)."""
    integration = getattr(app, "integration", None) if app is not None else None
    return integration if integration is not None and getattr(integration, "ci_url", "") else None


def request_body(rr: RunRequest) -> dict:
    s = rr.alert.series
    return {
        "event": EVENT, "request": rr.public_id, "reason": rr.reason, "alert": rr.alert_id,
        "app": s.app.name, "platform": s.platform, "branch": s.branch, "device": s.device,
        "commit": rr.commit, "build": rr.build_ext_id, "runs": rr.runs, "metrics": list(rr.metrics),
    }


def encode(body: dict) -> bytes:
    return json.dumps(body, separators=(",", ":"), sort_keys=False).encode("utf-8")


def http_post(url: str, body: bytes, headers: dict[str, str], *, timeout: float) -> int:
    """All of bisection's outbound HTTP: alerts.outbound.send (one SSRF-checked resolution, the connection
    pinned to the checked address, no redirects); returns the 2xx status or raises a DeliveryError."""
    from alerts.notify.transports.base import error_for_status
    from alerts.outbound import send as outbound_send

    response = outbound_send("POST", url, body=body, headers={"User-Agent": USER_AGENT, **headers}, timeout=timeout)
    if 200 <= response.status < 300:
        return response.status
    detail = response.body[:200].decode("utf-8", "replace").strip()
    raise error_for_status(response.status, detail, response.headers)


def retry_delay(attempts: int, retry_after: float | None = None) -> int:
    """Seconds before the retry after attempt number `attempts` (1-based): this module's backoff, or CI's
    Retry-After when it asks for longer, as notifications wait (`notify.service.retry_delay`)."""
    return int(math.ceil(notify_retry_delay(attempts - 1, retry_after, RETRY_DELAYS)))


def claim_seconds() -> float:
    """How long a claimed request is left to its sender: the POST's timeout with a generous margin."""
    return timeout_seconds() * 3 + 30


def send(request_id: int) -> tuple[str, int | None]:
    """POST one request once. Returns ("sent"|"retry"|"failed"|"done"|"waiting", seconds to wait before a retry);
    "waiting": its retry is not due yet (a duplicate task; the planned retry sends it).

    Claim, send, record, as notification deliveries do: the request is claimed (`claimed_until`, set and
    committed under a row lock), POSTed with no transaction or lock held (a slow CI endpoint must hold no
    database lock), then the outcome is recorded under the lock again. A redelivered task finds it sent,
    or claimed and in flight, and sends nothing; a claim lapses, so a sender that died mid-POST is covered.
    A worker killed between the POST and the record can cause one duplicate; CI dedupes on the request id.
    """
    with transaction.atomic():
        rr = (RunRequest.objects.select_for_update(of=("self",))
              .select_related("alert__series__app", "app").filter(pk=request_id).first())
        if rr is None or rr.state != RunRequest.State.REQUESTED or rr.sent is not None:
            return "done", None
        now = timezone.now()
        if rr.claimed_until is not None and rr.claimed_until > now:
            return "retry", max(1, int((rr.claimed_until - now).total_seconds()) + 1)
        if not _retry_due(rr.attempts, rr.attempt_log, now + timedelta(seconds=EARLY_SECONDS)):
            return "waiting", None  # a duplicate (the sweep re-published a retry the broker holds): it sends
        rr.claimed_until = now + timedelta(seconds=claim_seconds())
        rr.save(update_fields=["claimed_until"])
        integration = ci_of(rr.app)
        url = integration.ci_url if integration is not None else ""
        body = encode(request_body(rr))
        headers = ({"Content-Type": "application/json", SIGNATURE_HEADER: sign(integration.ci_secret, body),
                    "X-Perf-Event": EVENT, "X-Perf-Request": rr.public_id} if url else {})

    started = time.monotonic()
    error: DeliveryError | None = None
    status: int | None = None
    if not url:
        error = PermanentError("the app has no CI endpoint any more")
    else:
        try:
            status = http_post(url, body, headers, timeout=timeout_seconds())
        except DeliveryError as exc:
            error = exc
        except Exception as exc:  # an unforeseen library error: recorded, retried like a transient one
            error = TransientError(f"unexpected error: {exc.__class__.__name__}: {exc}")
    elapsed_ms = int((time.monotonic() - started) * 1000)

    with transaction.atomic():
        rr = RunRequest.objects.select_for_update().filter(pk=request_id).first()
        if rr is None:
            return "done", None
        now = timezone.now()
        rr.attempts += 1
        rr.claimed_until = None
        entry = {"at": now.isoformat(), "ok": error is None, "status": status if error is None else error.status_code,
                 "error": str(error)[:500] if error is not None else "", "ms": elapsed_ms}
        wait = retry_delay(rr.attempts, error.retry_after) if isinstance(error, TransientError) else None
        if wait is not None:
            entry["retry_at"] = (now + timedelta(seconds=wait)).isoformat()
        rr.attempt_log = [*rr.attempt_log, entry]
        fields = ["attempts", "attempt_log", "claimed_until", "error"]
        if error is None:
            rr.sent, rr.error = now, ""
            rr.save(update_fields=[*fields, "sent"])
            return "sent", None
        rr.error = str(error)[:2000]
        if rr.state != RunRequest.State.REQUESTED:  # expired while we were sending: nothing more to do
            rr.save(update_fields=fields)
            return "done", None
        if wait is not None and rr.attempts < MAX_ATTEMPTS:
            rr.save(update_fields=fields)
            return "retry", wait
        rr.state, rr.outcome = RunRequest.State.FAILED, "not delivered"
        rr.save(update_fields=[*fields, "state", "outcome"])
        return "failed", None


def unsent(min_age_seconds: int) -> list[int]:
    """Requests still to be POSTed whose last hand-off is older than `min_age_seconds` and, after a failed
    attempt, whose backoff (`retry_delay`) has run out: a request waiting for its retry is not sent early."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=min_age_seconds)
    qs = RunRequest.objects.filter(state=RunRequest.State.REQUESTED, sent__isnull=True, created__lte=cutoff)
    return [pk for pk, attempts, log in qs.order_by("pk").values_list("pk", "attempts", "attempt_log")[:500]
            if _retry_due(attempts, log, now)]


def _retry_due(attempts: int, log: list[dict], now) -> bool:
    """Whether the retry after the last recorded attempt is due at `now`: its `retry_at` (backoff or CI's
    Retry-After), or for entries written before that was recorded, the backoff after its `at`."""
    if not attempts or not log:
        return True
    try:
        if "retry_at" in log[-1]:
            return datetime.fromisoformat(log[-1]["retry_at"]) <= now
        last = datetime.fromisoformat(log[-1]["at"])
    except (KeyError, TypeError, ValueError):
        return True
    return last + timedelta(seconds=retry_delay(attempts)) <= now
