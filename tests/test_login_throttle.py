"""Sign-in throttling: 429 after PERF_LOGIN_MAX_FAILURES failures per username or per address."""

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh(settings):
    settings.PERF_LOGIN_MAX_FAILURES = 20
    cache.clear()
    get_user_model().objects.create_user("alice", password="right-password")
    yield
    cache.clear()


def sign_in(client, username, password, addr="10.0.0.1"):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=addr)


def test_it_answers_429_after_20_failures_for_one_user_even_with_the_right_password(client):
    for i in range(20):
        assert sign_in(client, "alice", "wrong", addr=f"10.0.1.{i}").status_code == 200  # the form again
    r = sign_in(client, "alice", "right-password", addr="10.0.2.1")
    assert r.status_code == 429
    assert int(r["Retry-After"]) > 0
    assert "_auth_user_id" not in client.session


def test_it_answers_429_after_20_failures_from_one_address(client):
    for i in range(20):
        sign_in(client, f"user{i}", "wrong", addr="10.9.9.9")
    assert sign_in(client, "alice", "right-password", addr="10.9.9.9").status_code == 429
    assert sign_in(client, "alice", "right-password", addr="10.9.9.8").status_code == 302


def test_it_lets_a_user_in_below_the_limit_and_forgets_their_failures(client):
    for _ in range(19):
        sign_in(client, "alice", "wrong", addr="10.0.0.5")
    assert sign_in(client, "alice", "right-password", addr="10.0.0.6").status_code == 302
    client.logout()
    for _ in range(19):
        sign_in(client, "alice", "wrong", addr="10.0.0.7")
    assert sign_in(client, "alice", "right-password", addr="10.0.0.8").status_code == 302
