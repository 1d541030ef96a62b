import json
from pathlib import Path

import pytest

from metrics.formats import UploadInvalid, detect_format
from metrics.formats.google_benchmark import parse

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "formats" / "google-benchmark"
FILES = sorted(p.name for p in FIXTURES.glob("*.json"))


def load(name):
    return json.loads((FIXTURES / name).read_text())


def summary(upload):
    """{name: (kind, unit, samples)} for every metric."""
    return {m.name: (m.kind, m.unit, m.samples) for m in upload.metrics}


# name -> a few (metric name, (kind, unit, samples)) read from the file, and the metric count
EXPECTED = {
    "test1_run1.json": (28, {
        "BM_2xFaster": ("time", "ns", (50.0,)),
        "BM_100xFaster.cpu_time": ("time", "ns", (10000.0,)),
        "BM_NotBadTimeUnit": ("time", "s", (0.4,)),
        "BM_NotBadTimeUnit.cpu_time": ("time", "s", (0.5,)),
        "BM_DifferentTimeUnit": ("time", "s", (1.0,)),
    }),
    "test1_run2.json": (28, {
        "BM_2xFaster": ("time", "ns", (25.0,)),
        "BM_1PercentFaster": ("time", "ns", (98.9999999,)),
        "BM_ThirdFaster.cpu_time": ("time", "ns", (66.664,)),
        "BM_DifferentTimeUnit": ("time", "ns", (1.0,)),
    }),
    "test2_run.json": (20, {
        "BM_Hi": ("time", "ms", (42.0,)),
        "BM_Hi.cpu_time": ("time", "ms", (24.0,)),
        "Prefix/BM_Zero/3": ("time", "ns", (30.0,)),
        "BM_Bye.cpu_time": ("time", "ns", (63.0,)),
    }),
    "test3_run0.json": (4, {
        "BM_Two": ("time", "ns", (9.0, 8.0)),
        "BM_Two.cpu_time": ("time", "ns", (90.0, 86.0)),
        "medium": ("time", "ns", (8.0, 9.0)),
        "medium.cpu_time": ("time", "ns", (80.0, 82.0)),
    }),
    "test3_run1.json": (8, {
        "BM_One": ("time", "ns", (9.0,)),
        "BM_Two.cpu_time": ("time", "ns", (72.0,)),
        "short": ("time", "ns", (800.0,)),
        "medium.cpu_time": ("time", "ns", (53.0,)),
    }),
    "test5_run0.json": (2, {
        "BM_ManyRepetitions": ("time", "s", (1.0,)),
        "BM_ManyRepetitions.cpu_time": ("time", "s", (1000.0,)),
    }),
    "test5_run1.json": (2, {
        "BM_ManyRepetitions": ("time", "s", (1000.0,)),
        "BM_ManyRepetitions.cpu_time": ("time", "s", (1.0,)),
    }),
}  # fmt: skip
# These fixtures hold no storable timing: test4_run.json has entries without real_time/cpu_time,
# test4_run0/1.json only a percentage aggregate named "zz".
NO_MEASUREMENTS = ["test4_run.json", "test4_run0.json", "test4_run1.json"]


def test_it_has_expectations_for_every_fixture():
    assert FILES == sorted([*EXPECTED, *NO_MEASUREMENTS])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_it_parses_every_real_file(name):
    body = load(name)
    assert detect_format(body) == "google-benchmark"
    count, expected = EXPECTED[name]
    got = summary(parse(body))
    assert len(got) == count
    assert {k: got[k] for k in expected} == expected


@pytest.mark.parametrize("name", NO_MEASUREMENTS)
def test_it_explains_real_files_without_timings(name):
    body = load(name)
    assert detect_format(body) == "google-benchmark"
    with pytest.raises(UploadInvalid) as e:
        parse(body)
    assert [err.path for err in e.value.errors] == ["benchmarks"]
    assert "no measurements" in e.value.errors[0].message


def test_it_skips_complexity_aggregates():
    names = summary(parse(load("test1_run1.json")))
    assert not any(n.startswith("MyComplexityTest") for n in names)


