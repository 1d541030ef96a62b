"""Error pages: a 404 says what was not found, in the site's layout; a 500 page needs no context."""

from __future__ import annotations

from django.template.loader import get_template

from tests.web.conftest import login


def test_it_says_what_was_not_found(client, world, settings):
    settings.DEBUG = False
    login(client, world.member)
    r = client.get("/checks/com.example.shop/android/b30/")
    assert r.status_code == 404
    html = r.content.decode()
    assert "build b30 is a branch build, not a pull-request build" in html and 'href="/"' in html
    assert 'class="brand"' in html  # the site's own layout, with its navigation
    r = client.get("/no/such/page/")
    assert r.status_code == 404 and "There is nothing at /no/such/page/" in r.content.decode()


def test_it_renders_the_server_error_page_without_a_request():
    html = get_template("500.html").render()
    assert "Something went wrong" in html and "/static/" in html
