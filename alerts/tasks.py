"""Celery tasks: thin wrappers that take ids and call plain functions. Queues: CELERY_TASK_ROUTES.

This is the one module that publishes tasks: importing it installs `publish` as the hand-off port's
publisher (alerts.handoff), through which domain modules queue their work.
"""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from alerts import analysis, handoff, premerge, sweeps
from alerts.bisection import ci, engine
from alerts.codehost import service as codehost
from alerts.notify import service

# Tasks whose only failure is a database blip: retried with backoff, acknowledged after they ran.
DB_RETRY = {"acks_late": True, "autoretry_for": (OperationalError, InterfaceError), "retry_backoff": 2,
            "retry_backoff_max": 120, "retry_jitter": True, "max_retries": 8}


@shared_task(**DB_RETRY)
def analyse_build(build_pk: int) -> str:
    return analysis.analyse_build_if_pending(build_pk)


@shared_task(acks_late=True, ignore_result=True)
def sweep_pending_analysis() -> int:
    """Periodic (beat): builds whose analysis hand-off was lost, groups left unsent, overdue waits."""
    return sweeps.run()


# A failed delivery or code-host post records when its retry is due in its row (`next_attempt`), and the row
# counts the attempts. With a broker the task retries itself at that time and the sweep re-publishes a retry
# the broker lost; without one (tasks in-process) a retry would run at once, countdown ignored, inside the
# request that failed, so there the task makes one attempt and `alerts.sweeps` re-publishes it when due.

@shared_task(bind=True, acks_late=True, max_retries=len(service.RETRY_DELAYS))
def deliver_notification(self, delivery_id: int) -> bool:
    outcome = service.attempt_delivery(delivery_id, final=service.retries_spent(delivery_id))
    if outcome.retry and not self.request.is_eager:
        raise self.retry(countdown=outcome.retry_in)
    return outcome.done


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=2,
    retry_backoff_max=120,
    retry_jitter=True,
    max_retries=8,
)
def compute_check(build_pk: int) -> str:
    return premerge.compute_check(build_pk)


@shared_task(bind=True, acks_late=True, max_retries=len(codehost.RETRY_DELAYS))
def post_check(self, post_pk: int) -> bool:
    outcome = codehost.attempt_post(post_pk, final=codehost.retries_spent(post_pk))
    if outcome.retry and not self.request.is_eager:
        raise self.retry(countdown=outcome.retry_in)
    return outcome.done


@shared_task(bind=True, acks_late=True, max_retries=ci.MAX_ATTEMPTS)
def send_run_request(self, request_pk: int) -> str:
    state, delay = ci.send(request_pk)
    if state == "retry" and not self.request.is_eager:  # in-process: `ci.unsent` finds it when due
        raise self.retry(countdown=delay)
    if state == "failed":
        engine.advance_request(request_pk)
    return state


@shared_task(**DB_RETRY)
def apply_requested_build(build_pk: int) -> str:
    return engine.apply_answer(build_pk)


_TASK_OF = {
    handoff.ANALYSIS: analyse_build,
    handoff.CHECK: compute_check,
    handoff.CODE_HOST_POST: post_check,
    handoff.DELIVERY: deliver_notification,
    handoff.RUN_REQUEST: send_run_request,
    handoff.REQUESTED_BUILD: apply_requested_build,
}
assert set(_TASK_OF) == handoff.KINDS, "every hand-off kind needs its task"


def publish(kind: str, pk: int) -> None:
    """Publish the task for one hand-off (in-process when CELERY_TASK_ALWAYS_EAGER, as in `make demo`)."""
    _TASK_OF[kind].apply_async(args=[pk])


handoff.install(publish)
