"""End to end in headless Chromium on seed_demo data: sign in, team dashboard, alert group, triage,
series graph, keyboard focus, every other page; screenshots go to tests/artifacts/."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def sign_in(page, base):
    page.goto(base + "/")
    assert "/accounts/login/" in page.url
    page.get_by_label("Username").fill("demo")
    page.get_by_label("Password").fill("demo")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/teams/startup-perf/$"))


def test_it_signs_in_triages_an_alert_and_draws_the_graph(live_server, demo, page, artifacts):
    from alerts.models import Alert

    base = live_server.url
    sign_in(page, base)
    page.wait_for_load_state("networkidle")
    assert page.get_by_role("heading", name="Team startup-perf").is_visible()
    groups = page.locator("article.group")
    assert groups.count() >= 1, "seed_demo raised no open alert group for startup-perf"
    page.screenshot(path=str(artifacts / "team-dashboard.png"))

    # Open the newest alert group and triage its first alert with a note (fetch + CSRF header).
    groups.first.locator("h3 a").click()
    page.wait_for_url(re.compile(r".*/alerts/\d+/$"))
    group_id = int(re.search(r"/alerts/(\d+)/", page.url).group(1))
    alert = Alert.objects.filter(group_id=group_id).exclude(detection="withdrawn").order_by("pk").first()
    assert alert.status == "untriaged"
    page.select_option(f"#status-{alert.pk}", "acknowledged")
    page.fill(f"#note-{alert.pk}", "bisecting in CI")
    page.locator(f"#alert-{alert.pk} form[data-triage] button[type=submit]").click()
    page.wait_for_function("document.getElementById('triage-status').textContent.includes('marked acknowledged')")
    alert.refresh_from_db()
    assert (alert.status, alert.note) == ("acknowledged", "bisecting in CI")
    api = page.request.get(f"{base}/api/v1/alerts/{alert.pk}")
    assert api.ok and api.json()["status"] == "acknowledged"
    page.screenshot(path=str(artifacts / "alert-group.png"))

    # The series graph: uPlot drew the points, and the alert is marked.
    page.locator(f"#alert-{alert.pk} td a").first.click()
    page.wait_for_url(re.compile(r".*/series/\d+/$"))
    page.wait_for_function("document.getElementById('chart').dataset.alerts !== undefined")
    n = page.evaluate("window.perfSeriesPlot.data[0].length")
    assert n == 80
    drawn = page.evaluate("""() => {
        const c = document.querySelector('#chart canvas');
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let blue = 0;
        for (let i = 0; i < px.length; i += 4) if (px[i + 2] > 150 && px[i] < 80 && px[i + 3] > 200) blue++;
        return blue;
    }""")
    assert drawn > 200, f"the value line drew only {drawn} pixels"
    assert int(page.get_attribute("#chart", "data-alerts")) >= 1
    page.hover("#chart .u-over", position={"x": 300, "y": 150})
    assert page.text_content("#hover").startswith("Build ")
    page.screenshot(path=str(artifacts / "series.png"))
    # A click on the alert's marker opens its alert group; then back to the graph.
    series_url = page.url
    x = page.evaluate("""(build) => { const d = JSON.parse(document.getElementById('series-data').textContent);
        return window.perfSeriesPlot.valToPos(d.b.indexOf(build), 'x'); }""", alert.build.ext_id)
    page.click("#chart .u-over", position={"x": x, "y": 150})
    page.wait_for_url(re.compile(rf".*/alerts/{alert.group_id}/$"))
    page.goto(series_url)
    page.wait_for_function("document.getElementById('chart').dataset.alerts !== undefined")

    # Keyboard: the skip link comes first, focus is visible, the zoom buttons and the graph are reachable.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    seen = []
    for _ in range(20):
        page.keyboard.press("Tab")
        seen.append(page.evaluate("""() => { const e = document.activeElement;
            return [e.tagName, e.id || e.textContent.trim().slice(0, 20), getComputedStyle(e).outlineStyle]; }"""))
    assert ["BUTTON", "50 builds", "solid"] in seen
    assert any(tag == "DIV" and ident == "chart" and outline == "solid" for tag, ident, outline in seen)
    page.focus("#chart")
    page.keyboard.press("ArrowLeft")
    assert "Build " in page.text_content("#hover")
    page.get_by_role("button", name="50 builds").focus()
    page.keyboard.press("Enter")
    assert page.evaluate("Math.round(window.perfSeriesPlot.scales.x.max - window.perfSeriesPlot.scales.x.min)") == 49
    page.screenshot(path=str(artifacts / "series-keyboard.png"))

    # Every other page renders without script errors.
    page.click("text=Distribution of runs")
    page.wait_for_function("document.getElementById('heat').dataset.drawn === '80'")
    page.screenshot(path=str(artifacts / "distribution.png"))
    page.goto(base + "/overview/")
    assert page.locator("table.heat td.cell").count() == 6 * len(page.locator("table.heat thead th").all()[1:])
    page.screenshot(path=str(artifacts / "overview.png"))
    b, prev = alert.build, alert.previous_build
    page.goto(f"{base}/compare/?a={prev.ext_id}&b={b.ext_id}&app={b.app.name}&platform={b.platform}")
    total = page.locator("#compare-table tbody tr").count()
    page.check("#only-sig")
    visible = page.locator("#compare-table tbody tr:visible").count()
    assert 0 < visible < total
    page.get_by_role("button", name="Change").click()
    page.screenshot(path=str(artifacts / "compare.png"))
    page.goto(f"{base}{b.get_absolute_url()}")
    assert page.locator("table#build-table tbody tr").count() > 100
    page.screenshot(path=str(artifacts / "build.png"))
    assert page.js_errors == []
