"""The models and the migrations agree: a model change without its migration fails here, not on a deployment."""

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_it_has_a_migration_for_every_model_change(capsys):
    try:
        call_command("makemigrations", "--check", "--dry-run", verbosity=1)
    except SystemExit as exc:  # --check exits non-zero when a migration is missing
        pytest.fail(f"models changed without a migration (exit {exc.code}): {capsys.readouterr().out}")
    assert "No changes detected" in capsys.readouterr().out
