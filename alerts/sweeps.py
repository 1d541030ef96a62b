"""The periodic sweep: the outboxes' lost hand-offs, overdue waits, and, without a broker, due retries.

Under Celery, beat runs `alerts.tasks.sweep_pending_analysis` and the broker holds each failed attempt's
retry until its countdown. With tasks in-process (REDIS_URL unset: `make demo`, the embedded SQLite set-up)
there is neither: `perfplatform.inprocess` runs this sweep on a timer in the web process, and a failed
delivery, code-host post or run request waits in its row until the sweep finds its backoff over
(`due_retries`), instead of being retried at once in the request that failed.
"""

from __future__ import annotations

import logging

from alerts import dispatch, handoff, notifications, premerge
from alerts.codehost import service as codehost
from alerts.notify import service

log = logging.getLogger(__name__)


def run(*, due_retries: bool = False) -> int:
    """One sweep; returns how many pieces of work it handed over. ``due_retries``: also re-publish the failed
    deliveries and code-host posts whose backoff is over (only where no broker holds their retries)."""
    done = dispatch.sweep() + dispatch.sweep_bisection() + notifications.notify_stale_groups() + premerge.sweep()
    if due_retries:
        for kind, pks in ((handoff.DELIVERY, service.due_retries()), (handoff.CODE_HOST_POST, codehost.due_retries())):
            for pk in pks:
                try:
                    handoff.publish(kind, pk)
                    done += 1
                except Exception:
                    log.exception("could not re-publish %s %s; the next sweep will", kind, pk)
    return done
