"""POST /api/v1/uploads: storing, idempotence, replacement, and every kind of rejection."""

from __future__ import annotations

import json

import pytest

from metrics.models import App, Build, Measurement, Series, UploadRecord, UploadToken
from tests.conftest import FIXTURES
from tests.factories import native_body

pytestmark = pytest.mark.django_db


def stored_counts() -> tuple[int, int, int, int]:
    return Build.objects.count(), Series.objects.count(), Measurement.objects.count(), UploadRecord.objects.count()


def test_it_stores_a_native_upload(upload):
    r = upload(native_body())
    assert r.status_code == 201, r.content
    doc = r.json()
    assert doc["measurements"] == 3
    assert doc["analysis"] == "queued"
    assert doc["build"]["id"] == "4711"
    assert doc["build"]["url"].endswith("/api/v1/builds/com.example.shop/android/4711")
    build = Build.objects.get(ext_id="4711")
    assert (build.branch, build.commit, build.parent_commit, build.version) == ("main", "c4711", "p4711", "7.3.0")
    assert build.analysis == Build.Analysis.PENDING
    ttid = Measurement.objects.get(series__metric__name="startup.cold.ttid")
    assert ttid.sample_list() == [412.1, 398.0, 405.3]
    assert ttid.value == 405.3  # the median
    crash = Measurement.objects.get(series__metric__name="crash.rate")
    assert (crash.count, crash.total, crash.value) == (12, 100000, 12 / 100000)
    assert Series.objects.get(metric__name="size.apk.download").device == "pixel-6"


def test_it_answers_200_and_stores_nothing_twice_on_a_resend(upload):
    assert upload(native_body()).status_code == 201
    before = stored_counts()
    r = upload(native_body())
    assert r.status_code == 200
    assert r.json()["measurements"] == 3
    assert stored_counts() == before


def test_it_replaces_values_on_a_changed_reupload(upload):
    upload(native_body())
    body = native_body()
    body["metrics"][0]["samples"] = [500.0, 501.0]
    r = upload(body)
    assert r.status_code == 201
    m = Measurement.objects.get(series__metric__name="startup.cold.ttid")
    assert m.sample_list() == [500.0, 501.0]
    assert m.value == 500.5
    assert Measurement.objects.count() == 3


def test_it_merges_uploads_of_other_devices_into_one_build(upload):
    upload(native_body(device="pixel-6"))
    upload(native_body(device="pixel-8"))
    assert Build.objects.count() == 1
    assert Measurement.objects.count() == 6
    assert sorted(Series.objects.values_list("device", flat=True).distinct()) == ["pixel-6", "pixel-8"]


def test_it_keeps_series_a_reupload_does_not_mention(upload):
    upload(native_body())
    body = native_body(metrics=[{"name": "startup.cold.ttid", "kind": "time", "unit": "ms", "samples": [1.0]}])
    assert upload(body).status_code == 201
    assert Measurement.objects.count() == 3


def test_it_moves_measurement_times_with_a_corrected_build_timestamp(upload):
    upload(native_body())
    body = native_body()
    body["build"]["timestamp"] = "2026-11-02T09:00:00Z"
    assert upload(body).status_code == 201
    assert {m.build_time.isoformat() for m in Measurement.objects.all()} == {"2026-11-02T09:00:00+00:00"}


