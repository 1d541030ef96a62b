"""alerts.detection is pure: importing it pulls in no Django, Celery or other platform code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_it_imports_no_django_or_celery():
    code = ("import sys, alerts.detection; bad = [m for m in sys.modules if m.split('.')[0] in "
            "('django', 'celery', 'ninja', 'redis', 'psycopg', 'metrics', 'perfplatform')]; "
            "assert not bad, bad; assert 'alerts.models' not in sys.modules")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr

