import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics.formats import FORMATS, ParsedUpload, UploadInvalid, parse

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
)
JSON = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=40,
)
KEYS = st.sampled_from(
    [
        "metrics", "benchmarks", "framework", "suites", "subtests", "name", "value", "samples", "count",
        "total", "kind", "unit", "build", "className", "params", "sampledMetrics", "runs", "median", "P50",
        "run_name", "run_type", "real_time", "cpu_time", "time_unit", "aggregate_name", "context",
        "replicates", "extraOptions", "lowerIsBetter", "latency", "iterations", "executable",
    ]
)  # fmt: skip
# JSON whose keys are mostly the formats' own, so generated bodies get deep into every parser.
SHAPED = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(KEYS | st.text(max_size=5), children, max_size=6)
    ),
    max_leaves=60,
)


def check(fn, body):
    try:
        result = fn(body)
    except UploadInvalid as e:
        assert e.errors, "UploadInvalid without errors"
        assert all(isinstance(err.path, str) and isinstance(err.message, str) for err in e.errors)
        return None
    assert isinstance(result, ParsedUpload)
    return result


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(body=JSON | SHAPED)
def test_it_returns_or_raises_upload_invalid_for_any_json(body):
    for fn in [*FORMATS.values(), parse]:
        check(fn, body)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=st.fixed_dictionaries(
        {"benchmarks": st.lists(st.dictionaries(KEYS, SHAPED, max_size=8), max_size=4)},
        optional={"context": SHAPED},
    )
    | st.fixed_dictionaries(
        {"framework": SHAPED, "suites": st.lists(st.dictionaries(KEYS, SHAPED), max_size=4)}
    )
    | st.fixed_dictionaries({"metrics": st.lists(st.dictionaries(KEYS, SHAPED, max_size=8), max_size=4)})
    | st.dictionaries(
        st.text(max_size=5), st.dictionaries(st.text(max_size=5), st.dictionaries(KEYS, SHAPED))
    )
)
def test_it_survives_format_shaped_garbage(body):
    for fn in [*FORMATS.values(), parse]:
        result = check(fn, body)
        if result is not None:
            assert result.metrics, "a parsed upload has at least one metric"
            for m in result.metrics:
                set_fields = (m.value is not None) + (m.samples is not None) + (m.count is not None)
                assert set_fields == 1


def deep(depth, make):
    body = 1
    for _ in range(depth):
        body = make(body)
    return body


@pytest.mark.parametrize(
    "make",
    [
        lambda inner: [inner],
        lambda inner: {"metrics": inner},
        lambda inner: {"benchmarks": [inner]},
        lambda inner: {"x": {"y": inner}},
        lambda inner: {"framework": {"name": "f"}, "suites": [{"name": "s", "subtests": [inner]}]},
        lambda inner: {
            "benchmarks": [{"className": "a.B", "name": "t", "params": {"p": inner}, "metrics": {}}]
        },
        lambda inner: {"benchmarks": [{"name": "t", "run_name": "t", "real_time": 1, "counter": inner}]},
        lambda inner: {"b": {"latency": {"value": 1, "lower_value": inner}}},
    ],
)
def test_it_handles_deeply_nested_input(make):
    body = deep(10_000, make)
    assert sys.getrecursionlimit() < 10_000 * 2
    for fn in [*FORMATS.values(), parse]:
        check(fn, body)