def test_it_marks_a_changed_build_pending_again(upload):
    upload(native_body())
    Build.objects.update(analysis=Build.Analysis.DONE)
    assert upload(native_body()).json()["analysis"] == "done"
    body = native_body()
    body["metrics"][1]["value"] = 31457281
    assert upload(body).json()["analysis"] == "queued"
    assert Build.objects.get().analysis == Build.Analysis.PENDING


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda b: b["metrics"][0].update(samples=[1.0, "x"]), "metrics[0].samples[1]"),
        (lambda b: b["metrics"][0].update(samples=[]), "metrics[0].samples"),
        (lambda b: b["metrics"][2].update(count=5, total=2), "metrics[2].count"),
        (lambda b: b["metrics"][2].update(count=-1), "metrics[2].count"),
        (lambda b: b["metrics"][1].update(kind="bogus"), "metrics[1].kind"),
        (lambda b: b["metrics"][1].update(name="has space"), "metrics[1].name"),
        (lambda b: b["metrics"].append(dict(b["metrics"][1])), "metrics[3]"),
        (lambda b: b["build"].update(timestamp="2999-01-01T00:00:00Z"), "build.timestamp"),
        (lambda b: b["build"].update(timestamp="yesterday"), "build.timestamp"),
        (lambda b: b["build"].pop("id"), "build.id"),
        (lambda b: b.pop("branch"), "branch"),
    ],
)
def test_it_rejects_bad_input_with_the_field_path(upload, mutate, path):
    body = native_body()
    mutate(body)
    r = upload(body)
    assert r.status_code == 400, r.content
    paths = [e["path"] for e in r.json()["errors"]]
    assert path in paths, paths
    assert all(e["message"] for e in r.json()["errors"])
    assert stored_counts() == (0, 0, 0, 0)


def test_it_rejects_nan_and_infinity(upload):
    raw = json.dumps(native_body()).replace("412.1", "NaN").replace("31457280", "Infinity")
    r = upload(raw)
    assert r.status_code == 400
    paths = {e["path"] for e in r.json()["errors"]}
    assert {"metrics[0].samples[0]", "metrics[1].value"} <= paths


def test_it_rejects_deeply_nested_json(upload):
    raw = "[" * 100_000 + "]" * 100_000
    r = upload(raw)
    assert r.status_code == 400
    assert "nested" in r.json()["errors"][0]["message"]


def test_it_leaves_stored_data_intact_when_a_reupload_is_rejected(upload):
    upload(native_body())
    before = list(Measurement.objects.order_by("pk").values_list("value", flat=True))
    body = native_body()
    body["metrics"][0]["samples"] = [1.0]
    body["metrics"][2]["count"] = -3
    assert upload(body).status_code == 400
    assert list(Measurement.objects.order_by("pk").values_list("value", flat=True)) == before


def test_it_rejects_a_build_moved_to_another_branch(upload):
    upload(native_body())
    r = upload(native_body(branch="release/7.3"))
    assert r.status_code == 400
    assert r.json()["errors"][0]["path"] == "branch"


def test_it_needs_a_token(client, db):
    r = client.post("/api/v1/uploads", data=json.dumps(native_body()), content_type="application/json")
    assert r.status_code == 401
    assert r.json()["errors"][0]["path"] == "Authorization"


def test_it_rejects_an_unknown_or_revoked_token(upload, app_token):
    assert upload(native_body(), token="pp_not-a-token").status_code == 401
    UploadToken.objects.update(revoked=True)
    assert upload(native_body()).status_code == 401


def test_it_forbids_another_apps_token(upload):
    other = App.objects.create(name="com.example.other")
    _, raw = UploadToken.issue(other)
    r = upload(native_body(), token=raw)
    assert r.status_code == 403
    assert r.json()["errors"][0]["path"] == "app"
    assert stored_counts() == (0, 0, 0, 0)


def test_it_forbids_another_app_named_in_the_query(upload):
    r = upload(native_body(), query="?app=com.example.other")
    assert r.status_code == 403


def test_it_refuses_a_body_over_the_limit(upload, settings):
    settings.PERF_MAX_UPLOAD_BYTES = 2048
    body = native_body()
    body["metrics"][0]["samples"] = [400.0 + i for i in range(1000)]
    r = upload(body)
    assert r.status_code == 413
    assert stored_counts() == (0, 0, 0, 0)


