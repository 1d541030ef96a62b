import dataclasses
from datetime import UTC, datetime, timedelta, timezone

import pytest

from metrics.formats import BuildInfo, ParsedMetric, ParsedUpload, UploadInvalid
from metrics.formats.complete import CompleteUpload, complete

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
METRIC = ParsedMetric(name="startup.cold.ttid", kind="time", unit="ms", samples=(1.0, 2.0))
FULL = ParsedUpload(
    app="com.example.shop",
    platform="android",
    branch="main",
    device="pixel-6",
    build=BuildInfo(
        id="4711",
        commit="9f2c1e0",
        parent_commit="77ab310",
        timestamp="2026-12-01T10:00:00Z",
        version="7.3.0",
    ),
    metrics=(METRIC,),
)
BARE = ParsedUpload(metrics=(METRIC,))
PARAMS = {"app": "com.example.shop", "platform": "android", "branch": "main", "build": "4711"}


def errors_of(parsed, params):
    with pytest.raises(UploadInvalid) as e:
        complete(parsed, params, now=NOW)
    return [(err.path, err.message) for err in e.value.errors]


def test_it_completes_a_full_native_upload():
    up = complete(FULL, {}, now=NOW)
    assert up == CompleteUpload(
        app="com.example.shop",
        platform="android",
        branch="main",
        device="pixel-6",
        build_id="4711",
        commit="9f2c1e0",
        parent_commit="77ab310",
        version="7.3.0",
        timestamp=datetime(2026, 12, 1, 10, 0, tzinfo=UTC),
        metrics=(METRIC,),
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        up.app = "x"


def test_it_fills_missing_fields_from_query_params():
    up = complete(
        BARE, {**PARAMS, "commit": "abc", "device": "Pixel 5", "timestamp": "2026-11-30T08:00:00"}, now=NOW
    )
    assert (up.app, up.platform, up.branch, up.build_id, up.commit, up.device) == (
        "com.example.shop", "android", "main", "4711", "abc", "Pixel 5",
    )  # fmt: skip
    assert up.timestamp == datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def test_it_lets_non_empty_query_params_win():
    params = {"app": "other.app", "device": "emulator", "build": "4712", "timestamp": "", "branch": ""}
    up = complete(FULL, params, now=NOW)
    assert (up.app, up.device, up.build_id, up.branch) == ("other.app", "emulator", "4712", "main")
    assert up.timestamp == datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def test_it_lists_every_missing_required_field():
    errors = errors_of(BARE, {})
    assert [p for p, _ in errors] == ["app", "platform", "branch", "build.id"]
    assert dict(errors)["app"] == "is required: give it in the body or as ?app="
    assert dict(errors)["build.id"] == "is required: give it in the body or as ?build="


def test_it_leaves_optional_fields_empty():
    up = complete(BARE, PARAMS, now=NOW)
    assert (up.device, up.commit, up.parent_commit, up.version, up.timestamp) == ("", None, None, None, None)


@pytest.mark.parametrize(
    "key, value, path",
    [
        ("app", "com example", "app"),
        ("app", "a" * 101, "app"),
        ("platform", "android/arm", "platform"),
        ("branch", "feature branch", "branch"),
        ("branch", "b" * 201, "branch"),
        ("build", "47/11", "build.id"),
        ("build", "b" * 101, "build.id"),
        ("device", "pixel/6", "device"),
        ("commit", "abc def", "build.commit"),
        ("parent_commit", "a" * 101, "build.parent_commit"),
        ("version", "v" * 101, "build.version"),
        ("timestamp", "yesterday", "build.timestamp"),
        ("timestamp", "1733050000", "build.timestamp"),
        ("timestamp", "2026-12-01", "build.timestamp"),  # a date alone cannot order builds
        ("timestamp", "20261201T100000Z", "build.timestamp"),  # basic format: not promised
        ("timestamp", "1999-12-31T23:59:59Z", "build.timestamp"),
        ("timestamp", "2027-12-02T12:00:01Z", "build.timestamp"),
        ("timestamp", "0001-01-01T00:00:00+01:00", "build.timestamp"),
    ],
)
def test_it_rejects_bad_values(key, value, path):
    assert [p for p, _ in errors_of(BARE, {**PARAMS, key: value})] == [path]


@pytest.mark.parametrize(
    "key, value",
    [
        ("app", "com.example.shop-2_x"),
        ("branch", "release/7.3+hotfix"),
        ("build", "7.3.0+4711:rc-1"),
        ("device", "Pixel 6 (arm64):v2+"),
        ("commit", "refs/heads/9f2c1e0"),
        ("version", "7.3.0 (build 4711)"),
    ],
)
def test_it_accepts_allowed_characters(key, value):
    up = complete(BARE, {**PARAMS, key: value}, now=NOW)
    assert value in (up.app, up.branch, up.build_id, up.device, up.commit, up.version)


def test_it_says_where_a_bad_value_came_from():
    ((path, message),) = errors_of(
        dataclasses.replace(BARE, app="bad app"), {k: v for k, v in PARAMS.items() if k != "app"}
    )
    assert path == "app"
    assert "from the body" in message
    ((path, message),) = errors_of(BARE, {**PARAMS, "app": "bad app"})
    assert "from ?app=" in message


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("2026-12-01T10:00:00Z", datetime(2026, 12, 1, 10, 0, tzinfo=UTC)),
        ("2026-12-01T10:00:00", datetime(2026, 12, 1, 10, 0, tzinfo=UTC)),
        ("2026-12-01T12:00:00+02:00", datetime(2026, 12, 1, 10, 0, tzinfo=UTC)),
        ("2026-12-01T10:00:00.250Z", datetime(2026, 12, 1, 10, 0, 0, 250000, tzinfo=UTC)),
        ("2026-12-01T10:00:00.123456789Z", datetime(2026, 12, 1, 10, 0, 0, 123456, tzinfo=UTC)),
        ("2000-01-01T00:00:00Z", datetime(2000, 1, 1, tzinfo=UTC)),
        ("2026-12-02T12:00:00Z", NOW + timedelta(days=1)),
        ("2027-12-02T12:00:00Z", NOW + timedelta(days=366)),  # synthetic histories run ahead of today
    ],
)
def test_it_parses_timestamps_to_aware_utc(raw, expected):
    ts = complete(BARE, {**PARAMS, "timestamp": raw}, now=NOW).timestamp
    assert ts == expected
    assert ts.utcoffset() == timedelta(0)


