"""Issue 11 in headless Chromium on seed_demo data: the /checks/ page of the demo's pull requests shows
the check's status, which metric regressed and by how much, and a device without a baseline never fails.
Screenshots go to tests/artifacts/."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

APP, PLATFORM = "com.example.shop", "android"


def sign_in(page, base, path):
    page.goto(base + path)
    assert "/accounts/login/" in page.url
    page.get_by_label("Username").fill("demo")
    page.get_by_label("Password").fill("demo")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(re.escape(path) + "$"))


def rows_by_verdict(page) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for tr in page.locator("tbody tr[data-verdict]").all():
        metric = tr.locator("td").nth(1).inner_text().splitlines()[0]
        out.setdefault(tr.get_attribute("data-verdict"), []).append(metric)
    return out


def test_it_shows_the_failing_metric_of_a_regressing_pull_request(live_server, demo, page, artifacts):
    from alerts.models import Check

    base = live_server.url
    slow = Check.objects.select_related("build").get(build__ext_id="pr-demo-slower")
    assert slow.status == "fail", "seed_demo's regressing pull request did not fail its check"

    sign_in(page, base, f"/checks/{APP}/{PLATFORM}/pr-demo-slower/")
    assert page.locator("[data-check-status]").inner_text() == "fail"
    verdicts = rows_by_verdict(page)
    # The demo scales every startup metric by 1.15: the regressions named are startup metrics, and
    # they come first in the table (a reader sees what failed without scrolling).
    assert verdicts.get("regression"), verdicts
    assert any(m.startswith("startup.") for m in verdicts["regression"]), verdicts["regression"]
    assert page.locator("tbody tr").first.get_attribute("data-verdict") == "regression"
    first = page.locator("tbody tr[data-verdict=regression]").first
    change = first.locator("td").nth(4).inner_text()
    assert re.search(r"\+\d", change), change  # a slower startup reads as a positive change with its interval
    assert "…" in change, change
    facts = page.locator("dl.facts").inner_text()
    assert f"{len(verdicts['regression'])} regression," in facts, facts
    page.screenshot(path=str(artifacts / "check-failing.png"), full_page=False)
    # At 150 metrics a reader narrows the table: hiding the "same" rows leaves exactly the others.
    total = page.locator("tbody tr[data-verdict]").count()
    same = len(verdicts.get("same", []))
    assert 0 < same < total, verdicts
    page.get_by_label("hide the metrics that are the same").check()
    assert page.locator("tbody tr[data-verdict]:visible").count() == total - same
    page.get_by_label("Filter metrics").fill("startup")
    shown = [tr.locator("td").nth(1).inner_text() for tr in page.locator("tbody tr[data-verdict]:visible").all()]
    assert shown and all("startup" in m for m in shown), shown
    assert not page.js_errors, page.js_errors

    # The clean pull request passes with no regression row; the one on a new device never fails.
    page.goto(f"{base}/checks/{APP}/{PLATFORM}/pr-demo-clean/")
    assert page.locator("[data-check-status]").inner_text() in ("pass", "inconclusive")
    assert "regression" not in rows_by_verdict(page)
    page.goto(f"{base}/checks/{APP}/{PLATFORM}/pr-demo-newdevice/")
    status = page.locator("[data-check-status]").inner_text()
    assert status == "no_baseline", status
    assert set(rows_by_verdict(page)) <= {"no_baseline"}
    page.screenshot(path=str(artifacts / "check-no-baseline.png"), full_page=False)

    # A branch build has no check page.
    resp = page.goto(f"{base}/checks/{APP}/{PLATFORM}/{slow.base_build.ext_id}/")
    assert resp.status == 404
