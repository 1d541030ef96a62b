"""``perfplatform detect``: a bad series line stops the run with exit 2 and names the line, the series and the field."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from alerts.detection import Point
from perfplatform.detect_cmd import _plain_values, run, series_points

GOOD = {"id": "ok", "kind": "time", "points": [{"value": 100.0}] * 30}


def _run(tmp_path, lines: list[str]) -> tuple[int, str, str]:
    return _run_bytes(tmp_path, "".join(line + "\n" for line in lines).encode())


def _run_bytes(tmp_path, content: bytes) -> tuple[int, str, str]:
    path = tmp_path / "series.jsonl"
    path.write_bytes(content)
    out, err = io.StringIO(), io.StringIO()
    old, sys.stderr = sys.stderr, err
    try:
        rc = run(str(path), online=True, out=out)
    finally:
        sys.stderr = old
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("record,message", [
    ({"id": "a", "kind": "weird", "points": []}, "a: kind: must be one of time, memory"),
    ({"id": "a", "kind": "time", "direction": "higher_is_beter", "points": []}, "a: direction: must be one of"),
    ({"id": "a", "kind": "time"}, "a: points: must be a list of builds"),
    ({"id": "a", "kind": "time", "points": [{"value": 1.0}, {"value": "x"}]}, "a: points[1].value: must be a finite"),
    ({"id": "a", "kind": "time", "points": [{"value": 1.0}, {"build": "2"}]}, "a: points[1].value: missing"),
    ({"id": "a", "kind": "time", "points": [{"value": 1.0, "samples": [1.0, None]}]}, "a: points[0].samples[1]:"),
    ({"id": "a", "kind": "rate", "points": [{"value": 0.1, "count": 5}]}, "a: points[0]: count and total must"),
    ({"id": "a", "kind": "rate", "points": [{"value": 0.1, "count": 5, "total": 2.5}]}, "a: points[0].total: must"),
    ({"id": "a", "kind": "rate", "points": [{"value": 0.1, "count": 5, "total": 3}]}, "a: points[0]: Point.count (5)"),
    ({"kind": "time", "points": []}, "(no id): id: must be a string or an integer"),
    ({"id": 1.5, "kind": "time", "points": []}, "1.5: id: must be a string or an integer, got 1.5"),
    ({"id": "a", "kind": "size", "unit": 5, "points": []}, "a: unit: must be a string, got 5"),
    ({"id": "a", "kind": "time", "points": [{"value": 10 ** 400}]}, "a: points[0].value: must be a finite number"),
    ({"id": "a", "kind": "time", "points": [{"value": "100.0"}]}, "a: points[0].value: must be a finite number"),
    ({"id": "a", "kind": "time", "points": [{"value": 1.0, "samples": [1.0, True]}]},
     "a: points[0].samples[1]: must be a finite number, got True"),
    ({"id": "a", "kind": "rate", "points": [{"value": 0.1, "count": 10 ** 400, "total": 3}]},
     "a: points[0].count: must be a non-negative whole number"),
    ({"id": "a", "kind": "time", "points": [{"value": 1.0}, {"value": float("nan")}]},
     "a: points[1].value: must be a finite number, got nan"),
    ({"id": "a", "kind": "time", "points": [{"value": 1.0}, [2.0]]}, "a: points[1]: must be an object with a value"),
])
def test_it_names_the_field_of_an_invalid_series(tmp_path, record, message):
    rc, out, err = _run(tmp_path, [json.dumps(GOOD), json.dumps(record)])
    assert rc == 2
    assert f"series.jsonl:2: {message}" in err
    assert json.loads(out.splitlines()[0])["id"] == "ok"  # the series before the bad line were written


@pytest.mark.parametrize("line,message", [
    ("[1, 2]", "series.jsonl:1: a series must be a JSON object, got list"),
    ('{"id": "a", ', "series.jsonl:1: not JSON:"),
])
def test_it_refuses_a_line_that_is_not_a_series_object(tmp_path, line, message):
    rc, out, err = _run(tmp_path, [line])
    assert rc == 2 and out == ""
    assert message in err


def test_it_refuses_a_line_that_is_not_utf8(tmp_path):
    rc, out, err = _run_bytes(tmp_path, json.dumps(GOOD).encode() + b"\n" + b'{"id": "\xff"}\n')
    assert rc == 2 and "series.jsonl:2: not UTF-8" in err
    assert json.loads(out)["id"] == "ok"


def test_it_takes_a_null_kind_and_direction_as_not_given(tmp_path):
    rec = {"id": "n", "kind": None, "direction": None, "unit": None, "points": [{"value": 5.0}] * 40}
    rc, out, err = _run(tmp_path, [json.dumps(rec)])
    assert rc == 0 and err == ""
    assert json.loads(out) == {"id": "n", "change_points": []}


def test_it_reads_builds_of_a_value_alone_as_the_points_they_are():
    # most real series are one float per push: those are read in one pass, the same points as field by field
    plain_rec = {"points": [{"value": 1.5}, {"value": 2.0, "build": "b7", "revision": "abc"}]}
    mixed_rec = {"points": [{"value": 1.5}, {"value": 2}]}  # an integer value: read field by field
    assert _plain_values(plain_rec["points"]) == [1.5, 2.0] and _plain_values(mixed_rec["points"]) is None
    plain, mixed = series_points(plain_rec), series_points(mixed_rec)
    assert plain == mixed == [Point(1.5), Point(2.0)]
    assert all(type(p.value) is float and p.samples is None and p.count is None for p in plain + mixed)


def test_it_exits_2_with_a_message_from_the_command_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "a", "kind": "time", "points": [{"value": True}]}) + "\n")
    proc = subprocess.run([sys.executable, "-m", "perfplatform.cli", "detect", str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert "bad.jsonl:1: a: points[0].value: must be a finite number, got True" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_it_exits_2_with_a_message_for_a_file_it_cannot_read(tmp_path, capsys):
    assert run(str(tmp_path / "missing.jsonl"), online=True, out=io.StringIO()) == 2
    assert "cannot read" in capsys.readouterr().err


def test_it_reads_a_rate_build_given_as_count_and_total_alone(tmp_path):
    import numpy as np

    rng = np.random.default_rng(3)
    counts = [int(x) for x in rng.poisson(100, 60)] + [int(x) for x in rng.poisson(250, 30)]
    with_value = {"id": "r", "kind": "rate", "direction": "lower_is_better",
                  "points": [{"value": c / 100000, "count": c, "total": 100000} for c in counts]}
    without = {**with_value, "points": [{"count": c, "total": 100000} for c in counts]}
    outs = []
    for rec in (with_value, without):
        path = tmp_path / "s.jsonl"
        path.write_text(json.dumps(rec) + "\n")
        out = io.StringIO()
        assert run(str(path), online=True, out=out) == 0
        outs.append(json.loads(out.getvalue()))
    assert outs[0] == outs[1] and [cp["index"] for cp in outs[0]["change_points"]] == [60]
