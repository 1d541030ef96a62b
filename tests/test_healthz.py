"""`/healthz` answers a probe by any address (compose's healthcheck asks 127.0.0.1, which production's
ALLOWED_HOSTS does not list); every other path still checks the Host header."""

import pytest
import yaml

from tests.live import ROOT


@pytest.mark.django_db
def test_it_answers_a_probe_by_an_address_allowed_hosts_does_not_list(client, settings):
    settings.ALLOWED_HOSTS = ["perf.example.com"]
    r = client.get("/healthz", HTTP_HOST="127.0.0.1:8000")
    assert r.status_code == 200 and r.json()["status"] == "ok"
    assert client.get("/accounts/login/", HTTP_HOST="127.0.0.1:8000").status_code == 400
    assert client.get("/accounts/login/", HTTP_HOST="perf.example.com").status_code == 200


def test_it_passes_compose_users_the_settings_readme_documents():
    env = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["x-app"]["environment"]
    settings_src = (ROOT / "perfplatform" / "settings.py").read_text()
    for name in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "ALLOWED_HOSTS", "PERF_BASE_URL", "EMAIL_URL",
                 "PERF_HTTPS", "CSRF_TRUSTED_ORIGINS"):
        assert name in env, f"docker-compose.yml does not pass {name}"
        assert f'"{name}"' in settings_src, f"settings do not read {name}"
    assert "DEBUG" not in env  # off in production whatever the operator's shell holds


@pytest.mark.django_db
def test_it_answers_503_while_the_database_is_down(client, monkeypatch):
    from django.db import OperationalError

    from perfplatform import health

    def down(request):
        raise OperationalError("connection refused")

    monkeypatch.setattr(health, "healthz", down)
    r = client.get("/healthz")
    assert r.status_code == 503 and r["Retry-After"] == "5" and r.json()["status"] == "database unavailable"
