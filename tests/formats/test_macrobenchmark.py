import json
from pathlib import Path

import pytest

from metrics.formats import UploadInvalid, detect_format
from metrics.formats.macrobenchmark import parse

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "formats" / "macrobenchmark"
FILES = sorted(p.name for p in FIXTURES.glob("*.json"))


def load(name):
    return json.loads((FIXTURES / name).read_text())


def by_name(upload):
    return {m.name: m for m in upload.metrics}


EXPECTED = {
    "com.example.macrobenchmark-benchmarkData.json": {
        "device": "Pixel 3",
        "metrics": {
            "SampleStartupBenchmark.startup.timeToInitialDisplayMs": ("time", "ms", (347.881076,)),
        },
    },
    "sample_benchmark_result_1.json": {
        "device": "Pixel 5",
        "metrics": {
            "FrameTimingBenchmark.start.frameTime50thPercentileMs": ("time", "ms", (5.0,) * 10),
            "FrameTimingBenchmark.start.frameTime90thPercentileMs": ("time", "ms", (5.0,) * 10),
            "FrameTimingBenchmark.start.frameTime95thPercentileMs": (
                "time", "ms", (6.0, 6.0, 6.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0),
            ),
            "FrameTimingBenchmark.start.frameTime99thPercentileMs": (
                "time", "ms", (9.0, 9.0, 7.0, 7.0, 7.0, 8.0, 9.0, 8.0, 7.0, 7.0),
            ),
            "FrameTimingBenchmark.start.totalFrameCount": (
                "count", "", (597.0, 567.0, 596.0, 597.0, 595.0, 593.0, 566.0, 599.0, 567.0, 730.0),
            ),
        },
    },
    "sample_benchmark_result_2.json": {
        "device": "Pixel 5",
        "metrics": {
            "TrivialStartupBenchmark.startup.mode:COLD.startupMs": ("time", "ms", (210.0, 196.0, 195.0)),
        },
    },
}  # fmt: skip


def test_it_has_expectations_for_every_fixture():
    assert FILES == sorted(EXPECTED)


@pytest.mark.parametrize("name", FILES)
def test_it_parses_every_real_file(name):
    body = load(name)
    assert detect_format(body) == "macrobenchmark"
    upload = parse(body)
    expected = EXPECTED[name]
    assert upload.device == expected["device"]
    got = {m.name: (m.kind, m.unit, m.samples) for m in upload.metrics}
    assert got == expected["metrics"]
    assert all(m.lower_is_better and m.value is None for m in upload.metrics)
    assert upload.build.id is None and upload.build.timestamp is None


def test_it_reads_newer_output_with_sampled_metrics_and_extra_keys():
    body = {
        "context": {
            "build": {
                "brand": "google",
                "device": "oriole",
                "model": "Pixel 6",
                "id": "TQ3A",
                "version": {"sdk": 33},
            },
            "cpuCoreCount": 8,
            "compilationMode": "BaselineProfile",
            "artMainlineVersion": 331314010,
            "osCodenameAbbreviated": "T",
        },
        "benchmarks": [
            {
                "name": "scroll[compilation=None,mode=WARM]",
                "params": {"mode": "WARM", "compilation": "None"},
                "className": "com.example.benchmark.ScrollBenchmark",
                "totalRunTimeNs": 1,
                "metrics": {
                    "frameCount": {"minimum": 10, "maximum": 12, "median": 11, "runs": [10, 11, 12]},
                    "memoryHeapSizeMaxKb": {
                        "minimum": 1,
                        "maximum": 1,
                        "median": 1,
                        "runs": [2048, 2050, 2049],
                    },
                },
                "sampledMetrics": {
                    "frameDurationCpuMs": {
                        "P50": 4.5,
                        "P90": 8.1,
                        "P95": 9.9,
                        "P99": 16.2,
                        "runs": [[4, 5], [6]],
                    },
                    "frameOverrunMs": {"P50": -3.0, "P90": 0.5, "P95": 1.0, "P99": 7.0, "runs": [[1.0]]},
                },
                "warmupIterations": 3,
                "repeatIterations": 3,
                "thermalThrottleSleepSeconds": 0,
                "profilerOutputs": [
                    {"type": "PerfettoTrace", "label": "Trace", "filename": "x.perfetto-trace"}
                ],
            }
        ],
    }
    assert detect_format(body) == "macrobenchmark"
    upload = parse(body)
    got = by_name(upload)
    prefix = "ScrollBenchmark.scroll.compilation:None.mode:WARM"
    assert got[f"{prefix}.frameCount"].kind == "count"
    assert got[f"{prefix}.frameCount"].samples == (10.0, 11.0, 12.0)
    assert (got[f"{prefix}.memoryHeapSizeMaxKb"].kind, got[f"{prefix}.memoryHeapSizeMaxKb"].unit) == (
        "memory",
        "KB",
    )
    assert got[f"{prefix}.frameDurationCpuMs.P90"].value == 8.1
    assert got[f"{prefix}.frameDurationCpuMs.P90"].kind == "time"
    assert got[f"{prefix}.frameOverrunMs.P50"].value == -3.0
    assert len(upload.metrics) == 2 + 4 + 4
    assert upload.device == "Pixel 6"


def test_it_uses_median_when_runs_are_missing():
    body = {"benchmarks": [{"className": "a.B", "name": "t", "metrics": {"startupNs": {"median": 7}}}]}
    (m,) = parse(body).metrics
    assert (m.name, m.kind, m.unit, m.value, m.samples) == ("B.t.startupNs", "time", "ns", 7.0, None)


def test_it_keeps_bracket_suffix_when_params_are_empty():
    body = {
        "benchmarks": [
            {"className": "x.Y", "name": "startup[0]", "params": {}, "metrics": {"aMs": {"runs": [1]}}}
        ]
    }
    assert [m.name for m in parse(body).metrics] == ["Y.startup.0.aMs"]


def test_it_reports_bad_runs_with_paths():
    body = {
        "benchmarks": [
            {"className": "a.B", "name": "t", "metrics": {"xMs": {"runs": [1, "2", float("nan")]}}},
            {"className": "a.B", "name": "u", "metrics": {"yMs": {}}},
            "nope",
        ]
    }
    with pytest.raises(UploadInvalid) as e:
        parse(body)
    paths = [err.path for err in e.value.errors]
    assert paths == [
        "benchmarks[0].metrics.xMs.runs[1]",
        "benchmarks[0].metrics.xMs.runs[2]",
        "benchmarks[1].metrics.yMs",
        "benchmarks[2]",
    ]


def test_it_rejects_a_body_without_benchmarks():
    with pytest.raises(UploadInvalid) as e:
        parse({"context": {}})
    assert e.value.errors[0].path == "benchmarks"


def test_it_errors_on_the_same_benchmark_twice():
    bench = {"className": "a.B", "name": "t", "metrics": {"xMs": {"runs": [1]}}}
    with pytest.raises(UploadInvalid) as e:
        parse({"benchmarks": [bench, dict(bench)]})
    assert e.value.errors[0].path == "benchmarks[1].metrics.xMs"
    assert "duplicate" in e.value.errors[0].message


def test_it_sanitises_odd_characters_in_names():
    body = {
        "benchmarks": [
            {
                "className": "a.B",
                "name": "start up",
                "params": {"m": "a b"},
                "metrics": {"x Ms": {"runs": [1]}},
            }
        ]
    }
    (m,) = parse(body).metrics
    assert m.name == "B.start_up.m:a_b.x_Ms"
