"""manage.py seed_demo: the demo history, its teams and user, idempotent, with the planted shifts found."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from alerts.models import Alert, Team
from metrics.models import Build, Measurement, Series

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_loads_the_demo_once_and_finds_most_planted_shifts(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    out = StringIO()
    call_command("seed_demo", builds=120, stdout=out)
    counts = (Build.objects.count(), Series.objects.count(), Measurement.objects.count(), Alert.objects.count())
    assert Build.objects.filter(role="branch").count() == 3 * 2 * 120
    assert counts[1] >= 3 * 2 * 150
    assert Measurement.objects.filter(series__scope="branch").count() == Series.objects.filter(scope="branch").count() * 120
    assert set(Build.objects.filter(role="branch").values_list("analysis", flat=True)) == {"done"}
    # The pull-request builds of the demo and their checks: clean, regressing, a device main never ran.
    from alerts.models import Check

    checks = dict(Check.objects.values_list("build__ext_id", "status"))
    assert checks["pr-demo-slower"] == "fail" and checks["pr-demo-newdevice"] == "no_baseline"
    assert checks["pr-demo-clean"] in ("pass", "inconclusive")
    assert authenticate(username="demo", password="demo") is not None
    assert Team.objects.filter(name="startup-perf", members__username="demo").exists()
    assert "demo login: user 'demo', password 'demo'" in out.getvalue()

    call_command("seed_demo", builds=120, stdout=StringIO())
    assert (Build.objects.count(), Series.objects.count(), Measurement.objects.count(), Alert.objects.count()) == counts

    planted = json.loads((tmp_path / "demo-planted.json").read_text())
    assert len(planted) == 36
    found = sum(
        Alert.objects.filter(series__app__name=p["app"], series__platform=p["platform"],
                             series__metric__name=p["metric"], build__ext_id=p["build"],
                             direction=p["direction"]).exclude(detection="withdrawn").exists()
        for p in planted
    )
    assert found >= 30, f"only {found} of 36 planted shifts alerted at their culprit build"
