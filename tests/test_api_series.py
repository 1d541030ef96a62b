"""GET /api/v1/series and /api/v1/series/{id}/points."""

from __future__ import annotations

import pytest

from metrics.models import App, Series, UploadToken
from tests.factories import native_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def auth(app_token):
    return {"HTTP_AUTHORIZATION": f"Bearer {app_token[1]}"}


def test_it_lists_series_with_filters(client, upload, auth):
    upload(native_body(1))
    upload(native_body(2, platform="ios", device=None))
    r = client.get("/api/v1/series?app=com.example.shop&platform=android", **auth)
    assert r.status_code == 200
    doc = r.json()
    assert {s["metric"] for s in doc["results"]} == {"startup.cold.ttid", "size.apk.download", "crash.rate"}
    assert {s["platform"] for s in doc["results"]} == {"android"}
    assert doc["next"] is None
    r = client.get("/api/v1/series?metric=startup.*", **auth)
    assert [s["metric"] for s in r.json()["results"]] == ["startup.cold.ttid", "startup.cold.ttid"]


def test_it_paginates_with_a_next_link(client, upload, auth):
    upload(native_body(1))
    upload(native_body(2, platform="ios"))
    seen = []
    url = "/api/v1/series?limit=4"
    while url:
        doc = client.get(url, **auth).json()
        seen += [s["id"] for s in doc["results"]]
        url = doc["next"]
    assert sorted(seen) == sorted(Series.objects.values_list("pk", flat=True))
    assert len(seen) == 6


def test_it_rejects_a_bad_limit_with_a_path(client, auth):
    r = client.get("/api/v1/series?limit=abc", **auth)
    assert r.status_code == 400
    assert "limit" in r.json()["errors"][0]["path"]


def test_it_scopes_a_tokens_series_to_its_app(client, upload):
    upload(native_body(1))
    _, other = UploadToken.issue(App.objects.create(name="com.example.other"))
    r = client.get("/api/v1/series", HTTP_AUTHORIZATION=f"Bearer {other}")
    assert r.json()["results"] == []
    assert client.get("/api/v1/series?app=com.example.shop", HTTP_AUTHORIZATION=f"Bearer {other}").status_code == 403


def test_it_returns_points_oldest_first_with_raw_values(client, upload, auth):
    for b in (3, 1, 2):  # out of order on purpose
        body = native_body(b)
        body["metrics"][0]["samples"] = [100.0 + b, 200.0 + b]
        upload(body)
    sid = Series.objects.get(metric__name="startup.cold.ttid").pk
    doc = client.get(f"/api/v1/series/{sid}/points", **auth).json()
    assert [p["build"] for p in doc["points"]] == ["1", "2", "3"]
    assert doc["points"][0]["samples"] == [101.0, 201.0]
    assert doc["points"][0]["value"] == 151.0
    assert doc["series"]["metric"] == "startup.cold.ttid"
    last_two = client.get(f"/api/v1/series/{sid}/points?limit=2", **auth).json()
    assert [p["build"] for p in last_two["points"]] == ["2", "3"]


def test_it_pages_points_back_in_time_with_a_next_link(client, upload, auth):
    # builds 2-5 share one time (CI stamping the commit time): a page cut among them loses none of them
    for b in range(1, 9):
        upload(native_body(b, minutes=2 if 2 <= b <= 5 else b))
    sid = Series.objects.get(metric__name="startup.cold.ttid").pk
    pages, url = [], f"/api/v1/series/{sid}/points?limit=3"
    while url:
        doc = client.get(url, **auth).json()
        pages.append([p["build"] for p in doc["points"]])
        url = doc["next"]
    assert pages == [["6", "7", "8"], ["3", "4", "5"], ["1", "2"]]
    assert client.get(f"/api/v1/series/{sid}/points?limit=8", **auth).json()["next"] is None
    assert client.get(f"/api/v1/series/{sid}/points?limit=7", **auth).json()["next"] is not None


def test_points_keep_the_series_fields_their_schema_requires(client, upload, auth):
    # A series whose builds are not analysed yet has no last_build_time: the schema requires the key (null),
    # and only a point's own absent fields (samples of a crash rate, counts of a timing) are left out.
    upload(native_body(1))
    Series.objects.update(last_build_time=None)
    for metric in ("crash.rate", "startup.cold.ttid"):
        sid = Series.objects.get(metric__name=metric).pk
        doc = client.get(f"/api/v1/series/{sid}/points", **auth).json()
        assert doc["series"]["last_build_time"] is None
        point = doc["points"][0]
        assert ("samples" in point) == (metric == "startup.cold.ttid")
        assert ("count" in point) == ("total" in point) == (metric == "crash.rate")


def test_it_answers_404_for_unknown_series(client, auth):
    assert client.get("/api/v1/series/999999/points", **auth).status_code == 404


@pytest.mark.parametrize(("before", "status"), [
    ("2026-11-01T10:02:30Z", 200),
    ("1830-07-09T21:14:49.27-18:11", 200),  # an offset PostgreSQL refuses is folded into UTC first
    ("0000-01-01T00:00:00Z", 200),
    ("0000-00-00T00:00:00Z", 400),
    ("2026-13-01T00:00:00Z", 400),
    ("yesterday", 400),
])
def test_it_parses_before_strictly(client, upload, auth, before, status):
    from urllib.parse import quote

    upload(native_body(1))
    sid = Series.objects.first().pk
    r = client.get(f"/api/v1/series/{sid}/points?before={quote(before)}", **auth)
    assert r.status_code == status, r.content
    if status == 400:
        assert r.json()["errors"][0]["path"].endswith("before")


def test_it_rejects_nul_characters_in_filters(client, auth):
    r = client.get("/api/v1/series?branch=ma%00in", **auth)
    assert r.status_code == 400
    assert r.json()["errors"][0]["path"] == "query.branch"
