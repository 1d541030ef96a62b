"""GET /api/v1/builds/{app}/{platform}/{build}."""

from __future__ import annotations

import pytest

from metrics.models import App, UploadToken
from tests.factories import native_body

pytestmark = pytest.mark.django_db


def test_it_returns_the_build_and_its_measurements_exactly(client, upload, app_token):
    _, token = app_token
    body = native_body()
    upload(body)
    r = client.get("/api/v1/builds/com.example.shop/android/4711", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert r.status_code == 200
    doc = r.json()
    assert (doc["id"], doc["branch"], doc["commit"], doc["parent_commit"], doc["version"]) == (
        "4711", "main", "c4711", "p4711", "7.3.0")
    assert doc["analysis"] == "pending"
    assert doc["timestamp"].startswith(body["build"]["timestamp"][:19])
    by_name = {m["metric"]: m for m in doc["measurements"]}
    assert by_name["startup.cold.ttid"]["samples"] == [412.1, 398.0, 405.3]
    assert "count" not in by_name["startup.cold.ttid"]
    assert by_name["size.apk.download"]["value"] == 31457280
    assert "samples" not in by_name["size.apk.download"]
    assert (by_name["crash.rate"]["count"], by_name["crash.rate"]["total"]) == (12, 100000)
    assert {m["device"] for m in doc["measurements"]} == {"pixel-6"}


def test_it_answers_404_for_an_unknown_build(client, app_token):
    _, token = app_token
    r = client.get("/api/v1/builds/com.example.shop/android/nope", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert r.status_code == 404


def test_it_needs_authentication(client, upload):
    upload(native_body())
    assert client.get("/api/v1/builds/com.example.shop/android/4711").status_code == 401


def test_it_hides_other_apps_builds_from_a_token(client, upload):
    upload(native_body())
    _, other = UploadToken.issue(App.objects.create(name="com.example.other"))
    r = client.get("/api/v1/builds/com.example.shop/android/4711", HTTP_AUTHORIZATION=f"Bearer {other}")
    assert r.status_code == 403


def test_it_serves_a_signed_in_user(client, upload, django_user_model):
    upload(native_body())
    user = django_user_model.objects.create_user("alice", password="pw")
    client.force_login(user)
    assert client.get("/api/v1/builds/com.example.shop/android/4711").status_code == 200