@pytest.mark.parametrize(("data", "ctype"), [(b"not json at all", "application/json"), (b"a=1&b=2", "text/plain"),
                                              (b"metrics=1", "application/x-www-form-urlencoded")])
def test_it_refuses_a_body_that_is_not_json(upload, data, ctype):
    r = upload(data, content_type=ctype)
    assert r.status_code == 415
    assert stored_counts() == (0, 0, 0, 0)


@pytest.mark.parametrize("ctype", ["application/x-www-form-urlencoded", "text/plain", "application/octet-stream"])
def test_it_takes_a_json_body_whatever_content_type_the_client_sent(upload, ctype):
    # The contract's 415 is for a body that is not JSON; curl -d and urllib label JSON as form data by default.
    r = upload(json.dumps(native_body()), content_type=ctype)
    assert r.status_code == 201, r.content


def test_it_only_stores_hashes_of_tokens(app_token):
    _, raw = app_token
    token = UploadToken.objects.get()
    assert raw not in (token.digest, token.hint)
    assert token.digest == UploadToken.digest_of(raw)


FORMAT_FILES = [
    ("macrobenchmark", "macrobenchmark/sample_benchmark_result_1.json"),
    ("google-benchmark", "google-benchmark/test1_run1.json"),
    ("bmf", "bmf/report_latency.json"),
]


@pytest.mark.parametrize(("fmt", "rel"), FORMAT_FILES)
@pytest.mark.parametrize("explicit", [True, False])
def test_it_takes_other_formats_with_build_fields_in_the_query(upload, fmt, rel, explicit):
    raw = (FIXTURES / "formats" / rel).read_bytes()
    query = "?app=com.example.shop&platform=android&branch=main&build=100&commit=abc&timestamp=2026-11-01T10:00:00Z"
    if explicit:
        query += f"&format={fmt}"
    r = upload(raw, query=query)
    assert r.status_code == 201, r.content
    n = r.json()["measurements"]
    assert n > 0
    assert Measurement.objects.count() == n
    assert UploadRecord.objects.get().format == fmt


def test_it_takes_perfherder_payloads(upload):
    lines = (FIXTURES / "formats" / "perfherder" / "perfherder_data_from_treeherder_sample_logs.jsonl").read_text()
    payload = json.loads(lines.splitlines()[0])["data"]
    r = upload(payload, query="?app=com.example.shop&platform=android&branch=main&build=9&format=perfherder")
    assert r.status_code == 201, r.content
    assert UploadRecord.objects.get().format == "perfherder"


def test_it_asks_for_build_fields_a_format_lacks(upload):
    raw = (FIXTURES / "formats" / "bmf" / "report_latency.json").read_bytes()
    r = upload(raw, query="?app=com.example.shop")
    assert r.status_code == 400
    paths = {e["path"] for e in r.json()["errors"]}
    assert {"platform", "branch", "build.id"} <= paths


def test_it_limits_uploads_per_token_with_retry_after(upload, settings):
    from django.core.cache import cache

    cache.clear()
    settings.PERF_UPLOAD_RATE_PER_MINUTE = 3
    codes = [upload(native_body(b)).status_code for b in range(5)]
    assert codes[:3] == [201, 201, 201]
    r = upload(native_body(9))
    assert r.status_code == 429
    assert 1 <= int(r["Retry-After"]) <= 60
    assert Build.objects.count() == 3
    cache.clear()


def test_it_rejects_unicode_metric_names_with_the_path(upload):
    body = native_body()
    body["metrics"][0]["name"] = "startup.kalt.zeit_ü"
    r = upload(body)
    assert r.status_code == 400
    assert r.json()["errors"][0]["path"] == "metrics[0].name"


def test_it_rejects_a_huge_sample_list(upload):
    body = native_body()
    body["metrics"][0]["samples"] = [1.0] * 10_001
    r = upload(body)
    assert r.status_code == 400
    assert r.json()["errors"][0]["path"] == "metrics[0].samples"
