"""An upload may not silently redefine a stored metric's kind or unit (409); migrate_metric does it on purpose.
A time sent in another time unit is the same metric, scaled."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from metrics.models import Measurement, Metric
from tests.conftest import FIXTURES
from tests.factories import native_body

pytestmark = pytest.mark.django_db


def test_it_refuses_an_upload_that_changes_a_metrics_unit_or_kind_with_409_and_the_path(upload):
    assert upload(native_body(1)).status_code == 201
    stored = Measurement.objects.count()
    body = native_body(2)
    body["metrics"][0]["unit"] = "frames"
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


def test_it_stores_a_time_sent_in_another_time_unit_scaled_to_the_metrics_own(upload, client, app_token):
    # Google Benchmark's time_unit is each benchmark author's choice: a run in s after one in ns is the same metric.
    assert upload(native_body(1)).status_code == 201  # startup.cold.ttid in ms
    body = native_body(2)
    body["metrics"][0]["unit"] = "s"
    body["metrics"][0]["samples"] = [0.4121, 0.398, 0.4053]
    del body["metrics"][1]["unit"]  # no unit: the stored one
    assert upload(body).status_code == 201
    assert Metric.objects.get(name="startup.cold.ttid").unit == "ms"
    _, raw = app_token
    doc = client.get("/api/v1/builds/com.example.shop/android/2", HTTP_AUTHORIZATION=f"Bearer {raw}").json()
    got = {m["metric"]: m for m in doc["measurements"]}
    assert got["startup.cold.ttid"]["unit"] == "ms"
    assert got["startup.cold.ttid"]["samples"] == pytest.approx([412.1, 398.0, 405.3])
    assert got["size.apk.download"]["unit"] == "bytes"


def test_it_takes_google_benchmark_runs_whose_time_unit_changed(upload):
    query = "?app=com.example.shop&platform=android&branch=main&format=google-benchmark&build="
    first = (FIXTURES / "formats" / "google-benchmark" / "test1_run1.json").read_bytes()
    second = (FIXTURES / "formats" / "google-benchmark" / "test1_run2.json").read_bytes()
    assert upload(first, query=query + "1").status_code == 201
    r = upload(second, query=query + "2")
    assert r.status_code == 201, r.content
    assert Metric.objects.get(name="BM_DifferentTimeUnit").unit == "s"
    values = list(Measurement.objects.filter(series__metric__name="BM_DifferentTimeUnit")
                  .order_by("build__ext_id").values_list("value", flat=True))
    assert len(values) == 2 and values[1] < 1e-3  # ns in run 2, stored in the metric's s


def test_it_keeps_a_metrics_direction_when_a_later_upload_leaves_it_out(upload):
    first = native_body(1)
    first["metrics"].append({"name": "scroll.score", "kind": "score", "unit": "pts", "value": 90.0,
                             "lower_is_better": False})
    assert upload(first).status_code == 201
    second = native_body(2)
    second["metrics"].append({"name": "scroll.score", "kind": "score", "unit": "pts", "value": 91.0})
    assert upload(second).status_code == 201
    assert Metric.objects.get(name="scroll.score").lower_is_better is False
    third = native_body(3)
    third["metrics"].append({"name": "scroll.score", "kind": "score", "unit": "pts", "value": 92.0,
                             "lower_is_better": True})
    assert upload(third).status_code == 201
    assert Metric.objects.get(name="scroll.score").lower_is_better is True


def test_it_refuses_a_time_that_overflows_once_converted_and_stores_nothing(upload):
    assert upload(native_body(1)).status_code == 201  # startup.cold.ttid in ms
    stored = Measurement.objects.count()
    body = native_body(2)
    body["metrics"][0]["unit"] = "s"
    body["metrics"][0]["samples"] = [1e306, 2e306]  # finite in s, not in ms
    r = upload(body)
    assert r.status_code == 400 and r.json()["errors"][0]["path"] == "metrics[0]", r.json()
    assert Measurement.objects.count() == stored
