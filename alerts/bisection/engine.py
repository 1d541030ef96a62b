"""The bisection state machine: from a new alert to its culprit commit, confirmed or withdrawn.

Every step is a short transaction on the alert's `Bisection` row (locked), so concurrent answers take
turns. What to request next is `alerts.detection.bisect.decide` over the answered requests, so a step
that runs twice (a redelivered task) finds the same requests already there and creates nothing.

* `start_pending`: alerts of apps with a CI endpoint get a bisection (after each analysis and in the
  sweep). A one-commit range of a deterministic kind, or an app without CI, needs none: the alert
  just gets its `range_commits` (and its culprit when the range is one commit).
* `apply_answer`: a requested build arrived; it answers its request (same commit, the alert's metric),
  then `advance` decides.
* `advance`: the next requests (outbox rows, published after commit), or the outcome.
* `expire`: requests CI never answered within PERF_REQUEST_TIMEOUT_SECONDS end their bisection; the
  alert keeps the range narrowed so far. The daily budget (`ci_max_requests_per_day`) and a failed
  delivery end it the same way.
* `held`: groups whose notification waits for a running bisection (at most
  PERF_NOTIFY_BISECT_WAIT_SECONDS after it started).
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
from collections.abc import Iterable
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from alerts.bisection import ci
from alerts.bisection.ranges import culprit_range
from alerts.detection import Point
from alerts.detection.bisect import Observation, Reference, decide, is_thin, reference_for, request_bound
from alerts.models import Alert, AlertGroup, AppIntegration, Bisection, RunRequest
from metrics.history import recent_points
from metrics.models import Build, Measurement, Scope

log = logging.getLogger(__name__)

#: Requests one alert may make beyond the bound of a clear shift (unclear answers, confirmation).
EXTRA_REQUESTS = 4
HISTORY = 96
OUTCOME_TO_CONFIRMATION = {
    "bisected": Alert.Confirmation.BISECTED,
    "confirmed": Alert.Confirmation.CONFIRMED,
    "not_reproduced": Alert.Confirmation.NOT_REPRODUCED,
}


# --- starting ---------------------------------------------------------------------------------------------------

def start_pending(*, app_id: int | None = None) -> int:
    """Give every recent live alert without a bisection its range, and a bisection when its app has CI."""
    wait = timedelta(seconds=settings.PERF_NOTIFY_BISECT_WAIT_SECONDS)
    fresh = Q(bisection__isnull=True, range_commits__isnull=True)
    moved = Q(bisection__isnull=False) & ~Q(bisection__build_id=F("build_id"))  # the culprit was refined
    qs = (Alert.objects.filter(fresh | moved, created__gte=timezone.now() - max(wait, timedelta(days=1)),
                               series__scope=Scope.BRANCH)
          .exclude(detection=Alert.Detection.WITHDRAWN))
    if app_id is not None:
        qs = qs.filter(series__app_id=app_id)
    started = 0
    for pk in qs.order_by("pk").values_list("pk", flat=True)[:200]:
        try:
            started += start(pk)
        except Exception:
            log.exception("could not start the bisection of alert %s; the sweep will retry", pk)
    return started


def _reference(alert: Alert) -> Reference:
    s = alert.series
    hist = recent_points([s.pk], limit=HISTORY, until=alert.build.timestamp).get(s.pk, [])
    from alerts.analysis import to_points

    points: list[Point] = to_points(hist, s.metric.kind)
    return reference_for(s.metric.kind, alert.before, alert.after, (alert.before_ci_low, alert.before_ci_high),
                         (alert.after_ci_low, alert.after_ci_high), points)


def start(alert_pk: int) -> int:
    """Start (or restart, after its culprit moved) the bisection of one alert; 1 when one started."""
    with transaction.atomic():
        alert = (Alert.objects.select_for_update(of=("self",))
                 .select_related("series__app", "series__metric", "build", "previous_build").filter(pk=alert_pk).first())
        if alert is None or alert.detection == Alert.Detection.WITHDRAWN:
            return 0
        existing = Bisection.objects.filter(alert=alert).first()
        if existing is not None and existing.build_id == alert.build_id:
            return 0
        commits = culprit_range(alert)
        n = len(commits) - 1 if commits else None
        alert.range_commits = n
        alert.culprit_commit = commits[1] if n == 1 else ""
        alert.confirmation = Alert.Confirmation.NONE
        has_ci = ci.ci_of(alert.series.app) is not None
        ref = _reference(alert) if commits and has_ci else None
        if commits is None or not has_ci or (n == 1 and ref is not None and ref.deterministic):
            alert.save(update_fields=["range_commits", "culprit_commit", "confirmation", "updated"])
            return 0
        fields = {"build": alert.build, "commits": commits, "lo": 0, "hi": n, "reference": dataclasses.asdict(ref),
                  "thin": is_thin(alert.p_value, ref.mode), "phase": Bisection.Phase.RUNNING, "outcome": "",
                  "detail": "", "finished": None}
        if existing is None:
            b = Bisection.objects.create(alert=alert, **fields)
        else:
            # The culprit moved: what was asked about the old range no longer decides anything, but the
            # requests stay (CI received them: they count against the daily budget, and a late answer to one
            # is recognised as superseded instead of "no such request"), and so does the row.
            RunRequest.objects.filter(bisection=existing, state=RunRequest.State.REQUESTED).update(
                state=RunRequest.State.EXPIRED, outcome="superseded")
            RunRequest.objects.filter(bisection=existing).update(outcome="superseded")
            for name, value in fields.items():
                setattr(existing, name, value)
            existing.started = timezone.now()
            existing.save()
            b = existing
        alert.save(update_fields=["range_commits", "culprit_commit", "confirmation", "updated"])
        _advance(b, alert)
    return 1


# --- answers ----------------------------------------------------------------------------------------------------

def _observation(rr: RunRequest) -> Observation:
    o = rr.observation or {}
    return Observation(values=tuple(o.get("values") or ()), runs=int(o.get("runs") or rr.runs),
                       count=o.get("count"), total=o.get("total"), reason=rr.reason)


def apply_answer(build_pk: int) -> str:
    """A requested build was committed: record it as the answer to its request and take the next step."""
    with transaction.atomic():
        build = Build.objects.select_for_update(no_key=True, of=("self",)).filter(pk=build_pk).first()
        if build is None or build.role != Scope.REQUESTED:
            return "missing"
        rr = (RunRequest.objects.select_for_update(of=("self",)).select_related("alert__series__metric")
              .filter(public_id=build.requested, app_id=build.app_id).first())
        outcome = _answer(rr, build)
        Build.objects.filter(pk=build.pk).update(analysis=Build.Analysis.DONE, analysis_finished=timezone.now(),
                                                 analysis_error="" if outcome == "answered" else outcome[:2000])
        if rr is not None and outcome in ("answered", "failed"):
            advance(rr.bisection_id)
    return outcome


def _answer(rr: RunRequest | None, build: Build) -> str:
    if rr is None:
        return "no such request"
    if rr.state != RunRequest.State.REQUESTED:
        if rr.answer_id == build.pk:
            return "answered"
        if rr.outcome == "superseded":
            return f"request {rr.public_id} was superseded: the alert's culprit moved and its bisection restarted"
        return f"request {rr.public_id} is {rr.state}"
    now = timezone.now()
    series = rr.alert.series
    m = (Measurement.objects.filter(build=build, series__metric__name=series.metric.name,
                                    series__device=series.device).select_related("series").first())
    if build.commit != rr.commit or m is None:
        rr.state = RunRequest.State.FAILED
        rr.outcome = "wrong commit" if build.commit != rr.commit else "metric missing"
        rr.error = (f"build {build.ext_id} ran {build.commit!r}, not {rr.commit!r}" if build.commit != rr.commit
                    else f"build {build.ext_id} has no {series.metric.name} on device {series.device!r}")
        rr.answer, rr.answered = build, now
        rr.save(update_fields=["state", "outcome", "error", "answer", "answered"])
        return "failed"
    samples = m.sample_list()
    rr.observation = {"values": samples if samples else [m.value], "count": m.count, "total": m.total,
                      "runs": rr.runs}
    rr.state, rr.answer, rr.answered = RunRequest.State.ANSWERED, build, now
    rr.save(update_fields=["observation", "state", "answer", "answered"])
    return "answered"


# --- deciding ---------------------------------------------------------------------------------------------------

def advance(bisection_pk: int) -> None:
    with transaction.atomic():
        b = Bisection.objects.select_for_update(of=("self",)).filter(pk=bisection_pk).first()
        if b is None or b.phase == Bisection.Phase.DONE:
            return
        alert = Alert.objects.select_related("series__app", "series__metric").get(pk=b.alert_id)
        if alert.build_id != b.build_id:
            transaction.on_commit(lambda: start(alert.pk))
            return
        _advance(b, alert)


def _advance(b: Bisection, alert: Alert) -> None:
    """Decide the next step of a locked, running bisection."""
    reqs = list(RunRequest.objects.filter(bisection=b).exclude(outcome="superseded").order_by("pk"))
    if any(r.state == RunRequest.State.REQUESTED for r in reqs):
        return  # waiting for CI
    lost = next((r for r in reqs if r.state in (RunRequest.State.EXPIRED, RunRequest.State.FAILED)), None)
    if lost is not None:
        _finish(b, alert, "expired" if lost.state == RunRequest.State.EXPIRED else "failed",
                f"request {lost.public_id} {lost.state}: {lost.error or lost.outcome}")
        return
    observations: dict[int, list[Observation]] = {}
    for r in reqs:
        observations.setdefault(r.index, []).append(_observation(r))
    ref = Reference(**b.reference)
    n = len(b.commits) - 1
    thin = is_thin(alert.p_value, ref.mode)
    d = decide(n, observations, ref, thin=thin, max_runs=settings.PERF_BISECT_MAX_RUNS)
    b.lo, b.hi, b.thin = d.lo, d.hi, thin
    Alert.objects.filter(pk=alert.pk).update(range_commits=d.hi - d.lo)
    if not d.asks:
        _finish(b, alert, d.outcome or "none", "", culprit=d.culprit)
        return
    if len(reqs) + len(d.asks) > request_bound(n) + EXTRA_REQUESTS:
        _finish(b, alert, "gave_up", f"{len(reqs)} requests made; the range stays {d.hi - d.lo} commits")
        return
    integration = ci.ci_of(alert.series.app)
    if integration is None:
        _finish(b, alert, "no_ci", "the app's CI endpoint was removed")
        return
    # One bisection of the app counts and asks at a time: two advancing at once could both pass the budget.
    AppIntegration.objects.select_for_update().filter(pk=integration.pk).values_list("pk", flat=True).first()
    day_ago = timezone.now() - timedelta(days=1)
    used = RunRequest.objects.filter(app_id=alert.series.app_id, created__gte=day_ago).count()
    if used + len(d.asks) > integration.ci_max_requests_per_day:
        _finish(b, alert, "budget", f"{used} requests in the last 24 h (max {integration.ci_max_requests_per_day})")
        return
    created = []
    for ask in d.asks:
        pid = f"r{alert.pk}-{secrets.token_hex(6)}"
        created.append(RunRequest.objects.create(
            public_id=pid, app_id=alert.series.app_id, alert=alert, bisection=b, reason=ask.reason, index=ask.index,
            commit=b.commits[ask.index], build_ext_id=f"bisect-{pid}", runs=ask.runs,
            metrics=[alert.series.metric.name]).pk)
    b.save(update_fields=["lo", "hi", "thin"])
    Alert.objects.filter(pk=alert.pk).update(confirmation=Alert.Confirmation.REQUESTED)
    for pk in created:
        transaction.on_commit(lambda pk=pk: _publish(pk))


def _publish(request_pk: int) -> None:
    from alerts.dispatch import queue_run_request

    try:
        queue_run_request(request_pk)
    except Exception:
        log.exception("broker unavailable; run request %s is left for the sweep", request_pk)


def _finish(b: Bisection, alert: Alert, outcome: str, detail: str, *, culprit: int | None = None) -> None:
    b.phase, b.outcome, b.detail, b.finished = Bisection.Phase.DONE, outcome, detail[:2000], timezone.now()
    b.save(update_fields=["phase", "outcome", "detail", "finished", "lo", "hi", "thin"])
    fields = {"confirmation": OUTCOME_TO_CONFIRMATION.get(outcome, Alert.Confirmation.NONE),
              "range_commits": b.hi - b.lo}
    if culprit is not None and outcome in OUTCOME_TO_CONFIRMATION:
        fields["culprit_commit"] = b.commits[culprit]
        fields["range_commits"] = 1
    elif b.hi - b.lo == 1 and fields["confirmation"] != Alert.Confirmation.NOT_REPRODUCED:
        # Stopped (budget, expiry, no CI) with the range narrowed to one commit: that commit is the culprit,
        # as `start` names it for a one-commit range, only not confirmed by a re-run.
        fields["culprit_commit"] = b.commits[b.hi]
    Alert.objects.filter(pk=alert.pk).update(**fields)
    from alerts import lifecycle

    lifecycle.refresh_groups([alert.group_id])
    group_id = alert.group_id
    transaction.on_commit(lambda: _notify_if_due(group_id))


def _notify_if_due(group_id: int) -> None:
    """A bisection ended: its group may be due now (it was held), judged as after its branch's newest build."""
    from alerts import notifications

    group = AlertGroup.objects.select_related("build").filter(pk=group_id).first()
    if group is None or group.notified is not None:
        return
    latest = (Build.objects.filter(app_id=group.build.app_id, platform=group.build.platform, branch=group.build.branch,
                                   role=Scope.BRANCH, analysis=Build.Analysis.DONE)
              .order_by("-timestamp", "-pk").values_list("pk", flat=True).first())
    try:
        if latest is not None:
            notifications.notify_due_groups(latest)
    except Exception:
        log.exception("could not queue the notification of group %s; the sweep will", group_id)


