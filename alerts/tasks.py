"""Celery tasks: thin wrappers that take ids and call plain functions. Queues: CELERY_TASK_ROUTES."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from alerts import analysis, dispatch


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=2,
    retry_backoff_max=120,
    retry_jitter=True,
    max_retries=8,
)
def analyse_build(build_pk: int) -> str:
    return analysis.analyse_build(build_pk)


@shared_task(acks_late=True, ignore_result=True)
def sweep_pending_analysis() -> int:
    return dispatch.sweep()
