import json

import pytest

from alerts.notify.payload import encode_payload, group_payload, headline, summary_lines
from tests.notify.fixtures import BASE_URL

pytestmark = pytest.mark.django_db

ALERT_KEYS = {
    "id", "app", "platform", "branch", "device", "metric", "build", "previous_build", "direction", "rel_change",
    "before", "after", "p_value", "status", "team", "created", "url", "unit", "abs_change", "detection",
}


def test_it_builds_the_contract_body(scene):
    payload = group_payload(scene.group, base_url=BASE_URL)
    assert payload["event"] == "alerts.created"
    assert (payload["app"], payload["platform"], payload["branch"], payload["build"]) == (
        "com.example.shop", "android", "main", "4711")
    assert payload["group"]["id"] == scene.group.pk
    assert payload["group"]["team"] == "startup-perf"
    assert payload["url"] == payload["group"]["url"]
    assert payload["url"].startswith(BASE_URL + "/") and payload["url"].endswith(f"/{scene.group.pk}/")
    assert payload["commits"]["from"] == "a1b2c3d"
    assert payload["commits"]["to"] == "e4f5a6b"
    assert payload["commits"]["previous_build"] == "4710"
    assert payload["counts"] == {"regressions": 1, "improvements": 1}
    json.loads(encode_payload(payload))  # serialisable as is


def test_it_describes_each_alert_like_the_read_api(scene):
    alerts = group_payload(scene.group, base_url=BASE_URL)["alerts"]
    assert [a["id"] for a in alerts] == [scene.regression.pk, scene.improvement.pk]
    for alert in alerts:
        assert ALERT_KEYS <= set(alert)
        assert alert["url"] == f"{BASE_URL}/alerts/{scene.group.pk}/"
    regression = alerts[0]
    assert regression["metric"] == "startup.cold.ttid"
    assert regression["unit"] == "ms"
    assert regression["device"] == "pixel-6"
    assert regression["build"] == "4711" and regression["previous_build"] == "4710"
    assert regression["direction"] == "regression"
    assert regression["before"] == 400.0 and regression["after"] == 480.0
    assert regression["rel_change"] == pytest.approx(0.2)
    assert regression["abs_change"] == pytest.approx(80.0)
    assert regression["team"] == "startup-perf"
    assert regression["detection"] == "confirmed"
    assert regression["series_url"].startswith(BASE_URL + "/series/")


def test_it_leaves_withdrawn_alerts_out(scene):
    payload = group_payload(scene.group, base_url=BASE_URL)
    ids = {a["id"] for a in payload["alerts"]}
    assert scene.withdrawn.pk not in ids
    assert "crash.rate" not in encode_payload(payload).decode()


def test_it_summarises_in_plain_text(scene):
    payload = group_payload(scene.group, base_url=BASE_URL)
    lines = summary_lines(payload)
    text = "\n".join(lines)
    assert lines[0] == headline(payload) == (
        "1 regression, 1 improvement in com.example.shop android main build 4711")
    assert "App: com.example.shop" in text and "Platform: android" in text and "Branch: main" in text
    assert "Build: 4711" in text
    assert "a1b2c3d..e4f5a6b" in text
    assert "startup.cold.ttid (pixel-6): 400 ms → 480 ms (+20.0%)" in text
    assert "size.apk.download (pixel-6): 31,457,280 bytes → 30,408,704 bytes (-3.3%)" in text
    assert payload["url"] in text
    assert payload["alerts"][0]["series_url"] in text
    assert "crash.rate" not in text


def test_it_counts_only_regressions_in_the_headline_when_there_are_no_improvements(scene):
    scene.improvement.delete()
    payload = group_payload(scene.group, base_url=BASE_URL)
    assert headline(payload) == "1 regression in com.example.shop android main build 4711"


def test_it_describes_a_drift_with_its_slope_and_window(scene):
    scene.regression.shape, scene.regression.slope_per_build, scene.regression.window_builds = "drift", 2.0, 40
    scene.regression.save()
    payload = group_payload(scene.group, base_url=BASE_URL)
    drift = next(a for a in payload["alerts"] if a["id"] == scene.regression.pk)
    assert (drift["shape"], drift["slope_per_build"], drift["window_builds"]) == ("drift", 2.0, 40)
    other = next(a for a in payload["alerts"] if a["id"] == scene.improvement.pk)
    assert (other["shape"], other["slope_per_build"], other["window_builds"]) == ("shift", None, None)
    text = "\n".join(summary_lines(payload))
    assert "startup.cold.ttid (pixel-6): 400 ms → 480 ms (+20.0%), drift over 40 builds, +2 ms/build" in text


def _with_culprit_and_budget(scene):
    from alerts.models import Alert, BudgetAlert

    scene.regression.culprit_commit, scene.regression.confirmation = "d00dfee", Alert.Confirmation.BISECTED
    scene.regression.save()
    BudgetAlert.objects.create(metric="size.apk.*", max_bytes=30_000_000, build=scene.build,
                               previous_build=scene.previous_build, group=scene.group, team=scene.team,
                               total=30_408_704.0, previous_total=29_900_000.0)


def test_it_names_the_culprit_and_the_crossed_budgets(scene):
    _with_culprit_and_budget(scene)
    payload = group_payload(scene.group, base_url=BASE_URL)
    lines = summary_lines(payload)
    i = lines.index("- startup.cold.ttid (pixel-6): 400 ms → 480 ms (+20.0%)")
    assert lines[i + 1] == "  culprit d00dfee (found by bisection)"
    assert "Size budgets crossed:" in lines
    assert ("- size.apk.* over its 30,000,000 bytes budget: 30,408,704 bytes (+408,704 bytes), "
            "was 29,900,000 bytes") in lines
    assert headline(payload).startswith("1 regression, 1 improvement, 1 size budget crossed in ")


def test_it_says_nothing_of_a_culprit_before_one_is_found(scene):
    text = "\n".join(summary_lines(group_payload(scene.group, base_url=BASE_URL)))
    assert "culprit" not in text and "budget" not in text
