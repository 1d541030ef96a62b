"""A crossed size budget fails a pull-request check, with the budget named."""

from __future__ import annotations

import pytest

from alerts.models import SizeBudget, Team
from tests.test_checks_api import body, check, history  # noqa: F401 - the history fixture

pytestmark = pytest.mark.django_db


def budget(max_bytes: int) -> None:
    team = Team.objects.create(name="app-size")
    SizeBudget.objects.create(position=0, app="*", platform="*", metric="size.apk.*", max_bytes=max_bytes, team=team)


def test_it_fails_a_check_whose_build_crosses_a_size_budget(history, upload, client, app_token,  # noqa: F811
                                                             django_capture_on_commit_callbacks):
    budget(30_200_000)
    with django_capture_on_commit_callbacks(execute=True):
        assert upload(body("pr-9", history, branch="pr/9", minutes=21, base_commit="c20",
                           size=30_250_000)).status_code == 201
    st, doc = check(client, app_token, "pr-9")
    assert st == 200 and doc["status"] == "fail"
    row = next(m for m in doc["metrics"] if m["metric"] == "budget:size.apk.*")
    assert row["verdict"] == "regression" and row["after"] == 30_250_000 and row["before"] == 30_000_000
    assert "over by 50,000" in row["note"] and "app-size" in row["note"]
    assert "budget:size.apk.*" in doc["markdown"]


def test_it_shows_headroom_and_passes_within_the_budget(history, upload, client, app_token,  # noqa: F811
                                                         django_capture_on_commit_callbacks):
    budget(31_000_000)
    with django_capture_on_commit_callbacks(execute=True):
        assert upload(body("pr-8", history, branch="pr/8", minutes=21, base_commit="c20")).status_code == 201
    st, doc = check(client, app_token, "pr-8")
    row = next(m for m in doc["metrics"] if m["metric"] == "budget:size.apk.*")
    assert row["verdict"] == "same" and "1,000,000 left" in row["note"]
    assert doc["status"] != "fail"


def test_it_never_fails_a_check_without_a_baseline_on_a_budget(history, upload, client, app_token,  # noqa: F811
                                                                django_capture_on_commit_callbacks):
    budget(30_200_000)
    with django_capture_on_commit_callbacks(execute=True):
        assert upload(body("pr-7", history, branch="pr/7", minutes=21, base_commit="c20", device="new-phone",
                           size=30_250_000)).status_code == 201
    st, doc = check(client, app_token, "pr-7")
    assert doc["status"] == "no_baseline"
    assert not [m for m in doc["metrics"] if m["metric"].startswith("budget:")]


def test_it_does_not_blame_a_pull_request_for_a_budget_its_base_already_crossed(
        history, upload, client, app_token, django_capture_on_commit_callbacks):  # noqa: F811
    budget(29_000_000)  # main is at 30,000,000 already
    with django_capture_on_commit_callbacks(execute=True):
        assert upload(body("pr-6", history, branch="pr/6", minutes=21, base_commit="c20")).status_code == 201
    st, doc = check(client, app_token, "pr-6")
    row = next(m for m in doc["metrics"] if m["metric"] == "budget:size.apk.*")
    assert row["verdict"] == "same" and "over by 1,000,000" in row["note"]
