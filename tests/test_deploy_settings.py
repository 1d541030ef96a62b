"""Production settings: `check --deploy` is clean with PERF_HTTPS=true and what README documents."""

import os
import secrets
import subprocess
import sys

from tests.live import ROOT


def deploy_check(tmp_path, **env) -> subprocess.CompletedProcess:
    # DJANGO_ALLOW_ASYNC_UNSAFE: set by the browser tests' session fixture, never by a deployment.
    skip = ("DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE")
    base = {k: v for k, v in os.environ.items() if k not in skip}
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**base, "PERF_VAR_DIR": str(tmp_path), "DEBUG": "false", **env},
    )


def test_it_passes_the_deploy_check_with_the_documented_production_settings(tmp_path):
    r = deploy_check(tmp_path, PERF_HTTPS="true", SECRET_KEY=secrets.token_urlsafe(60),
                     ALLOWED_HOSTS="perf.example.com")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no issues" in r.stdout + r.stderr


def test_it_fails_the_deploy_check_without_https(tmp_path):
    r = deploy_check(tmp_path, SECRET_KEY=secrets.token_urlsafe(60), ALLOWED_HOSTS="perf.example.com")
    assert r.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in r.stdout + r.stderr