def entry(name, real, cpu, **extra):
    return {"name": name, "run_name": name, "real_time": real, "cpu_time": cpu, "time_unit": "us", **extra}


def test_it_turns_repetitions_into_samples_and_ignores_their_aggregates():
    body = {
        "context": {"executable": "./bench", "library_build_type": "release"},
        "benchmarks": [
            entry("BM_x/8", 10, 9, run_type="iteration", repetitions=3, repetition_index=0, iterations=100,
                  items_per_second=1000.0),
            entry("BM_x/8", 11, 10, run_type="iteration", repetitions=3, repetition_index=1, iterations=100,
                  items_per_second=900.0),
            entry("BM_x/8", 12, 11, run_type="iteration", repetitions=3, repetition_index=2, iterations=100,
                  items_per_second=800.0),
            {**entry("BM_x/8_mean", 11, 10, run_type="aggregate", aggregate_name="mean"), "run_name": "BM_x/8"},
        ],
    }  # fmt: skip
    got = {m.name: m for m in parse(body).metrics}
    assert got["BM_x/8"].samples == (10.0, 11.0, 12.0)
    assert got["BM_x/8"].unit == "us"
    assert got["BM_x/8.cpu_time"].samples == (9.0, 10.0, 11.0)
    ips = got["BM_x/8.items_per_second"]
    assert (ips.kind, ips.unit, ips.lower_is_better, ips.samples) == (
        "rate",
        "items/s",
        False,
        (1000.0, 900.0, 800.0),
    )
    assert len(got) == 3


def test_it_uses_the_median_aggregate_when_only_aggregates_exist():
    body = {
        "context": {"executable": "./bench"},
        "benchmarks": [
            {**entry("BM_y_mean", 20, 19, run_type="aggregate", aggregate_name="mean"), "run_name": "BM_y"},
            {
                **entry("BM_y_median", 18, 17, run_type="aggregate", aggregate_name="median"),
                "run_name": "BM_y",
            },
            {**entry("BM_y_stddev", 1, 1, run_type="aggregate", aggregate_name="stddev"), "run_name": "BM_y"},
            {**entry("BM_z_mean", 5, 4, run_type="aggregate", aggregate_name="mean"), "run_name": "BM_z"},
        ],
    }
    got = {m.name: (m.value, m.samples, m.unit) for m in parse(body).metrics}
    assert got == {
        "BM_y": (18.0, None, "us"),
        "BM_y.cpu_time": (17.0, None, "us"),
        "BM_z": (5.0, None, "us"),
        "BM_z.cpu_time": (4.0, None, "us"),
    }


def test_it_converts_mixed_time_units_within_a_run():
    body = {"benchmarks": [entry("BM_a", 1, 1, time_unit="ms"), entry("BM_a", 500, 400, time_unit="us")]}
    got = {m.name: m for m in parse(body).metrics}
    assert (got["BM_a"].unit, got["BM_a"].samples) == ("ms", (1.0, 0.5))


def test_it_drops_errored_runs():
    body = {
        "benchmarks": [
            entry("BM_ok", 1, 1),
            {"name": "BM_bad", "run_name": "BM_bad", "error_occurred": True, "error_message": "boom"},
        ]
    }
    assert [m.name for m in parse(body).metrics] == ["BM_ok", "BM_ok.cpu_time"]


def test_it_reports_bad_times_with_paths():
    body = {"benchmarks": [entry("BM_a", "fast", 1), entry("BM_b", 1, 1, time_unit="weeks"), 3]}
    with pytest.raises(UploadInvalid) as e:
        parse(body)
    assert [err.path for err in e.value.errors] == [
        "benchmarks[0].real_time",
        "benchmarks[1].time_unit",
        "benchmarks[2]",
    ]


def test_it_sanitises_benchmark_names():
    body = {"benchmarks": [entry("BM_vec<int>/1024 real", 3, 3)]}
    assert [m.name for m in parse(body).metrics] == [
        "BM_vec_int_/1024_real",
        "BM_vec_int_/1024_real.cpu_time",
    ]


def test_it_does_not_take_a_timestamp_from_the_context():
    assert parse(load("test2_run.json")).build.timestamp is None
