"""Headless Chromium (Debian's package) driven by Playwright against pytest-django's live server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip("install Debian's chromium: apt-get install chromium chromium-driver")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop; Django must still allow the ORM in this thread.
    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            yield b
            b.close()
    finally:
        if before is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    pg.js_errors = errors
    yield pg
    context.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def demo(settings, tmp_path):
    """seed_demo's data (80 builds, the demo pull requests and their checks) with a cold cache."""
    from django.core.cache import cache
    from django.core.management import call_command

    settings.VAR_DIR = tmp_path  # seed_demo writes demo-planted.json there
    cache.clear()
    with open(tmp_path / "seed.log", "w") as log:
        call_command("seed_demo", builds=80, stdout=log)
    yield
    cache.clear()