def test_it_treats_a_naive_now_as_utc():
    up = complete(BARE, {**PARAMS, "timestamp": "2026-12-02T11:00:00+00:00"}, now=NOW.replace(tzinfo=None))
    assert up.timestamp == datetime(2026, 12, 2, 11, 0, tzinfo=UTC)


def test_it_compares_the_future_limit_across_time_zones():
    ahead = datetime(2027, 12, 2, 14, 0, tzinfo=timezone(timedelta(hours=3)))  # 11:00 UTC, within the year
    assert complete(BARE, {**PARAMS, "timestamp": ahead.isoformat()}, now=NOW).timestamp == ahead
    over = datetime(2027, 12, 2, 12, 30, tzinfo=timezone(timedelta(hours=-1)))  # 13:30 UTC, past it
    assert [p for p, _ in errors_of(BARE, {**PARAMS, "timestamp": over.isoformat()})] == ["build.timestamp"]


def test_it_needs_metrics():
    assert [p for p, _ in errors_of(ParsedUpload(), PARAMS)] == ["metrics"]


def test_it_reports_all_problems_at_once():
    paths = [p for p, _ in errors_of(BARE, {"app": "a b", "device": "x/y", "timestamp": "soon"})]
    assert paths == ["app", "platform", "branch", "device", "build.id", "build.timestamp"]
