"""Layering: perfplatform -> alerts -> metrics; detection and format parsers stay pure; only alerts.tasks
publishes Celery tasks (import-linter)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_it_keeps_the_import_contracts():
    lint = Path(sys.executable).parent / "lint-imports"
    r = subprocess.run([str(lint), str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Only alerts.tasks publishes tasks" in r.stdout
    assert "Contracts: 4 kept, 0 broken." in r.stdout