# --- time ---------------------------------------------------------------------------------------------------------

def expire() -> int:
    """Requests CI did not answer within PERF_REQUEST_TIMEOUT_SECONDS: expired, their bisection ends."""
    cutoff = timezone.now() - timedelta(seconds=settings.PERF_REQUEST_TIMEOUT_SECONDS)
    stale = list(RunRequest.objects.filter(state=RunRequest.State.REQUESTED, created__lte=cutoff)
                 .values_list("pk", "bisection_id")[:500])
    for pk, bisection_pk in stale:
        RunRequest.objects.filter(pk=pk, state=RunRequest.State.REQUESTED).update(
            state=RunRequest.State.EXPIRED, outcome="no answer",
            error=f"no answer within {settings.PERF_REQUEST_TIMEOUT_SECONDS} s")
        advance(bisection_pk)
    return len(stale)


def held(group_ids: Iterable[int]) -> set[int]:
    """Groups whose notification waits: an alert of theirs is still being bisected or confirmed, for at
    most PERF_NOTIFY_BISECT_WAIT_SECONDS since that started."""
    ids = list(group_ids)
    if not ids:
        return set()
    since = timezone.now() - timedelta(seconds=settings.PERF_NOTIFY_BISECT_WAIT_SECONDS)
    return set(Bisection.objects.filter(alert__group_id__in=ids, phase=Bisection.Phase.RUNNING, started__gt=since)
               .values_list("alert__group_id", flat=True))


def pending_answers(min_age_seconds: int) -> list[int]:
    """Requested builds whose hand-off was lost (still pending after `min_age_seconds`)."""
    cutoff = timezone.now() - timedelta(seconds=min_age_seconds)
    return list(Build.objects.filter(role=Scope.REQUESTED, analysis=Build.Analysis.PENDING,
                                     analysis_requested__lte=cutoff).order_by("pk").values_list("pk", flat=True)[:500])


def advance_request(request_pk: int) -> None:
    """The bisection of this request takes its next step (after the request failed or was answered)."""
    bisection_pk = RunRequest.objects.filter(pk=request_pk).values_list("bisection_id", flat=True).first()
    if bisection_pk is not None:
        advance(bisection_pk)
