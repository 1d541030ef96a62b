"""Read API: ETag and Last-Modified on GET, 304 on If-None-Match / If-Modified-Since."""

from __future__ import annotations

import pytest

from tests.web.conftest import login


@pytest.fixture
def urls(world):
    s = world.series["startup.cold.ttid"]
    return [f"/api/v1/builds/{world.app.name}/android/b30", f"/api/v1/series?app={world.app.name}",
            f"/api/v1/series/{s.pk}/points?limit=20", f"/api/v1/alerts?series={s.pk}",
            f"/api/v1/alerts/{world.alerts['startup'].pk}"]


def test_it_answers_304_to_a_matching_etag(client, world, urls):
    login(client, world.outsider)
    for url in urls:
        r = client.get(url)
        assert r.status_code == 200, url
        etag = r["ETag"]
        assert etag.startswith('"') and r["Cache-Control"] == "private, no-cache"
        again = client.get(url, HTTP_IF_NONE_MATCH=etag)
        assert again.status_code == 304, url
        assert again.content == b"" and again["ETag"] == etag
        assert client.get(url, HTTP_IF_NONE_MATCH='"stale"').status_code == 200


def test_it_changes_the_etag_when_the_data_changes(client, world, urls):
    login(client, world.outsider)
    url = f"/api/v1/alerts/{world.alerts['startup'].pk}"
    etag = client.get(url)["ETag"]
    client.post(f"/alerts/{world.groups['startup'].pk}/", {"alert": "all", "status": "invalid"})  # outsider: 403
    assert client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304
    login(client, world.member)
    client.post(f"/alerts/{world.groups['startup'].pk}/", {"alert": "all", "status": "invalid"})
    r = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert r.status_code == 200 and r.json()["status"] == "invalid" and r["ETag"] != etag


def test_it_sends_last_modified_and_honours_if_modified_since(client, world):
    login(client, world.outsider)
    url = f"/api/v1/series/{world.series['startup.cold.ttid'].pk}/points?limit=5"
    r = client.get(url)
    last = r["Last-Modified"]
    assert last.endswith("GMT")
    assert client.get(url, HTTP_IF_MODIFIED_SINCE=last).status_code == 304
    assert client.get(url, HTTP_IF_MODIFIED_SINCE="Mon, 01 Jan 2001 00:00:00 GMT").status_code == 200


def test_it_keeps_the_response_shape_and_leaves_errors_alone(client, world):
    login(client, world.outsider)
    r = client.get(f"/api/v1/series/{world.series['size.apk.download'].pk}/points?limit=2")
    body = r.json()
    assert set(body) == {"series", "points", "next"} and "samples" not in body["points"][0]
    r = client.get("/api/v1/builds/com.example.shop/android/nope")
    assert r.status_code == 404 and "ETag" not in r
