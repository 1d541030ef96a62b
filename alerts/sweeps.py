"""The periodic sweep: the outboxes' lost hand-offs, overdue waits, and due retries.

Under Celery, beat runs `alerts.tasks.sweep_pending_analysis` and the broker holds each failed attempt's
retry until its countdown; a retry still pending a grace (PERF_SWEEP_MIN_AGE_SECONDS) after it was due is
one the broker lost (its publish failed, Redis restarted), and the sweep re-publishes it. With tasks
in-process (REDIS_URL unset: `make demo`, the embedded SQLite set-up) there is no broker: `perfplatform.inprocess`
runs this sweep on a timer in the web process, and a failed delivery, code-host post or run request waits in
its row until the sweep finds it due (no grace), instead of being retried at once in the request that failed.
A retry re-published twice sends once: an attempt before the row's `next_attempt` sends nothing.
"""

from __future__ import annotations

import logging

from django.conf import settings

from alerts import dispatch, handoff, notifications, premerge
from alerts.codehost import service as codehost
from alerts.notify import service

log = logging.getLogger(__name__)


def run(*, in_process: bool = False) -> int:
    """One sweep; returns how many pieces of work it handed over. ``in_process``: no broker holds retries, so
    every due retry is re-published at once; otherwise only those the broker lost (due for over a grace)."""
    done = dispatch.sweep() + dispatch.sweep_bisection() + notifications.notify_stale_groups() + premerge.sweep()
    grace = 0 if in_process else settings.PERF_SWEEP_MIN_AGE_SECONDS
    for kind, due in ((handoff.DELIVERY, service.due_retries), (handoff.CODE_HOST_POST, codehost.due_retries)):
        for pk in due(grace):
            try:
                handoff.publish(kind, pk)
                done += 1
            except Exception:
                log.exception("could not re-publish %s %s; the next sweep will", kind, pk)
                break
    return done
