"""No secret in the repository or the logs."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest

from tests.factories import native_body

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.django_db(transaction=True)
def test_it_never_logs_an_upload_token_or_webhook_secret(upload, app_token, caplog, tmp_path, settings):
    from django.core.management import call_command

    settings.PERF_WEBHOOK_ALLOW_PRIVATE = False  # the delivery fails and logs why
    (tmp_path / "c.yaml").write_text(
        "teams:\n  - name: central-perf\n    channels:\n"
        "      - {type: webhook, url: 'http://127.0.0.1:9/h', secret: 'hush-hush-webhook-secret'}\n"
    )
    call_command("load_config", str(tmp_path / "c.yaml"))
    caplog.set_level(logging.DEBUG)
    from tests.factories import history_bodies

    for body in history_bodies(45, shifts={"size.apk.download": (30, 0.05)}):
        upload(body)
    upload(native_body(), token="pp_wrong-token-value")
    text = caplog.text
    assert "Delivery" in text or "delivery" in text  # the failing webhook was logged...
    assert app_token[1] not in text  # ...but neither the token
    assert "hush-hush-webhook-secret" not in text  # nor the signing secret
    assert "pp_wrong-token-value" not in text


def test_it_keeps_no_secret_key_in_the_repository():
    """No literal key is assigned to SECRET_KEY anywhere (settings read it from the environment)."""
    import re

    literal = re.compile(r"""SECRET_KEY\s*[:=]\s*["'][^"'$]{8,}["']""")
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    offenders = []
    for name in files:
        path = ROOT / name
        if path.suffix not in {".py", ".yml", ".yaml", ".toml", ".cfg", ".env", ".ini"} or not path.is_file():
            continue
        for line in path.read_text(errors="replace").splitlines():
            if literal.search(line):
                offenders.append(f"{name}: {line.strip()}")
    assert offenders == []
    assert literal.search("SECRET" + '_KEY = "django-insecure-abc123"')  # the check itself can fail


def test_it_generates_a_private_key_file_when_none_is_set(tmp_path):
    import os
    import sys

    env = {**os.environ, "PERF_VAR_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("SECRET_KEY", None)
    probe = "from django.conf import settings; print(settings.SECRET_KEY)"
    keys = [subprocess.run([sys.executable, "-c", "import django, os; os.environ['DJANGO_SETTINGS_MODULE']="
                            "'perfplatform.settings'; django.setup(); " + probe], env=env, capture_output=True,
                           text=True, check=True).stdout.strip() for _ in range(2)]
    assert keys[0] == keys[1] and len(keys[0]) >= 50
    assert oct((tmp_path / "secret_key").stat().st_mode & 0o777) == "0o600"
