import json
from pathlib import Path

import pytest

from metrics.formats import FORMATS, ParsedUpload, UploadInvalid, detect_format, parse

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "formats"
NATIVE = {
    "app": "com.example.shop",
    "platform": "android",
    "branch": "main",
    "build": {"id": "4711"},
    "metrics": [{"name": "startup.cold.ttid", "kind": "time", "unit": "ms", "samples": [412.1, 398.0]}],
}


def real_bodies():
    for fmt in ("macrobenchmark", "google-benchmark", "bmf"):
        for path in sorted((FIXTURES / fmt).glob("*.json")):
            if not path.name.endswith(".schema.json"):
                yield fmt, path.name, json.loads(path.read_text())
    jsonl = FIXTURES / "perfherder" / "perfherder_data_from_treeherder_sample_logs.jsonl"
    for i, line in enumerate(jsonl.read_text().splitlines()):
        yield "perfherder", f"jsonl line {i}", json.loads(line)["data"]


def test_it_lists_the_five_formats():
    assert set(FORMATS) == {"native", "macrobenchmark", "perfherder", "google-benchmark", "bmf"}


def test_it_detects_native():
    assert detect_format(NATIVE) == "native"


@pytest.mark.parametrize(
    "fmt, name, body", list(real_bodies()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_it_detects_every_real_file(fmt, name, body):
    assert detect_format(body) == fmt


@pytest.mark.parametrize(
    "body", [None, [], "x", 3, {}, {"benchmarks": "x"}, {"a": 1}, {"a": {"b": {"c": 1}}}]
)
def test_it_refuses_to_guess(body):
    with pytest.raises(UploadInvalid) as e:
        detect_format(body)
    assert [(err.path, err.message) for err in e.value.errors] == [
        ("", "cannot tell the format; pass ?format=...")
    ]


def test_it_parses_with_auto_detect():
    upload = parse(NATIVE)
    assert isinstance(upload, ParsedUpload)
    assert upload.metrics[0].samples == (412.1, 398.0)


def test_it_parses_with_an_explicit_format():
    bmf = {"bench": {"latency": {"value": 1.0}}}
    assert parse(bmf, "bmf").metrics[0].name == "bench.latency"
    with pytest.raises(UploadInvalid) as e:
        parse(bmf, "native")
    assert e.value.errors[0].path == "metrics"


def test_it_rejects_an_unknown_format():
    with pytest.raises(UploadInvalid) as e:
        parse(NATIVE, "csv")
    assert [err.path for err in e.value.errors] == ["format"]
    assert "csv" in e.value.errors[0].message


def test_it_treats_an_empty_format_as_auto_detect():
    assert parse(NATIVE, "").app == "com.example.shop"
