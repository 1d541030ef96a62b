"""Build roles: pull-request and requested builds are stored apart from branch histories."""

from __future__ import annotations

import pytest

from metrics import hooks
from metrics.models import App, Build, Scope, Series
from tests.conftest import FIXTURES
from tests.factories import native_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def handed(monkeypatch):
    """Record which handler each committed build is handed to, instead of running analysis."""
    seen: list[tuple[str, int]] = []
    monkeypatch.setattr(hooks, "_handlers", {
        role: (lambda pk, role=role: seen.append((role, pk))) for role in ("branch", "pr", "requested")
    })
    return seen


def pr_body(build="pr-77", **build_fields):
    body = native_body(build, branch="pr/123", minutes=5)
    body["build"].update({"base_commit": "c4700", **build_fields})
    return body


def test_it_stores_a_pull_request_build_apart_from_the_branch(upload, handed, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert upload(native_body(4700)).status_code == 201
        r = upload(pr_body())
    assert r.status_code == 201, r.content
    pr = Build.objects.get(ext_id="pr-77")
    assert (pr.role, pr.base_commit, pr.base_branch, pr.branch) == ("pr", "c4700", "main", "pr/123")
    assert set(Series.objects.filter(measurements__build=pr).values_list("scope", flat=True)) == {"pr"}
    main = Build.objects.get(ext_id="4700")
    assert set(Series.objects.filter(measurements__build=main).values_list("scope", flat=True)) == {"branch"}
    assert handed == [("branch", main.pk), ("pr", pr.pk)]


def test_it_defaults_the_base_branch_to_the_apps_default_branch(upload, app_token):
    app, _ = app_token
    App.objects.filter(pk=app.pk).update(default_branch="trunk")
    assert upload(pr_body()).status_code == 201
    assert Build.objects.get(ext_id="pr-77").base_branch == "trunk"
    assert upload(pr_body("pr-78", base_branch="release/7")).status_code == 201
    assert Build.objects.get(ext_id="pr-78").base_branch == "release/7"


def test_it_takes_roles_and_commits_from_query_parameters(upload):
    body = (FIXTURES / "formats" / "google-benchmark" / "test1_run1.json").read_bytes()
    q = "?app=com.example.shop&platform=android&branch=main&build=req-1&requested=r17&commits=a1,a2,a3"
    r = upload(body, query=q)
    assert r.status_code == 201, r.content
    b = Build.objects.get(ext_id="req-1")
    assert (b.role, b.requested, b.commit, b.commits) == ("requested", "r17", "a3", ["a1", "a2", "a3"])
    assert set(Series.objects.filter(measurements__build=b).values_list("scope", flat=True)) == {"requested"}


def test_it_keeps_the_commits_a_build_covers(upload):
    body = native_body(4711)
    body["build"]["commits"] = ["x1", "x2", "c4711"]
    assert upload(body).status_code == 201
    assert Build.objects.get(ext_id="4711").commits == ["x1", "x2", "c4711"]


@pytest.mark.parametrize(("fields", "path"), [
    ({"commits": ["x1", "x2"]}, "build.commits"),  # must end with build.commit c4711
    ({"commits": ["ok", "not ok!"]}, "build.commits[1]"),
    ({"commits": "x1"}, "build.commits"),
    ({"base_branch": "main"}, "build.base_branch"),  # without base_commit
    ({"base_commit": "c1", "requested": "r1"}, "build.requested"),
    ({"base_commit": "bad commit"}, "build.base_commit"),
])
def test_it_refuses_inconsistent_build_fields_with_their_path(upload, fields, path):
    body = native_body(4711)
    body["build"].update(fields)
    r = upload(body)
    assert r.status_code == 400
    assert path in [e["path"] for e in r.json()["errors"]]
    assert Build.objects.count() == 0


def test_it_refuses_a_requested_build_without_its_commit(upload):
    body = native_body("req-2")
    del body["build"]["commit"]
    body["build"]["requested"] = "r2"
    r = upload(body)
    assert r.status_code == 400
    assert [e["path"] for e in r.json()["errors"]] == ["build.commit"]


def test_it_refuses_to_turn_a_branch_build_into_a_pull_request_build(upload):
    assert upload(native_body(4711)).status_code == 201
    body = native_body(4711)
    body["build"]["base_commit"] = "c4700"
    r = upload(body)
    assert r.status_code == 400
    assert r.json()["errors"][0]["path"] == "build.base_commit"
    assert Build.objects.get(ext_id="4711").role == Scope.BRANCH


def test_it_never_analyses_or_lists_pull_request_builds_as_branch_history(upload, client, app_token):
    from alerts.analysis import analyse_build
    from alerts.dispatch import pending_builds

    assert upload(pr_body()).status_code == 201
    pr = Build.objects.get(ext_id="pr-77")
    assert pending_builds(min_age_seconds=0) == []
    assert analyse_build(pr.pk) == "skipped"
    _, token = app_token
    listed = client.get("/api/v1/series?app=com.example.shop", HTTP_AUTHORIZATION=f"Bearer {token}").json()
    assert listed["results"] == []
    doc = client.get("/api/v1/builds/com.example.shop/android/pr-77", HTTP_AUTHORIZATION=f"Bearer {token}").json()
    assert (doc["role"], doc["base_commit"], doc["base_branch"]) == ("pr", "c4700", "main")


def test_it_keeps_branch_signatures_stable():
    assert Series.signature_of("a", "p", "main", "", "m") == Series.signature_of("a", "p", "main", "", "m", "branch")
    assert Series.signature_of("a", "p", "main", "", "m") != Series.signature_of("a", "p", "main", "", "m", "requested")
