"""Login page, anonymous redirects on every page, and the `/` dispatch."""

from __future__ import annotations

import pytest

from tests.web.conftest import login


def pages(w) -> list[str]:
    b = w.builds[-1]
    sid = w.series["startup.cold.ttid"].pk
    return ["/", "/overview/", "/teams/startup-perf/", f"/alerts/{w.groups['startup'].pk}/", f"/series/{sid}/",
            f"/series/{sid}/distribution/", f"/builds/{w.app.name}/android/{b.ext_id}/", "/builds/",
            f"/compare/?a=b1&b=b2&app={w.app.name}&platform=android"]


def test_it_redirects_anonymous_visitors_to_login_on_every_page(client, world):
    for url in pages(world):
        r = client.get(url)
        assert r.status_code == 302, url
        assert r["Location"].startswith("/accounts/login/?next="), url


def test_it_lets_every_signed_in_user_read_every_page(client, world):
    login(client, world.outsider)
    for url in pages(world):
        r = client.get(url, follow=True)
        assert r.status_code == 200, url


def test_it_signs_in_with_a_labelled_form(client, world):
    r = client.get("/accounts/login/")
    html = r.content.decode()
    assert 'for="id_username"' in html and 'for="id_password"' in html and "csrfmiddlewaretoken" in html
    r = client.post("/accounts/login/", {"username": "alice", "password": "pw"})
    assert r.status_code == 302


@pytest.mark.parametrize(("who", "where"), [("member", "/teams/startup-perf/"), ("outsider", "/overview/")])
def test_it_sends_root_to_the_team_dashboard_or_the_overview(client, world, who, where):
    login(client, getattr(world, who))
    r = client.get("/")
    assert r.status_code == 302 and r["Location"] == where


def test_it_has_a_skip_link_and_named_navigation(client, world):
    login(client, world.member)
    html = client.get("/overview/").content.decode()
    assert 'href="#main"' in html and 'id="main"' in html and 'aria-label="Main"' in html
