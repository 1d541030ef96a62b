"""Planning and attempting the code-host post of a check; every request recorded, retried with backoff.

Configuration: the app's `AppIntegration` (config file section `apps[].code_host`: `type: github`, `repo`,
`token_env` naming the environment variable that holds the token, `api_url`). Apps without it post nothing.
A post never fails an upload: it runs in its own task after the check is stored.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from alerts import handoff
from alerts.codehost import github
from alerts.models import Check, CodeHostAttempt, CodeHostPost
from alerts.notify.service import AttemptOutcome, retry_delay, take_claim
from alerts.notify.service import claim_seconds as notify_claim_seconds
from alerts.notify.transports.base import DeliveryError, PermanentError, TransientError

log = logging.getLogger(__name__)

RETRY_DELAYS: tuple[int, ...] = (10, 60, 300, 1800)  # then failed; the same backoff as notifications


def target_for(check: Check) -> github.Target | None:
    from alerts.models import AppIntegration

    integ = AppIntegration.objects.filter(app_id=check.app_id).first()
    if integ is None:
        return None
    if getattr(integ, "code_host_type", "") != "github" or not getattr(integ, "code_host_repo", ""):
        return None
    token = os.environ.get(integ.code_host_token_env or "", "")
    api = (integ.code_host_api_url or "https://api.github.com").rstrip("/")
    return github.Target(api_url=api, repo=integ.code_host_repo, token=token)


def _state(check: Check) -> str:
    return f"{check.status}:{hashlib.sha256(check.markdown.encode()).hexdigest()[:16]}"


def plan_post(check_pk: int) -> int | None:
    """After a check is stored: make sure its post is pending when its state changed, and queue it."""
    check = Check.objects.select_related("app", "build").filter(pk=check_pk).first()
    if check is None or target_for(check) is None:
        return None
    state = _state(check)
    post, _ = CodeHostPost.objects.get_or_create(premerge_check=check)
    if post.posted_state == state and post.status != CodeHostPost.Status.PENDING:
        return None  # a pending retry of another state is re-aimed at this one instead (its status included)
    CodeHostPost.objects.filter(pk=post.pk).update(status=CodeHostPost.Status.PENDING, want_state=state, attempts=0,
                                                   next_attempt=timezone.now())
    handoff.publish(handoff.CODE_HOST_POST, post.pk)
    return post.pk


def retries_spent(post_pk: int) -> bool:
    """Whether the next attempt of a post is its last, read from the row (a re-published retry starts the task's
    own count afresh)."""
    attempts = CodeHostPost.objects.filter(pk=post_pk).values_list("attempts", flat=True).first()
    return attempts is not None and attempts >= len(RETRY_DELAYS)


def due_retries(grace_seconds: float = 0.0, limit: int = 200) -> list[int]:
    """Pending posts whose next attempt was due more than `grace_seconds` ago, for the periodic sweep: a retry
    that never ran (without a broker, grace 0: every retry; with one: what it lost), or a first hand-off lost
    for at least PERF_SWEEP_MIN_AGE_SECONDS (the request that planned it may still be posting it). Rows from
    before `next_attempt` existed are due when their backoff after `updated` is over."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=grace_seconds)
    first_cutoff = min(cutoff, now - timedelta(seconds=settings.PERF_SWEEP_MIN_AGE_SECONDS))
    rows = (CodeHostPost.objects.filter(status=CodeHostPost.Status.PENDING).exclude(next_attempt__gt=cutoff)
            .exclude(claimed_until__gt=now).order_by("updated").values_list("pk", "attempts", "updated", "next_attempt"))
    return [pk for pk, attempts, updated, due in rows[:limit]
            if (due or updated + timedelta(seconds=retry_delay(attempts - 1, None)))
            <= (cutoff if attempts else first_cutoff)]


def _record(post: CodeHostPost, action: str, started: float, error: DeliveryError | None) -> None:
    CodeHostAttempt.objects.create(post=post, action=action, ok=error is None,
                                   status_code=error.status_code if error is not None else None,
                                   error=str(error)[:2000] if error is not None else "",
                                   duration_ms=int((time.monotonic() - started) * 1000))


def claim_seconds() -> float:
    """How long a claimed post is left to its sender: up to three requests (status, find, write the comment),
    each with the notifications' timeout and margin."""
    return 3 * notify_claim_seconds()


