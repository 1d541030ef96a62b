"""Planning deliveries of an alert group and attempting them, with every attempt recorded.

The task in `alerts.tasks` calls `attempt_delivery(id, final=retries_spent(id))` and, when the outcome asks
for it, retries after `outcome.retry_in` seconds: `retry_delay(attempts - 1, retry_after)`, recorded in the row
as `next_attempt`. The row, not the broker, is the record of a planned retry: the periodic sweep re-publishes
one whose time has passed (`due_retries`: without a broker at once, with one after a grace, for a retry
the broker lost), and an attempt that comes before `next_attempt` sends nothing, so a duplicate is harmless.

Exactly-once as far as we can without holding a lock across the network: a sender claims the pending
delivery (`claimed_until`, set and committed under a row lock), sends with no transaction open, then
records the outcome. A task redelivered by the broker (acks_late) or a concurrent duplicate finds it
sent, or claimed and in flight, and sends nothing (it looks again after the claim lapses, which covers a
sender that died mid-send). A worker killed between the send and the record can still cause one
duplicate; receivers dedupe on `X-Perf-Delivery`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from alerts.models import Alert, AlertGroup, Channel, Delivery, DeliveryAttempt
from alerts.notify.payload import encode_payload, group_payload
from alerts.notify.repeats import mark_sent, repeat_reason
from alerts.notify.transports import TRANSPORTS
from alerts.notify.transports.base import DeliveryError, PermanentError, TransientError
from metrics.models import Series

log = logging.getLogger(__name__)

RETRY_DELAYS: tuple[int, ...] = (10, 60, 300, 1800)
MAX_RETRY_DELAY = 6 * 3600.0
ERROR_LIMIT = 2000


@dataclass(frozen=True)
class AttemptOutcome:
    done: bool  # nothing more to do for this delivery (sent, failed, or skipped)
    retry: bool  # a transient failure: try again later
    retry_after: float | None = None  # what the server asked for (Retry-After), if anything
    retry_in: float | None = None  # seconds until the retry is due (the row's next_attempt), when retry


def retry_delay(attempt: int, retry_after: float | None, delays: tuple[int, ...] = RETRY_DELAYS) -> float:
    """Seconds before retry number `attempt` (0-based): the backoff `delays`, or the server's Retry-After when
    it asks for longer (at most MAX_RETRY_DELAY). A minimum, not a replacement: a receiver answering
    Retry-After: 2 through a half-minute outage used up every attempt in 15 s, and the group's team was never
    told."""
    backoff = float(delays[min(max(attempt, 0), len(delays) - 1)])
    if retry_after is not None and retry_after >= 0:
        return float(min(max(retry_after, backoff), MAX_RETRY_DELAY))
    return backoff


#: An attempt this early (seconds) before its row's next_attempt still counts as due (clocks and countdowns).
EARLY_SECONDS = 2.0


def retries_spent(delivery_id: int) -> bool:
    """Whether the next attempt of a delivery is its last (the task's `final`), read from the row: a retry the
    sweep re-published starts the task's own count afresh, the row's count does not."""
    attempts = Delivery.objects.filter(pk=delivery_id).values_list("attempts", flat=True).first()
    return attempts is not None and attempts >= len(RETRY_DELAYS)


def due_retries(grace_seconds: float = 0.0, limit: int = 500) -> list[int]:
    """Pending deliveries that failed transiently and whose retry was due more than `grace_seconds` ago. The
    periodic sweep re-publishes them: without a broker (grace 0) that is how they are retried; with one, a
    retry still pending after the grace is one the broker lost (a publish that failed, a restarted Redis).
    Rows from before `next_attempt` existed are due when their backoff after `last_attempt` is over."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=grace_seconds)
    rows = (Delivery.objects.filter(status=Delivery.Status.PENDING, attempts__gt=0, last_attempt__isnull=False)
            .exclude(claimed_until__gt=now).exclude(next_attempt__gt=cutoff).order_by("last_attempt")
            .values_list("pk", "attempts", "last_attempt", "next_attempt"))
    return [pk for pk, attempts, last, due in rows[:limit]
            if (due or last + timedelta(seconds=retry_delay(attempts - 1, None))) <= cutoff]


def flag_after() -> int:
    return int(getattr(settings, "PERF_CHANNEL_FLAG_AFTER", 3))


def plan_deliveries(group_id: int) -> list[int]:
    """One Delivery per channel of the group's team (idempotent); returns the ids still pending.

    A group that only repeats what was already sent (``repeats``: a moved alert, a drift that has not
    grown much) is marked notified with the reason in ``not_sent`` and gets no deliveries."""
    with transaction.atomic():
        locked = _lock_alerts_of(group_id)
        group = AlertGroup.objects.select_for_update().filter(pk=group_id).first()
        if group is None:
            return []
        live = list(group.alerts.exclude(detection=Alert.Detection.WITHDRAWN)
                    .exclude(confirmation=Alert.Confirmation.NOT_REPRODUCED).select_related("build", "first_build"))
        if not live and not group.budget_alerts.exists():
            return []
        if group.not_sent:
            return []
        reason = repeat_reason(group, live) if group.notified is None else ""
        if reason:
            AlertGroup.objects.filter(pk=group.pk, notified__isnull=True).update(notified=timezone.now(),
                                                                                 not_sent=reason)
            return []
        for channel in Channel.objects.active().filter(team_id=group.team_id).order_by("pk"):
            Delivery.objects.get_or_create(group=group, channel=channel)
        if AlertGroup.objects.filter(pk=group.pk, notified__isnull=True).update(notified=timezone.now()):
            # An alert that joined the group while planning waited for the locks is marked only if its row is
            # free: waiting for it now, holding the group, could close the cycle the lock order avoids.
            joined = [a.pk for a in live if a.pk not in locked]
            if joined:
                locked |= set(Alert.objects.select_for_update(no_key=True, skip_locked=True).filter(pk__in=joined)
                              .values_list("pk", flat=True))
            mark_sent([a for a in live if a.pk in locked])
        return list(
            Delivery.objects.filter(group=group, status=Delivery.Status.PENDING)
            .order_by("pk")
            .values_list("pk", flat=True)
        )


def _lock_alerts_of(group_id: int) -> set[int]:
    """Lock the group's series, then its alerts in key order, before the group itself: the order analysis
    (series, alerts, then groups) and triage (alerts by key, then groups) take them. Planning took the group
    first and then wrote its alerts (`mark_sent`), so it deadlocked with the analysis of the next build, which
    holds those alerts and then refreshes the group (seen with two worker processes on PostgreSQL).
    Returns the ids locked."""
    rows = list(Alert.objects.filter(group_id=group_id).values_list("pk", "series_id"))
    if not rows:
        return set()
    list(Series.objects.select_for_update(no_key=True).filter(pk__in={sid for _, sid in rows}).order_by("pk")
         .values_list("pk", flat=True))
    return set(Alert.objects.select_for_update(no_key=True).filter(pk__in=[pk for pk, _ in rows]).order_by("pk")
               .values_list("pk", flat=True))


def _channel_failed(channel_id: int) -> None:
    Channel.objects.filter(pk=channel_id).update(consecutive_failures=F("consecutive_failures") + 1)
    Channel.objects.filter(pk=channel_id, consecutive_failures__gte=flag_after(), flagged=False).update(flagged=True)


def _channel_ok(channel_id: int) -> None:
    Channel.objects.filter(pk=channel_id).exclude(consecutive_failures=0, flagged=False).update(
        consecutive_failures=0, flagged=False
    )


def claim_seconds() -> float:
    """How long a claimed delivery is left to its sender: the send's timeout with a generous margin."""
    return float(getattr(settings, "PERF_NOTIFY_TIMEOUT_SECONDS", 10)) * 3 + 30


def take_claim(row, seconds: float) -> AttemptOutcome | None:
    """Claim a pending row locked by the caller (a Delivery or a CodeHostPost: `claimed_until`, `next_attempt`)
    for `seconds` and save it; or say why not: another sender holds it (look again once the claim would have
    lapsed), or its planned retry is not due (a duplicate, e.g. a re-published retry the broker still held:
    the planned retry sends it)."""
    now = timezone.now()
    if row.claimed_until is not None and row.claimed_until > now:
        wait = (row.claimed_until - now).total_seconds()
        return AttemptOutcome(done=False, retry=True, retry_after=wait, retry_in=wait)
    if row.next_attempt is not None and row.next_attempt > now + timedelta(seconds=EARLY_SECONDS):
        return AttemptOutcome(done=False, retry=False)
    row.claimed_until = now + timedelta(seconds=seconds)
    row.save(update_fields=["claimed_until"])
    return None


def _claim(delivery_id: int) -> tuple[Delivery, Channel, AlertGroup] | AttemptOutcome:
    """Lock the pending delivery just long enough to mark it claimed, then commit."""
    with transaction.atomic():
        delivery = Delivery.objects.select_for_update().filter(pk=delivery_id).first()
        if delivery is None or delivery.status != Delivery.Status.PENDING:
            return AttemptOutcome(done=True, retry=False)
        refused = take_claim(delivery, claim_seconds())
        if refused is not None:
            return refused
        return delivery, Channel.objects.get(pk=delivery.channel_id), AlertGroup.objects.get(pk=delivery.group_id)


def attempt_delivery(delivery_id: int, *, final: bool) -> AttemptOutcome:
    """Send one delivery once, record the attempt, and say whether to retry.

    Claim (a short transaction), send with no transaction or row lock held (a slow webhook must not hold
    database locks or a connection's transaction open), then record the outcome in a second transaction.
    """
    claimed = _claim(delivery_id)
    if isinstance(claimed, AttemptOutcome):
        return claimed
    delivery, channel, group = claimed

    payload = group_payload(group, base_url=settings.PERF_BASE_URL)
    started = time.monotonic()
    error: DeliveryError | None = None
    counts_against_channel = True
    if not payload["alerts"]:
        error = PermanentError("nothing to send: every alert of the group was withdrawn")
        counts_against_channel = False
    else:
        transport = TRANSPORTS.get(channel.kind)
        try:
            if transport is None:
                raise PermanentError(f"no transport for channel kind {channel.kind!r}")
            transport.send(channel, payload, encode_payload(payload), delivery_id=delivery.pk)
        except DeliveryError as exc:
            error = exc
        except Exception as exc:  # a bug or an unforeseen library error: record it, retry like transient
            log.exception("delivery %s to channel %s failed unexpectedly", delivery.pk, channel.pk)
            error = TransientError(f"unexpected error: {exc.__class__.__name__}: {exc}")
    duration_ms = int((time.monotonic() - started) * 1000)
    return _record(delivery.pk, channel, error, duration_ms, final=final, counts_against_channel=counts_against_channel)


def _record(delivery_id: int, channel: Channel, error: DeliveryError | None, duration_ms: int, *, final: bool,
            counts_against_channel: bool) -> AttemptOutcome:
    with transaction.atomic():
        delivery = Delivery.objects.select_for_update().get(pk=delivery_id)
        now = timezone.now()
        DeliveryAttempt.objects.create(
            delivery=delivery,
            ok=error is None,
            status_code=error.status_code if error is not None else None,
            error=str(error)[:ERROR_LIMIT] if error is not None else "",
            duration_ms=duration_ms,
        )
        delivery.attempts += 1
        delivery.last_attempt = now
        delivery.claimed_until = None
        delivery.next_attempt = None
        if error is None:
            delivery.status = Delivery.Status.SENT
            delivery.sent = now
            delivery.error = ""
            outcome = AttemptOutcome(done=True, retry=False)
        else:
            delivery.error = str(error)[:ERROR_LIMIT]
            retry_after = error.retry_after if isinstance(error, TransientError) else None
            if isinstance(error, TransientError) and not final:
                wait = retry_delay(delivery.attempts - 1, retry_after)
                delivery.next_attempt = now + timedelta(seconds=wait)
                outcome = AttemptOutcome(done=False, retry=True, retry_after=retry_after, retry_in=wait)
            else:
                delivery.status = Delivery.Status.FAILED
                outcome = AttemptOutcome(done=True, retry=False, retry_after=retry_after)
        delivery.save(update_fields=["attempts", "last_attempt", "status", "sent", "error", "claimed_until",
                                     "next_attempt"])

        if error is None:
            _channel_ok(channel.pk)
        elif counts_against_channel:
            _channel_failed(channel.pk)
            log.warning("delivery %s to %s channel %s failed: %s", delivery.pk, channel.kind, channel.pk, error)
        return outcome
