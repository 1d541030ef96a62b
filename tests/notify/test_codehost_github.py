"""Posting checks to GitHub, against a fake GitHub API on 127.0.0.1 that records every request."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from alerts.codehost import github, service
from alerts.models import AppIntegration, Check, CodeHostAttempt, CodeHostPost
from alerts.notify.service import AttemptOutcome
from metrics.models import App, Build
from tests.notify.fixtures import make_retry_due

pytestmark = pytest.mark.django_db


class FakeGitHub(BaseHTTPRequestHandler):
    requests: list = []
    comments: dict = {}
    fail_next: list = []

    def _answer(self, status, doc):
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(data)

    def _handle(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(n)) if n else None
        self.requests.append((self.command, self.path, body, self.headers.get("Authorization")))
        if self.fail_next:
            return self._answer(self.fail_next.pop(0), {"message": "try later"})
        if self.command == "POST" and "/statuses/" in self.path:
            return self._answer(201, {"id": 1})
        if self.command == "GET" and self.path.split("?")[0].endswith("/comments"):
            return self._answer(200, [{"id": k, "body": v} for k, v in self.comments.items()])
        if self.command == "POST" and self.path.endswith("/comments"):
            cid = 100 + len(self.comments)
            self.comments[cid] = body["body"]
            return self._answer(201, {"id": cid})
        if self.command == "PATCH":
            cid = int(self.path.rsplit("/", 1)[-1])
            self.comments[cid] = body["body"]
            return self._answer(200, {"id": cid})
        return self._answer(404, {"message": "Not Found"})

    do_GET = do_POST = do_PATCH = _handle

    def log_message(self, *a):
        pass


@pytest.fixture
def fake_github(settings, monkeypatch):
    settings.PERF_WEBHOOK_ALLOW_PRIVATE = True
    monkeypatch.setenv("PERF_GITHUB_TOKEN", "ghp_test")
    FakeGitHub.requests, FakeGitHub.comments, FakeGitHub.fail_next = [], {}, []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), FakeGitHub)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()


def make_check(api_url, status="fail", markdown="### perfplatform check: **fail**\n"):
    app = App.objects.create(name="com.example.shop")
    AppIntegration.objects.create(app=app, code_host_type="github", code_host_repo="acme/shop",
                                  code_host_token_env="PERF_GITHUB_TOKEN", code_host_api_url=api_url)
    from django.utils import timezone

    b = Build.objects.create(app=app, platform="android", branch="pr/123", ext_id="pr-77", commit="abc123",
                             timestamp=timezone.now(), role="pr", base_commit="c1", base_branch="main")
    return Check.objects.create(build=b, app=app, platform="android", base_branch="main", base_commit="c1",
                                status=status, markdown=markdown, requested=timezone.now())


def test_it_posts_a_commit_status_and_one_sticky_comment_updated_in_place(fake_github):
    check = make_check(fake_github)
    post_pk = service.plan_post(check.pk)  # tasks run in-process: posted at once
    post = CodeHostPost.objects.get(pk=post_pk)
    assert post.status == "sent"
    methods = [(m, p.split("?")[0]) for m, p, _, _ in FakeGitHub.requests]
    assert methods == [("POST", "/repos/acme/shop/statuses/abc123"), ("GET", "/repos/acme/shop/issues/123/comments"),
                       ("POST", "/repos/acme/shop/issues/123/comments")]
    status_body = FakeGitHub.requests[0][2]
    assert status_body["state"] == "failure" and status_body["context"] == "perfplatform/check"
    assert status_body["target_url"].endswith("/checks/com.example.shop/android/pr-77/")
    assert all(auth == "Bearer ghp_test" for *_, auth in FakeGitHub.requests)
    (comment,) = FakeGitHub.comments.values()
    assert comment.startswith(github.marker("com.example.shop", "android", "pr/123")) and "**fail**" in comment
    # The check changes: the same comment is edited, not a second one added.
    Check.objects.filter(pk=check.pk).update(status="pass", markdown="### perfplatform check: **pass**\n")
    service.plan_post(check.pk)
    assert len(FakeGitHub.comments) == 1 and "**pass**" in next(iter(FakeGitHub.comments.values()))
    assert FakeGitHub.requests[-1][0] == "PATCH" and FakeGitHub.requests[-2][2]["state"] == "success"
    # Unchanged: nothing is posted again.
    n = len(FakeGitHub.requests)
    assert service.plan_post(check.pk) is None and len(FakeGitHub.requests) == n


def test_it_retries_a_failed_post_and_records_every_attempt(fake_github):
    check = make_check(fake_github)
    post, _ = CodeHostPost.objects.get_or_create(premerge_check=check, defaults={"want_state": "x"})
    FakeGitHub.fail_next = [503]
    first = service.attempt_post(post.pk, final=False)
    assert first.retry and not first.done
    assert service.attempt_post(post.pk, final=False) == AttemptOutcome(done=False, retry=False)  # not due yet
    make_retry_due(CodeHostPost, post.pk)
    second = service.attempt_post(post.pk, final=False)
    assert second.done
    attempts = list(CodeHostAttempt.objects.filter(post=post).order_by("pk").values_list("action", "ok", "status_code"))
    assert attempts == [("status", False, 503), ("status", True, None), ("comment", True, None)]
    assert CodeHostPost.objects.get(pk=post.pk).status == "sent"


def test_it_fails_a_post_permanently_without_a_token_and_never_raises(fake_github, monkeypatch):
    monkeypatch.delenv("PERF_GITHUB_TOKEN")
    check = make_check(fake_github)
    post_pk = service.plan_post(check.pk)
    post = CodeHostPost.objects.get(pk=post_pk)
    assert post.status == "failed" and "token" in post.error and FakeGitHub.requests == []


def test_it_reads_the_pull_request_number_from_the_branch():
    assert [github.pr_number(b) for b in ("pr/123", "pull/7", "feature/pr-9", "main", "pr/x")] == [123, 7, 9, None, None]


def test_it_posts_a_check_whose_hand_off_was_lost_from_the_sweep(fake_github, settings):
    from datetime import timedelta

    from django.utils import timezone

    from alerts import handoff, sweeps

    settings.PERF_SWEEP_MIN_AGE_SECONDS = 30
    check = make_check(fake_github)

    def broker_down(kind, pk):
        raise ConnectionError("broker down")

    with handoff.use_publisher(broker_down), pytest.raises(ConnectionError):
        service.plan_post(check.pk)
    post = CodeHostPost.objects.get(premerge_check=check)
    assert post.status == "pending" and post.attempts == 0 and FakeGitHub.requests == []
    sweeps.run()  # too fresh: the request that planned it may still be posting it
    assert FakeGitHub.requests == []
    CodeHostPost.objects.filter(pk=post.pk).update(next_attempt=timezone.now() - timedelta(seconds=31))
    sweeps.run()  # tasks in-process here: the re-published task posts at once
    assert CodeHostPost.objects.get(pk=post.pk).status == "sent" and len(FakeGitHub.comments) == 1


@pytest.mark.django_db(transaction=True)
def test_it_posts_with_no_transaction_open_and_a_claim_that_stops_a_twin(fake_github, monkeypatch):
    from django.db import connection

    check = make_check(fake_github)
    post, _ = CodeHostPost.objects.get_or_create(premerge_check=check, defaults={"want_state": "x"})
    seen = []
    real = github.post_status

    def probe(*args, **kwargs):
        seen.append({"atomic": connection.in_atomic_block,
                     "claimed": CodeHostPost.objects.get(pk=post.pk).claimed_until is not None,
                     "twin": service.attempt_post(post.pk, final=False)})  # a re-published copy, mid-post
        return real(*args, **kwargs)

    monkeypatch.setattr(github, "post_status", probe)
    assert service.attempt_post(post.pk, final=False).done
    assert seen[0]["atomic"] is False and seen[0]["claimed"] is True
    assert seen[0]["twin"].retry and not seen[0]["twin"].done and seen[0]["twin"].retry_in > 0
    got = CodeHostPost.objects.get(pk=post.pk)
    assert (got.status, got.attempts, got.claimed_until, got.posted_state) == ("sent", 1, None, "x")
    assert got.comment_id is not None and len(FakeGitHub.comments) == 1  # the twin posted nothing


def test_it_posts_again_when_the_check_changed_while_its_post_was_in_flight(fake_github, monkeypatch):
    check = make_check(fake_github)
    post, _ = CodeHostPost.objects.get_or_create(premerge_check=check, defaults={"want_state": "old"})
    real = github.post_status

    def replanned(*args, **kwargs):
        CodeHostPost.objects.filter(pk=post.pk).update(want_state="new")  # plan_post of a recomputed check
        return real(*args, **kwargs)

    monkeypatch.setattr(github, "post_status", replanned)
    first = service.attempt_post(post.pk, final=False)
    got = CodeHostPost.objects.get(pk=post.pk)
    assert first.retry and (got.status, got.posted_state, got.want_state) == ("pending", "old", "new")
    monkeypatch.setattr(github, "post_status", real)
    assert service.attempt_post(post.pk, final=False).done
    got = CodeHostPost.objects.get(pk=post.pk)
    assert (got.status, got.posted_state) == ("sent", "new") and len(FakeGitHub.comments) == 1  # updated in place


def test_it_retries_only_the_comment_when_only_the_comment_failed(fake_github, monkeypatch):
    from alerts.notify.transports.base import TransientError
    from tests.notify.fixtures import make_retry_due

    check = make_check(fake_github)
    post, _ = CodeHostPost.objects.get_or_create(premerge_check=check, defaults={"want_state": "x"})
    real = github.upsert_comment
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise TransientError("GitHub 502", 502)
        return real(*args, **kwargs)

    monkeypatch.setattr(github, "upsert_comment", flaky)
    assert service.attempt_post(post.pk, final=False).retry
    make_retry_due(CodeHostPost, post.pk)
    assert service.attempt_post(post.pk, final=False).done
    statuses = [r for r in FakeGitHub.requests if "/statuses/" in r[1]]
    assert len(statuses) == 1 and len(FakeGitHub.comments) == 1  # GitHub keeps every status POST: one is enough
    actions = list(CodeHostAttempt.objects.filter(post=post).order_by("pk").values_list("action", "ok"))
    assert actions == [("status", True), ("comment", False), ("comment", True)]


def test_it_re_aims_a_pending_retry_when_the_check_returns_to_the_state_already_posted(fake_github, monkeypatch):
    from alerts.notify.transports.base import TransientError
    from tests.notify.fixtures import make_retry_due

    check = make_check(fake_github, status="pass", markdown="### perfplatform check: **pass**\n")
    post = CodeHostPost.objects.get(pk=service.plan_post(check.pk))
    assert post.status == "sent"  # pass is on GitHub
    # The check fails: its status goes up, its comment fails transiently, and the post waits for its retry.
    real = github.upsert_comment
    monkeypatch.setattr(github, "upsert_comment", lambda *a, **k: (_ for _ in ()).throw(TransientError("502", 502)))
    Check.objects.filter(pk=check.pk).update(status="fail", markdown="### perfplatform check: **fail**\n")
    service.plan_post(check.pk)
    monkeypatch.setattr(github, "upsert_comment", real)
    assert CodeHostPost.objects.get(pk=post.pk).status == "pending"
    # The check passes again before the retry, the state posted last: the retry, whose status was up ("fail"),
    # is aimed at "pass" and posts its status again, instead of leaving "fail" on the commit.
    Check.objects.filter(pk=check.pk).update(status="pass", markdown="### perfplatform check: **pass**\n")
    service.plan_post(check.pk)
    make_retry_due(CodeHostPost, post.pk)
    service.attempt_post(post.pk, final=False)
    assert CodeHostPost.objects.get(pk=post.pk).status == "sent"
    states = [body["state"] for method, path, body, _ in FakeGitHub.requests if "/statuses/" in path]
    assert states == ["success", "failure", "success"]
    assert "**pass**" in next(iter(FakeGitHub.comments.values()))
