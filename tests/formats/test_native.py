import copy

import pytest

from metrics.formats import BuildInfo, UploadInvalid
from metrics.formats.native import parse

CONTRACT_EXAMPLE = {
    "app": "com.example.shop",
    "platform": "android",
    "branch": "main",
    "device": "pixel-6",
    "build": {
        "id": "4711",
        "commit": "9f2c1e0",
        "timestamp": "2026-12-01T10:00:00Z",
        "version": "7.3.0",
        "parent_commit": "77ab310",
    },
    "metrics": [
        {"name": "startup.cold.ttid", "kind": "time", "unit": "ms", "samples": [412.1, 398.0, 405.3]},
        {"name": "size.apk.download", "kind": "size", "unit": "bytes", "value": 31457280},
        {"name": "crash.rate", "kind": "rate", "unit": "ratio", "count": 12, "total": 100000},
    ],
}


def body(**changes):
    b = copy.deepcopy(CONTRACT_EXAMPLE)
    b.update(changes)
    return b


def metric(**fields):
    return body(metrics=[{"name": "m", "kind": "time", **fields}])


def errors_of(b):
    with pytest.raises(UploadInvalid) as e:
        parse(b)
    return [(err.path, err.message) for err in e.value.errors]


def paths_of(b):
    return [p for p, _ in errors_of(b)]


def test_it_parses_the_contract_example():
    up = parse(body())
    assert (up.app, up.platform, up.branch, up.device) == ("com.example.shop", "android", "main", "pixel-6")
    assert up.build == BuildInfo(
        id="4711",
        commit="9f2c1e0",
        parent_commit="77ab310",
        timestamp="2026-12-01T10:00:00Z",
        version="7.3.0",
    )
    ttid, size, crash = up.metrics
    assert (ttid.name, ttid.kind, ttid.unit, ttid.samples, ttid.value) == (
        "startup.cold.ttid", "time", "ms", (412.1, 398.0, 405.3), None,
    )  # fmt: skip
    assert (size.value, size.samples, size.lower_is_better) == (31457280.0, None, True)
    assert (crash.count, crash.total, crash.value) == (12, 100000, None)


def test_it_defaults_unit_and_lower_is_better():
    (m,) = parse(metric(value=1.5, lower_is_better=False)).metrics
    assert (m.unit, m.lower_is_better) == ("", False)
    (m,) = parse(metric(value=1)).metrics
    assert m.lower_is_better is True


def test_it_ignores_unknown_keys():
    b = body(extra={"x": 1})
    b["metrics"][0]["note"] = "hi"
    b["build"]["ci_url"] = "https://ci"
    assert len(parse(b).metrics) == 3


def test_it_allows_missing_top_level_fields():
    up = parse({"metrics": [{"name": "a", "kind": "other", "value": 0}]})
    assert (up.app, up.platform, up.branch, up.device, up.build) == (None, None, None, None, BuildInfo())


def test_it_takes_a_build_id_written_as_a_json_integer():
    assert parse(body(build={"id": 4711})).build.id == "4711"
    assert paths_of(body(build={"id": True})) == ["build.id"]
    assert paths_of(body(build={"id": -1})) == ["build.id"]


def test_it_reports_all_errors_with_paths():
    b = body(
        app=5,
        build={"id": 47.11, "timestamp": 1700000000, "commit": ["x"]},
        metrics=[
            {"name": "ok", "kind": "time", "value": 1},
            {"name": "bad name!", "kind": "speed", "value": 1},
            {"name": "s", "kind": "time", "samples": [1, "2", None, True, float("nan")]},
            {"name": "ok", "kind": "time", "value": 2},
        ],
    )
    assert paths_of(b) == [
        "app",
        "build.id",
        "build.commit",
        "build.timestamp",
        "metrics[1].name",
        "metrics[1].kind",
        "metrics[2].samples[1]",
        "metrics[2].samples[2]",
        "metrics[2].samples[3]",
        "metrics[2].samples[4]",
        "metrics[3]",
    ]


