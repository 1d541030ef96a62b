"""Celery tasks: thin wrappers that take ids and call plain functions. Queues: CELERY_TASK_ROUTES."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from alerts import analysis, dispatch, notifications, premerge
from alerts.codehost import service as codehost
from alerts.notify import service


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=2,
    retry_backoff_max=120,
    retry_jitter=True,
    max_retries=8,
)
def analyse_build(build_pk: int) -> str:
    return analysis.analyse_build_if_pending(build_pk)


@shared_task(acks_late=True, ignore_result=True)
def sweep_pending_analysis() -> int:
    """Periodic (beat): builds whose analysis hand-off was lost, groups left unsent."""
    return dispatch.sweep() + notifications.notify_stale_groups() + premerge.sweep()


@shared_task(bind=True, acks_late=True, max_retries=len(service.RETRY_DELAYS))
def deliver_notification(self, delivery_id: int) -> bool:
    outcome = service.attempt_delivery(delivery_id, final=self.request.retries >= len(service.RETRY_DELAYS))
    if outcome.retry:
        raise self.retry(countdown=service.retry_delay(self.request.retries, outcome.retry_after))
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
    outcome = codehost.attempt_post(post_pk, final=self.request.retries >= len(codehost.RETRY_DELAYS))
    if outcome.retry:
        raise self.retry(countdown=service.retry_delay(self.request.retries, outcome.retry_after))
    return outcome.done
