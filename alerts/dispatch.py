"""Handing committed builds to the analysis queue, and finding the ones that never got there."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from alerts import handoff
from metrics.models import Build, Scope

log = logging.getLogger(__name__)


def queue_analysis(build_pk: int) -> None:
    """Publish the analysis task; the build row is the outbox, so a failed publish is retried by the sweep."""
    queued_at = timezone.now()
    handoff.publish(handoff.ANALYSIS, build_pk)
    # Marked only once the broker took the task: a failed publish leaves the build for the sweep.
    Build.objects.filter(pk=build_pk, analysis=Build.Analysis.PENDING).update(analysis_queued=queued_at)


def pending_builds(*, min_age_seconds: int | None = None, limit: int = 500) -> list[int]:
    """Builds still pending whose last hand-off is older than `min_age_seconds` (or never happened)."""
    age = settings.PERF_SWEEP_MIN_AGE_SECONDS if min_age_seconds is None else min_age_seconds
    cutoff = timezone.now() - timedelta(seconds=age)
    # Only branch builds are analysed after merge; pull-request and requested builds have their own sweeps.
    qs = Build.objects.filter(analysis=Build.Analysis.PENDING, role=Scope.BRANCH).filter(
        Q(analysis_queued__isnull=True) | Q(analysis_queued__lte=cutoff)
    )
    return list(qs.order_by("analysis_requested").values_list("pk", flat=True)[:limit])


def sweep(*, min_age_seconds: int | None = None) -> int:
    """Re-queue stale pending builds; returns how many were handed over."""
    queued = 0
    for pk in pending_builds(min_age_seconds=min_age_seconds):
        try:
            queue_analysis(pk)
            queued += 1
        except Exception:
            log.exception("broker unavailable; pending builds are left for the next sweep")
            break
    return queued


def queue_run_request(request_pk: int) -> None:
    """Publish the POST of one run request; an unsent request row is the outbox (the sweep re-publishes)."""
    handoff.publish(handoff.RUN_REQUEST, request_pk)


def queue_requested_build(build_pk: int) -> None:
    """Hand a committed requested build (CI's answer to a run request) to the bisection that asked for it;
    the build stays pending until applied, so a lost hand-off is found by the sweep."""
    handoff.publish(handoff.REQUESTED_BUILD, build_pk)
    Build.objects.filter(pk=build_pk, analysis=Build.Analysis.PENDING).update(analysis_queued=timezone.now())


def sweep_bisection(*, min_age_seconds: int | None = None) -> int:
    """Re-publish unsent run requests and lost answers, expire unanswered requests, start missed bisections."""
    from alerts.bisection import ci, engine

    age = settings.PERF_SWEEP_MIN_AGE_SECONDS if min_age_seconds is None else min_age_seconds
    done = engine.expire() + engine.start_pending()
    try:
        for pk in ci.unsent(age):
            queue_run_request(pk)
            done += 1
        for pk in engine.pending_answers(age):
            queue_requested_build(pk)
            done += 1
    except Exception:
        log.exception("broker unavailable; run requests and answers are left for the next sweep")
    return done


def branch_build_committed(build_pk: int) -> None:
    """The hook for committed branch builds: wake the pre-merge checks waiting for this build as their
    merge-base (one indexed query), then queue its analysis."""
    from alerts import premerge

    try:
        premerge.wake_waiting(build_pk)
    except Exception:  # the sweep settles waiting checks anyway; the analysis must still be queued
        log.exception("could not wake checks waiting for build %s; the sweep will", build_pk)
    queue_analysis(build_pk)