def test_it_names_the_wrong_type():
    assert errors_of(body(branch=["main"])) == [("branch", "must be a string, not a list")]
    assert errors_of(body(build="4711")) == [
        ("build", "must be an object with id, commit, timestamp, version")
    ]


@pytest.mark.parametrize(
    "fields, path",
    [
        ({}, "metrics[0]"),
        ({"value": 1, "samples": [1]}, "metrics[0]"),
        ({"value": 1, "count": 1, "total": 2}, "metrics[0]"),
        ({"value": "1"}, "metrics[0].value"),
        ({"value": True}, "metrics[0].value"),
        ({"value": float("inf")}, "metrics[0].value"),
        ({"value": 10**400}, "metrics[0].value"),
        ({"samples": []}, "metrics[0].samples"),
        ({"samples": "1,2"}, "metrics[0].samples"),
        ({"samples": [0.0] * 10_001}, "metrics[0].samples"),
        ({"samples": [1, float("-inf")]}, "metrics[0].samples[1]"),
        ({"count": 1}, "metrics[0].total"),
        ({"total": 1}, "metrics[0].count"),
        ({"count": 1.0, "total": 2}, "metrics[0].count"),
        ({"count": True, "total": 2}, "metrics[0].count"),
        ({"count": -1, "total": 2}, "metrics[0].count"),
        ({"count": 3, "total": 2}, "metrics[0].count"),
        ({"count": 0, "total": 0}, "metrics[0].total"),
        ({"count": 0, "total": False}, "metrics[0].total"),
        ({"value": 1, "unit": "x" * 51}, "metrics[0].unit"),
        ({"value": 1, "unit": 3}, "metrics[0].unit"),
        ({"value": 1, "lower_is_better": "yes"}, "metrics[0].lower_is_better"),
    ],
)
def test_it_rejects_bad_metrics(fields, path):
    assert paths_of(metric(**fields)) == [path]


def test_it_accepts_the_limits():
    (m,) = parse(metric(samples=[1.0] * 10_000, unit="u" * 50)).metrics
    assert len(m.samples) == 10_000
    (m,) = parse(metric(count=0, total=1)).metrics
    assert (m.count, m.total) == (0, 1)
    (m,) = parse(metric(count=5, total=5)).metrics
    assert m.count == 5


@pytest.mark.parametrize("name", ["", "a" * 201, "a b", "ä", "a\n", None, 5])
def test_it_rejects_bad_names(name):
    b = body(metrics=[{"name": name, "kind": "time", "value": 1}])
    assert paths_of(b) == ["metrics[0].name"]


def test_it_accepts_every_allowed_name_character():
    name = "Az09._/:-" + "x" * 191
    assert parse(body(metrics=[{"name": name, "kind": "time", "value": 1}])).metrics[0].name == name


def test_it_requires_kind():
    assert paths_of(body(metrics=[{"name": "a", "value": 1}])) == ["metrics[0].kind"]


@pytest.mark.parametrize("metrics", [None, [], {}, "x"])
def test_it_requires_a_non_empty_metric_list(metrics):
    b = body(metrics=metrics)
    if metrics is None:
        del b["metrics"]
    assert paths_of(b) == ["metrics"]


def test_it_limits_the_number_of_metrics():
    many = [{"name": f"m{i}", "kind": "count", "value": i} for i in range(5_001)]
    assert paths_of(body(metrics=many)) == ["metrics"]
    assert len(parse(body(metrics=many[:5_000])).metrics) == 5_000


def test_it_reports_non_object_metrics_and_bodies():
    assert paths_of(body(metrics=[1, None])) == ["metrics[0]", "metrics[1]"]
    assert paths_of([CONTRACT_EXAMPLE]) == [""]


def test_it_reports_duplicate_names_at_the_second():
    b = body(metrics=[{"name": "a", "kind": "time", "value": 1}, {"name": "a", "kind": "time", "value": 2}])
    (err,) = errors_of(b)
    assert err[0] == "metrics[1]"
    assert "duplicate" in err[1]
