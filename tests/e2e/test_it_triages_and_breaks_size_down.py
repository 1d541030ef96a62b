"""Issue 13 in headless Chromium on seed_demo data: the triage dashboard (weight, sparklines, filters,
bulk triage by keyboard, metric families), the size treemap, the alert page's graphs, text contrast.
Screenshots go to tests/artifacts/ (the path is printed)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

# WCAG 2.1 AA: the contrast of every visible text node against the first opaque background behind it.
CONTRAST_JS = """() => {
  function rgb(s) { const m = s.match(/[\\d.]+/g); return m ? m.map(Number) : [0, 0, 0, 0]; }
  function lum(c) { const [r, g, b] = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
                    return 0.2126 * r + 0.7152 * g + 0.0722 * b; }
  function bg(el) { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
                      if (c.length < 4 || c[3] > 0.9) return c; } return [255, 255, 255, 1]; }
  const worst = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || el.closest("svg, .visually-hidden, .skip, .skip-local, option")) continue;
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height || getComputedStyle(el).visibility === "hidden") continue;
    const fg = rgb(getComputedStyle(el).color), b = bg(el);
    const [l1, l2] = [lum(fg), lum(b)].sort((x, y) => y - x);
    const ratio = (l1 + 0.05) / (l2 + 0.05);
    if (ratio < 4.5) worst.push([n.textContent.trim().slice(0, 30), getComputedStyle(el).color, ratio.toFixed(2)]);
  }
  return worst.slice(0, 10);
}"""


def sign_in(page, base, user="demo"):
    page.goto(base + "/accounts/login/")
    page.get_by_label("Username").fill(user)
    page.get_by_label("Password").fill("demo")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state("networkidle")


def shot(page, artifacts, name: str, *, full: bool = True) -> None:
    path = artifacts / name
    page.screenshot(path=str(path), full_page=full)
    print(f"screenshot: {path}")


def test_it_triages_from_a_light_dashboard_with_sparklines(live_server, demo, page, artifacts):
    from alerts.models import AlertGroup, Team

    base = live_server.url
    sign_in(page, base)
    page.wait_for_url(re.compile(r".*/teams/startup-perf/$"))
    weight = len(page.request.get(base + "/teams/startup-perf/").body())
    assert weight <= 300 * 1024, f"team page is {weight} bytes"
    groups = page.locator("article.group")
    n = groups.count()
    assert n >= 2
    sparks = page.locator("article.group [data-sparkline]")
    assert sparks.count() >= n
    drawn = page.eval_on_selector_all("article.group [data-sparkline]",
                                      "els => els.map(e => [+(e.dataset.drawn || 0), !!e.querySelector('svg .spark-culprit')])")
    assert all(d > 20 and culprit for d, culprit in drawn), drawn
    assert page.evaluate(CONTRAST_JS) == []
    shot(page, artifacts, "triage-dashboard.png")

    # The app filter narrows the list and lives in the URL.
    page.select_option("#f-app", "com.example.maps")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(re.compile(r".*app=com\.example\.maps.*"))
    apps = page.eval_on_selector_all("article.group h3 a", "els => els.map(e => e.textContent.split(' · ')[0])")
    assert apps and set(apps) == {"com.example.maps"}
    team = Team.objects.get(name="startup-perf")
    assert len(apps) == min(20, AlertGroup.objects.filter(team=team, status__in=("untriaged", "investigating"),
                                                          build__app__name="com.example.maps").count())
    shot(page, artifacts, "triage-dashboard-filtered.png")

    # Bulk triage with the keyboard: two groups selected with Space, one note, Acknowledge.
    ids = [int(x) for x in page.eval_on_selector_all("article.group", "els => els.slice(0, 2).map(e => e.dataset.group)")]
    for gid in ids:
        page.focus(f"#sel-{gid}")
        page.keyboard.press("Space")
    assert page.text_content("[data-selected-count]") == "2 selected"
    page.focus("#bulk-note")
    page.keyboard.type("bisecting in CI")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Acknowledge"
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    page.keyboard.press("Enter")
    page.wait_for_function("document.getElementById('triage-status').textContent.includes('marked acknowledged')")
    for gid in ids:
        g = AlertGroup.objects.get(pk=gid)
        assert set(g.alerts.exclude(detection="withdrawn").values_list("status", "note")) == {("acknowledged", "bisecting in CI")}
        assert page.text_content(f"#group-{gid} [data-group-status]") == g.status
    shot(page, artifacts, "triage-dashboard-bulk.png")

    # Metric families start collapsed, each with a health mark and a sparkline; Enter on a summary opens it.
    families = page.locator("details.family")
    assert families.count() >= 2 and page.locator("details.family[open]").count() == 0
    assert page.evaluate("document.body.scrollHeight") < 4000
    fam = families.first
    assert fam.locator("summary .badge").text_content() in {"regressed", "noisy", "improved", "stable"}
    assert int(fam.locator("summary [data-sparkline]").get_attribute("data-drawn")) > 10
    fam.locator("summary").focus()
    page.keyboard.press("Enter")
    assert fam.evaluate("d => d.open") is True
    assert fam.locator("tbody tr").count() >= 1
    fam.scroll_into_view_if_needed()
    shot(page, artifacts, "triage-dashboard-families.png", full=False)
    assert page.js_errors == []


def test_it_breaks_a_builds_size_down_by_module_and_owner(live_server, demo, page, artifacts):
    from metrics.models import Build
    from perfplatform import demo_data

    base = live_server.url
    sign_in(page, base)
    branch = list(Build.objects.filter(app__name="com.example.maps", platform="android").order_by("timestamp"))
    step = branch[80 - demo_data.SIZE_STEP_BUILDS_BEFORE_END]
    page.goto(f"{base}{step.get_absolute_url()}")
    page.get_by_role("link", name="Size breakdown (treemap)").click()
    page.wait_for_url(re.compile(r".*/size/$"))
    nodes = page.eval_on_selector_all("[data-size-node]", "els => els.map(e => [e.dataset.sizeNode, e.dataset.owner])")
    owners = dict(nodes)
    assert owners["size.module.feature_map.assets.tiles"] == "maps"
    assert owners["size.module.feature_checkout.assets.images"] == "checkout"
    assert owners["size.module"] == "several teams" and owners["size.apk.download"] == "app-size"
    assert max(name.count(".") for name, _ in nodes) >= 4  # size > module > feature_map > assets > tiles
    states = dict(page.eval_on_selector_all("[data-budget]", "els => els.map(e => [e.dataset.budget, e.dataset.state])"))
    assert states == {"size.module.feature_map.*": "near", "size.module.feature_checkout.*": "over",
                      "size.module.*": "ok"}
    first = page.locator(".size-changes table.compact tbody tr").first.text_content()
    assert "feature_checkout" in first and "+60.0 kB" in first  # the planted growth heads the table
    assert page.evaluate(CONTRAST_JS) == []
    shot(page, artifacts, "size-treemap.png")

    # Zoom into the module level by its group name; the checkout part shows red, its box names its owner.
    page.locator('[data-size-node="size.module"] > .tm-label').click()
    page.wait_for_url(re.compile(r".*root=size\.module.*"))
    images = page.locator('[data-size-node="size.module.feature_checkout.assets.images"]')
    assert "hsl(4 " in images.get_attribute("style")
    assert "checkout" in images.get_attribute("aria-label")
    assert page.evaluate(CONTRAST_JS) == []
    shot(page, artifacts, "size-treemap-modules.png")
    assert page.js_errors == []


def test_it_draws_the_series_around_the_culprit_on_the_alert_page(live_server, demo, page, artifacts):
    from alerts.models import AlertGroup

    base = live_server.url
    sign_in(page, base)
    g = AlertGroup.objects.filter(team__name="checkout").order_by("-build__timestamp").first()
    assert g is not None, "the planted checkout growth raised no alert"
    page.goto(f"{base}/alerts/{g.pk}/")
    graphs = page.locator(".culprit-graphs [data-sparkline]")
    assert graphs.count() >= 1
    assert int(graphs.first.get_attribute("data-drawn")) > 40
    assert page.locator(".culprit-graphs .spark-culprit").count() == graphs.count()
    assert page.get_by_role("link", name="size breakdown").count() >= 1
    assert page.evaluate(CONTRAST_JS) == []
    shot(page, artifacts, "alert-group-graphs.png")
    assert page.js_errors == []


def test_it_shows_a_teams_budgets_and_the_crossing_it_was_alerted_for(live_server, demo, page, artifacts):
    from alerts.models import BudgetAlert

    base = live_server.url
    sign_in(page, base)
    crossed = BudgetAlert.objects.filter(team__name="checkout")
    assert crossed.count() == 6  # the planted growth crosses the budget once per app and platform
    page.goto(base + "/teams/checkout/?app=com.example.maps")
    rows = page.locator('.budgets [data-budget="size.module.feature_checkout.*"]')
    assert rows.count() == 6 and page.locator('.budgets [data-state="over"]').count() == 6
    assert "over" in rows.first.text_content()
    alert = crossed.get(build__app__name="com.example.maps", build__platform="android")
    assert page.locator(f'[data-budget-alert="{alert.pk}"]').count() == 1
    assert page.evaluate(CONTRAST_JS) == []
    shot(page, artifacts, "team-budgets.png", full=False)
    page.goto(base + "/teams/maps/")
    assert page.locator('.budgets [data-state="near"]').count() == 6
    assert page.js_errors == []
