"""An upload may not silently redefine a stored metric's kind or unit (409); migrate_metric does it on purpose."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from metrics.models import Measurement, Metric
from tests.factories import native_body

pytestmark = pytest.mark.django_db


def test_it_refuses_an_upload_that_changes_a_metrics_unit_or_kind_with_409_and_the_path(upload):
    assert upload(native_body(1)).status_code == 201
    stored = Measurement.objects.count()
    body = native_body(2)
    body["metrics"][0]["unit"] = "s"
    body["metrics"][1]["kind"] = "memory"
    r = upload(body)
    assert r.status_code == 409
    assert [e["path"] for e in r.json()["errors"]] == ["metrics[0].unit", "metrics[1].kind"]
    assert Measurement.objects.count() == stored
    assert Metric.objects.get(name="startup.cold.ttid").unit == "ms"
    assert Metric.objects.get(name="size.apk.download").kind == "size"


def test_it_changes_a_metric_on_purpose_with_migrate_metric(upload):
    upload(native_body(1))
    with pytest.raises(CommandError, match="--force"):
        call_command("migrate_metric", "com.example.shop", "startup.cold.ttid", "--unit", "s")
    assert Metric.objects.get(name="startup.cold.ttid").unit == "ms"
    call_command("migrate_metric", "com.example.shop", "startup.cold.ttid", "--unit", "s", "--force", stdout=StringIO())
    assert Metric.objects.get(name="startup.cold.ttid").unit == "s"
    body = native_body(2)
    body["metrics"][0]["unit"] = "s"
    assert upload(body).status_code == 201
