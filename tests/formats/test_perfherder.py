import json
from pathlib import Path

import pytest

from metrics.formats import METRIC_NAME_RE, UploadInvalid, detect_format
from metrics.formats.perfherder import parse

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "formats" / "perfherder"
LINES = [
    json.loads(line)
    for line in (FIXTURES / "perfherder_data_from_treeherder_sample_logs.jsonl").read_text().splitlines()
    if line.strip()
]
MACHINE = "projects/970387039909/machineTypes/c2-standard-16"


def find_line(log, line_no):
    (entry,) = [e for e in LINES if e["log"] == log and e["line_no"] == line_no]
    return entry["data"]


def by_name(upload):
    return {m.name: m for m in upload.metrics}


def test_it_has_all_35_payloads():
    assert len(LINES) == 35


@pytest.mark.parametrize("index", range(len(LINES)))
def test_it_parses_every_line_of_the_jsonl(index):
    data = LINES[index]["data"]
    assert detect_format(data) == "perfherder"
    upload = parse(data)
    expected = sum(("value" in s) + len(s.get("subtests", [])) for s in data["suites"])
    assert len(upload.metrics) == expected
    assert all(METRIC_NAME_RE.fullmatch(m.name) for m in upload.metrics)
    assert all(m.name.startswith(data["framework"]["name"] + ".") for m in upload.metrics)
    assert all(m.value is not None and m.samples is None for m in upload.metrics)


def test_it_reads_the_exact_awsy_values():
    upload = parse(find_line("linux-awsy.txt.gz", 1432))
    got = by_name(upload)
    js = got["awsy.Base_Content_JS:fission"]
    assert (js.kind, js.unit, js.value, js.lower_is_better) == ("memory", "bytes", 1535472.0000000012, True)
    sub = got["awsy.Base_Content_JS:fission.After_tabs_open___30s__forced_GC_"]
    assert (sub.kind, sub.unit, sub.value) == ("memory", "bytes", 1535472.0)
    assert got["awsy.Base_Content_Resident_Unique_Memory:fission"].value == 7284735.999999995


def test_it_reads_build_times_subtests_and_higher_is_better_suites():
    upload = parse(find_line("android-opt-build.txt.gz", 128151))
    got = by_name(upload)
    build_times = f"build_metrics.build_times:taskcluster-{MACHINE}"
    assert got[build_times].value == 605.315
    assert got[f"{build_times}.compile"].value == 307.289252
    assert got[f"{build_times}.android-archive-geckoview"].value == 125.09573299999995
    assert got["build_metrics.compiler_warnings"].value == 170.0
    hit = got["build_metrics.sccache_percent_hit_C/C__"]
    assert (hit.value, hit.lower_is_better) == (99.95040912472105, False)
    assert got["build_metrics.sccache_requests_not_cacheable"].value == 378.0


def test_it_reads_a_suite_without_value_as_its_subtests_only():
    upload = parse(find_line("android-opt-build.txt.gz", 123929))
    assert [(m.name, m.value) for m in upload.metrics] == [
        ("build_metrics.compiler_metrics.num_static_constructors", 79.0)
    ]


def test_it_reads_vcs_suites_with_their_extra_options():
    upload = parse(find_line("android-opt-build.txt.gz", 165))
    assert by_name(upload)[f"vcs.clone:{MACHINE}"].value == 83.88518762588501
    assert [m.name.split(":")[0] for m in upload.metrics] == [
        "vcs.clone", "vcs.update", "vcs.overall", "vcs.overall_pull",
        "vcs.overall_pull_fullcheckout", "vcs.overall_pull_emptywdir",
    ]  # fmt: skip


def test_it_sorts_extra_options_into_the_name():
    upload = parse(find_line("leak.log.gz", 51513))
    prefix = (
        "job_resource_usage.mochitest.mochitest-browser-chrome.2.overall:e10s:taskcluster-Standard_F8s_v2"
    )
    got = by_name(upload)
    assert got[f"{prefix}.io_write_bytes"].value == 2898349568.0
    assert got[f"{prefix}.io.read_bytes"].value == 807595520.0
    assert (
        got["job_resource_usage.mochitest.mochitest-browser-chrome.2.run-tests.time"].value
        == 1683.9840000000002
    )


def payload(*suites, framework="raptor"):
    return {"framework": {"name": framework}, "suites": list(suites)}


def test_it_uses_replicates_as_samples():
    body = payload(
        {
            "name": "startup",
            "unit": "ms",
            "value": 10,
            "replicates": [9, 10, 11],
            "subtests": [
                {"name": "fcp", "unit": "ms", "value": 5, "replicates": [4.5, 5.5]},
                {"name": "score", "unit": "score", "value": 80, "lowerIsBetter": False},
            ],
        }
    )
    got = by_name(parse(body))
    assert got["raptor.startup"].samples == (9.0, 10.0, 11.0)
    assert got["raptor.startup"].value is None
    assert (got["raptor.startup.fcp"].kind, got["raptor.startup.fcp"].samples) == ("time", (4.5, 5.5))
    assert (got["raptor.startup.score"].kind, got["raptor.startup.score"].lower_is_better) == ("score", False)


def test_it_calls_byte_units_size_for_installer_suites():
    body = payload(
        {"name": "installer size", "unit": "bytes", "value": 100, "subtests": []},
        {"name": "heap", "unit": "KB", "value": 3, "subtests": []},
        framework="build_metrics",
    )
    got = by_name(parse(body))
    assert (got["build_metrics.installer_size"].kind, got["build_metrics.installer_size"].unit) == (
        "size",
        "bytes",
    )
    assert (got["build_metrics.heap"].kind, got["build_metrics.heap"].unit) == ("memory", "KB")


def test_it_disambiguates_names_that_collide_only_after_sanitising():
    body = payload(
        {"name": "s", "subtests": [{"name": "a b", "value": 1}, {"name": "a+b", "value": 2}]},
    )
    first = parse(body).metrics
    again = parse(
        payload({"name": "s", "subtests": [{"name": "a+b", "value": 2}, {"name": "a b", "value": 1}]})
    ).metrics
    assert len({m.name for m in first}) == 2
    assert all(m.name.startswith("raptor.s.a_b-") for m in first)
    assert {(m.name, m.value) for m in first} == {(m.name, m.value) for m in again}


def test_it_rejects_the_same_subtest_twice():
    body = payload({"name": "s", "subtests": [{"name": "a", "value": 1}, {"name": "a", "value": 2}]})
    with pytest.raises(UploadInvalid) as e:
        parse(body)
    assert [err.path for err in e.value.errors] == ["suites[0].subtests[1]"]


def test_it_reports_every_bad_value_with_its_path():
    body = payload(
        {
            "name": "s",
            "value": "fast",
            "subtests": [{"name": "a"}, {"name": "b", "value": 1, "replicates": [1, None]}],
        },
        {"subtests": []},
    )
    with pytest.raises(UploadInvalid) as e:
        parse(body)
    assert [err.path for err in e.value.errors] == [
        "suites[0].value",
        "suites[0].subtests[0].value",
        "suites[0].subtests[1].replicates[1]",
        "suites[1].name",
    ]


def test_it_needs_a_framework_name_and_suites():
    with pytest.raises(UploadInvalid) as e:
        parse({"framework": {}, "suites": {}})
    assert [err.path for err in e.value.errors] == ["framework.name", "suites"]


def test_it_takes_the_application_version():
    body = payload({"name": "s", "value": 1, "subtests": []})
    body["application"] = {"name": "fenix", "version": "126.0a1"}
    assert parse(body).build.version == "126.0a1"