def _claim(post_pk: int) -> tuple[CodeHostPost, Check] | AttemptOutcome:
    """Mark the pending post claimed in a short transaction (no lock is held across the code host's API)."""
    with transaction.atomic():
        post = CodeHostPost.objects.select_for_update().filter(pk=post_pk).first()
        if post is None or post.status != CodeHostPost.Status.PENDING:
            return AttemptOutcome(done=True, retry=False)
        refused = take_claim(post, claim_seconds())
        if refused is not None:
            return refused
        return post, Check.objects.select_related("app", "build").get(pk=post.premerge_check_id)


def attempt_post(post_pk: int, *, final: bool) -> AttemptOutcome:
    """Post the commit status and the sticky comment once; record each request; say whether to retry.

    Claim, post, record, as notification deliveries do: the post is claimed in a short transaction, the
    code host's API is called with no transaction open (a slow GitHub must hold no row lock, and on SQLite
    no database-wide write lock), then the outcome is recorded. A check re-planned while its post was in
    flight (`want_state` changed) stays pending and is posted again with its new state.
    """
    claimed = _claim(post_pk)
    if isinstance(claimed, AttemptOutcome):
        return claimed
    post, check = claimed
    posting = post.want_state
    comment_id = post.comment_id
    target = target_for(check)
    error: DeliveryError | None = None
    if target is None:
        error = PermanentError("the app has no GitHub code host configured")
    elif not target.token:
        error = PermanentError("no token: the environment variable named by code_host.token_env is empty")
    b = check.build
    number = github.pr_number(b.branch)
    steps = []
    if error is None:
        from alerts.premerge import HEADLINE, check_url

        url = check_url(b)
        if b.commit and post.status_posted != posting:  # a retry after a failed comment: the status is up
            steps.append(("status", lambda: github.post_status(target, b.commit, check.status,
                                                                 f"{check.status}: {HEADLINE.get(check.status, '')}",
                                                                 url)))
        if number is not None:
            mark = github.marker(check.app.name, b.platform, b.branch)
            steps.append(("comment", lambda: github.upsert_comment(target, number, mark, check.markdown, comment_id)))
        if not steps and not b.commit:
            error = PermanentError(f"nothing to post: build has no commit and branch {b.branch!r} names no PR")
    status_done = False
    for action, fn in steps:
        started = time.monotonic()
        try:
            result = fn()
            if action == "comment":
                comment_id = result
            status_done |= action == "status"
            _record(post, action, started, None)
        except DeliveryError as exc:
            _record(post, action, started, exc)
            error = exc
            break
        except Exception as exc:  # a bug or an unforeseen library error: record it, retry like transient
            log.exception("posting check %s failed unexpectedly", check.pk)
            error = TransientError(f"unexpected error: {exc.__class__.__name__}: {exc}")
            _record(post, action, started, error)
            break
    if error is not None and not steps:
        _record(post, "config", time.monotonic(), error)
    return _finish(post_pk, posting, comment_id, error, final=final, status_done=status_done)


def _finish(post_pk: int, posting: str, comment_id: int | None, error: DeliveryError | None, *,
            final: bool, status_done: bool) -> AttemptOutcome:
    with transaction.atomic():
        post = CodeHostPost.objects.select_for_update().get(pk=post_pk)
        now = timezone.now()
        post.attempts += 1
        post.claimed_until = None
        post.next_attempt = None
        post.comment_id = comment_id
        if status_done:
            post.status_posted = posting
        if error is None:
            post.posted_state = posting
            post.error = ""
            if post.want_state == posting:
                post.status = CodeHostPost.Status.SENT
                outcome = AttemptOutcome(done=True, retry=False)
            else:  # re-planned meanwhile: post the new state next (the re-plan's own task met our claim)
                post.next_attempt = now
                outcome = AttemptOutcome(done=False, retry=True, retry_in=1.0)
        else:
            post.error = str(error)[:2000]
            if isinstance(error, TransientError) and not final:
                wait = retry_delay(post.attempts - 1, error.retry_after)
                post.next_attempt = now + timedelta(seconds=wait)
                outcome = AttemptOutcome(done=False, retry=True, retry_after=error.retry_after, retry_in=wait)
            else:
                post.status = CodeHostPost.Status.FAILED
                outcome = AttemptOutcome(done=True, retry=False)
        post.save()
        return outcome
