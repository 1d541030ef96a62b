"""A NUL character in a page's path, query or form answers 400 (PostgreSQL text cannot hold one: a lookup with
it was a 500 there, while SQLite found nothing); the API keeps its own validation, with field paths."""

from __future__ import annotations

import pytest

from tests.web.conftest import login


@pytest.mark.parametrize("url", [
    "/teams/startup-perf/?app=%00", "/teams/%00/", "/compare/?a=%00&b=x", "/builds/a/b/%00/",
    "/builds/a%00/b/c/", "/checks/a/b/%00/", "/overview/?%00=1",
])
def test_it_answers_400_to_a_nul_in_a_pages_url(client, world, url):
    login(client, world.member)
    r = client.get(url)
    assert r.status_code == 400 and b"NUL" in r.content


def test_it_answers_400_to_a_nul_in_a_form_and_changes_nothing(client, world):
    login(client, world.member)
    g, a = world.groups["startup"], world.alerts["startup"]
    r = client.post(f"/alerts/{g.pk}/", {"alert": a.pk, "status": "acknowledged", "note": "bad\x00note"})
    assert r.status_code == 400 and b"form field 'note'" in r.content
    a.refresh_from_db()
    assert a.status == "untriaged"


def test_it_leaves_the_apis_query_validation_to_the_api_but_refuses_a_nul_in_an_api_path(client, world):
    login(client, world.member)
    r = client.get("/api/v1/alerts?app=%00")
    assert r.status_code == 400 and r.json()["errors"][0]["path"] != "path"  # the API's own error, its own path
    r = client.get("/api/v1/builds/com.example.shop/android/b%001")
    assert r.status_code == 400 and r.json()["errors"] == [{"path": "path", "message": "path holds a NUL character"}]
