"""The URLs a deployment sets are parsed strictly: a malformed one stops `manage.py` with its variable's name
(REDIS_URL without a scheme was taken as a broker address and looped on an AMQP error; a DATABASE_URL with no
database, a PERF_BASE_URL that is no URL, an EMAIL_URL with a bad port or tls flag were accepted)."""

import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from perfplatform.env import env_url
from tests.live import ROOT


def check(tmp_path, **env) -> subprocess.CompletedProcess:
    skip = ("DATABASE_URL", "REDIS_URL", "EMAIL_URL", "PERF_BASE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE")
    base = {k: v for k, v in os.environ.items() if k not in skip}
    return subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**base, "PERF_VAR_DIR": str(tmp_path), **env})


@pytest.mark.parametrize("name,value,says", [
    ("REDIS_URL", "localhost:6379", "REDIS_URL must be a URL starting redis:// or rediss://"),
    ("REDIS_URL", "unix:///run/redis.sock", "REDIS_URL must be a URL starting redis:// or rediss://"),
    ("REDIS_URL", "redis://", "REDIS_URL names no host"),
    ("REDIS_URL", "redis://h:port/0", "REDIS_URL has a port that is not a number"),
    ("DATABASE_URL", "postgres://", "DATABASE_URL names no database"),
    ("PERF_BASE_URL", "notaurl", "PERF_BASE_URL must be a URL starting http:// or https://"),
    ("EMAIL_URL", "smtp://h:abc", "EMAIL_URL has a port that is not a number"),
    ("EMAIL_URL", "smtp://h?tls=maybe", "EMAIL_URL's tls must be one of"),
])
def test_it_stops_on_a_malformed_url_naming_its_variable(tmp_path, name, value, says):
    r = check(tmp_path, **{name: value})
    assert r.returncode != 0 and says in r.stderr, r.stderr[-2000:]


def test_it_accepts_the_urls_the_readme_documents(tmp_path):
    r = check(tmp_path, REDIS_URL="redis://127.0.0.1:6379/0", PERF_BASE_URL="https://perf.example.com",
              EMAIL_URL="submission://user:pw@smtp.example.com?tls=yes")
    assert r.returncode == 0, r.stderr[-2000:]


def test_it_reads_unix_sockets_without_a_host_and_empty_as_unset(monkeypatch):
    monkeypatch.setenv("U", "unix:///run/redis.sock")
    assert env_url("U", "", schemes=("redis", "unix"), hostless=("unix",)) == "unix:///run/redis.sock"
    monkeypatch.setenv("U", " ")
    assert env_url("U", "", schemes=("redis",)) == ""
    monkeypatch.setenv("U", "unix:///run/redis.sock")
    with pytest.raises(ImproperlyConfigured, match="U names no host"):
        env_url("U", "", schemes=("unix",))
