import json
from pathlib import Path

import pytest

from metrics.formats import UploadInvalid, detect_format
from metrics.formats.bmf import measure_kind, parse

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "formats" / "bmf"
REPORTS = sorted(p.name for p in FIXTURES.glob("*.json") if not p.name.endswith(".schema.json"))


def load(name):
    return json.loads((FIXTURES / name).read_text())


EXPECTED = {
    "report_bmf_mixed.json": {
        "31aba8a9-977a-47d1-9fb6-e6b94b428471.latency": ("time", "ns", True, 3247.0),
        "benchmark-b.latency": ("time", "ns", True, 3443.0),
        "tests::benchmark_c.latency": ("time", "ns", True, 3361.0),
    },
    "report_dhat.json": {
        "bench_play_game.Final_Blocks": ("memory", "blocks", True, 0.0),
        "bench_play_game.Final_Bytes": ("memory", "bytes", True, 0.0),
        "bench_play_game.Max_Blocks": ("memory", "blocks", True, 1.0),
        "bench_play_game.Max_Bytes": ("memory", "bytes", True, 9.0),
        "bench_play_game.Total_Blocks": ("memory", "blocks", True, 100.0),
        "bench_play_game.Total_Bytes": ("memory", "bytes", True, 662.0),
    },
    "report_latency.json": {
        "tests::benchmark_a.latency": ("time", "ns", True, 3247.0),
        "tests::benchmark_b.latency": ("time", "ns", True, 3443.0),
        "tests::benchmark_c.latency": ("time", "ns", True, 3361.0),
    },
}


def test_it_has_expectations_for_every_report():
    assert REPORTS == sorted(EXPECTED)


@pytest.mark.parametrize("name", REPORTS)
def test_it_parses_every_real_report(name):
    body = load(name)
    assert detect_format(body) == "bmf"
    upload = parse(body)
    assert {m.name: (m.kind, m.unit, m.lower_is_better, m.value) for m in upload.metrics} == EXPECTED[name]
    assert all(m.samples is None for m in upload.metrics)


def test_it_is_not_fooled_by_the_schema_file():
    schema = load("bmf.schema.json")
    with pytest.raises(UploadInvalid):
        parse(schema)


@pytest.mark.parametrize(
    "measure, expected",
    [
        ("latency", ("time", "ns", True)),
        ("throughput", ("score", "ops/s", False)),
        ("file-size", ("size", "bytes", True)),
        ("build-time", ("time", "s", True)),
        ("instructions", ("count", "", True)),
        ("estimated-cycles", ("count", "", True)),
        ("Max Bytes", ("memory", "bytes", True)),
        ("max_rss", ("memory", "", True)),
        ("happiness", ("other", "", True)),
    ],
)
def test_it_maps_measures_to_kinds(measure, expected):
    assert measure_kind(measure) == expected


def test_it_reports_bad_values_with_paths():
    body = {
        "a": {"latency": {"value": "1"}, "throughput": {"value": 5, "upper_value": float("inf")}},
        "b c": {"latency": {"lower_value": 1}},
        "d": 4,
    }
    with pytest.raises(UploadInvalid) as e:
        parse(body)
    assert [err.path for err in e.value.errors] == [
        "a.latency.value",
        "a.throughput.upper_value",
        '["b c"].latency.value',
        "d",
    ]


def test_it_reports_an_empty_report():
    with pytest.raises(UploadInvalid) as e:
        parse({})
    assert e.value.errors[0].message == "no measurements found"


def test_it_reads_throughput_as_higher_is_better():
    (m,) = parse({"bench": {"throughput": {"value": 12.5, "lower_value": 11, "upper_value": 14}}}).metrics
    assert (m.name, m.kind, m.lower_is_better, m.value) == ("bench.throughput", "score", False, 12.5)
