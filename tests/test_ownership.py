"""Ownership rules behave like CODEOWNERS: globs on app, platform and metric; the last match wins."""

import pytest

from alerts.ownership import Owners, Rule, metric_overrides, owner

RULES = [
    Rule("*", "*", "*", 1),
    Rule("com.example.*", "android", "startup.*", 2),
    Rule("com.example.shop", "*", "startup.cold.*", 3),
    Rule("*", "ios", "size.*", 4),
]


@pytest.mark.parametrize(("app", "platform", "metric", "team"), [
    ("com.other", "android", "startup.cold.ttid", 1),
    ("com.example.news", "android", "startup.warm.ttid", 2),
    ("com.example.news", "ios", "startup.warm.ttid", 1),
    ("com.example.shop", "android", "startup.cold.ttid", 3),
    ("com.example.shop", "ios", "startup.cold.ttid", 3),
    ("com.example.shop", "ios", "size.apk", 4),
    ("com.example.shop", "android", "size.apk", 1),
])
def test_it_gives_every_metric_to_the_last_matching_rule(app, platform, metric, team):
    assert owner(RULES, app, platform, metric) == team


def test_it_matches_case_sensitively_and_whole_names():
    rules = [Rule("com.example.shop", "android", "crash.rate", 9)]
    assert owner(rules, "com.example.shop", "android", "crash.rate") == 9
    assert owner(rules, "com.example.shop", "android", "crash.rate.feed") is None
    assert owner(rules, "COM.EXAMPLE.SHOP", "android", "crash.rate") is None


@pytest.mark.django_db
def test_it_falls_back_to_the_default_team_when_nothing_matches(settings):
    from alerts.models import Team

    settings.PERF_DEFAULT_TEAM = "perf-core"
    owners = Owners()
    team_id = owners.team_id("a", "b", "c")
    assert Team.objects.get(pk=team_id).name == "perf-core"
    assert owners.team_id("x", "y", "z") == team_id


def test_it_merges_metric_overrides_later_rows_winning():
    class Row:
        def __init__(self, metric, **kw):
            self.app, self.platform, self.metric = "*", "*", metric
            self.min_change = kw.get("min_change")
            self.abs_threshold = kw.get("abs_threshold")
            self.sensitivity = kw.get("sensitivity")
            self.abs_floor = kw.get("abs_floor")

    rows = [Row("size.*", min_change=0.005, sensitivity=0.5, abs_floor=1e5), Row("size.apk.*", min_change=0.01)]
    assert metric_overrides("a", "android", "size.apk.download", rows) == {"min_change": 0.01, "sensitivity": 0.5,
                                                                         "abs_floor": 1e5}
    assert metric_overrides("a", "android", "startup.cold", rows) == {}


def test_it_passes_every_stored_override_column_the_detector_takes():
    import dataclasses

    from alerts.detection.model import DEFAULT, DetectorConfig
    from alerts.models import MetricOverride

    row = MetricOverride(position=0, metric="size.*", min_change=0.005, abs_threshold=1.0, sensitivity=0.5,
                         abs_floor=100000.0)
    merged = metric_overrides("a", "android", "size.apk", [row])
    detector_fields = {f.name for f in dataclasses.fields(DetectorConfig)}
    expected = {"min_change", "abs_threshold", "sensitivity", "abs_floor"} & detector_fields
    assert set(merged) == expected and {"min_change", "abs_threshold", "sensitivity"} <= expected
    cfg = DEFAULT.with_overrides(**merged)  # no column the detector lacks
    assert cfg.min_change == 0.005
