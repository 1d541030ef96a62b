"""Size budgets evaluated purely: sums over matching metrics, headroom, states, app/platform globs."""

from __future__ import annotations

from dataclasses import dataclass

from alerts.budgets import evaluate_budgets


@dataclass
class B:
    position: int
    metric: str
    max_bytes: int
    team_id: int = 1
    app: str = "*"
    platform: str = "*"


SIZES = {"size.module.map.code": 400_000.0, "size.module.map.assets.tiles": 300_000.0,
         "size.module.map.assets.fonts": 100_000.0, "size.module.checkout": 500_000.0, "size.apk.download": 3e7}


def test_it_sums_the_matching_metrics_and_reports_headroom():
    [s] = evaluate_budgets(SIZES, [B(1, "size.module.map.*", 850_000)])
    assert s.total == 800_000 and s.headroom == 50_000
    assert s.matched == ("size.module.map.assets.fonts", "size.module.map.assets.tiles", "size.module.map.code")
    assert s.state == "near" and not s.over


def test_it_tells_over_near_ok_and_empty_apart():
    states = [s.state for s in evaluate_budgets(SIZES, [
        B(1, "size.module.checkout", 400_000), B(2, "size.module.map.*", 880_000), B(3, "size.module.map.*x", 1),
        B(4, "size.apk.*", 40_000_000)])]
    assert states == ["over", "near", "empty", "ok"]


def test_it_counts_a_total_and_its_parts_once():
    sizes = {"size.module.map": 900_000.0, "size.module.map.code": 400_000.0, "size.module.map.res": 300_000.0}
    [s] = evaluate_budgets(sizes, [B(1, "size.module.map*", 1_000_000)])
    assert s.total == 900_000  # the module's total, not 1.6 MB


def test_it_keeps_budgets_of_the_app_and_platform_and_the_later_of_twins():
    rules = [B(1, "size.module.map.*", 10, app="com.example.maps"), B(2, "size.module.map.*", 2_000_000),
             B(3, "size.module.checkout", 1, platform="ios")]
    out = evaluate_budgets(SIZES, rules, app="com.example.shop", platform="android")
    assert [(s.position, s.state) for s in out] == [(2, "ok")]
    out = evaluate_budgets(SIZES, rules, app="com.example.maps", platform="ios")
    assert [(s.position, s.max_bytes) for s in out] == [(2, 2_000_000), (3, 1)]
