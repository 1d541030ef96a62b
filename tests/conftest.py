"""Shared fixtures. Integration tests (marker `integration`) need DATABASE_URL and REDIS_URL."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
INTEGRATION_ENV = ("DATABASE_URL", "REDIS_URL")


def pytest_collection_modifyitems(config, items):
    missing = [name for name in INTEGRATION_ENV if not os.environ.get(name)]
    if not missing:
        return
    skip = pytest.mark.skip(
        reason=f"integration test: set {' and '.join(missing)} (PostgreSQL and Redis URLs) to run it; .ci/run does"
    )
    for item in items:
        if "integration" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _tasks_in_process(request):
    """Unit tests run Celery tasks in-process whatever REDIS_URL says; integration tests use the broker."""
    if "integration" in request.keywords:
        yield
        return
    from perfplatform.celery import app

    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = before


@pytest.fixture(autouse=True)
def _no_upload_rate_limit(settings):
    """Tests upload far faster than CI does; the limit has its own test."""
    settings.PERF_UPLOAD_RATE_PER_MINUTE = 0


@pytest.fixture
def app_token(db):
    """An app with an upload token: (App, raw token)."""
    from metrics.models import App, UploadToken

    app = App.objects.create(name="com.example.shop")
    _, raw = UploadToken.issue(app)
    return app, raw


@pytest.fixture
def upload(client, app_token):
    """POST a JSON body to the upload API with the app's token."""
    import json as _json

    _, raw = app_token

    def _post(body, *, query: str = "", token: str | None = None, content_type: str = "application/json"):
        data = body if isinstance(body, bytes | str) else _json.dumps(body)
        headers = {"HTTP_AUTHORIZATION": f"Bearer {token or raw}"}
        return client.post("/api/v1/uploads" + query, data=data, content_type=content_type, **headers)

    return _post


class HandoffRecorder:
    """The queue publisher for one test: records every hand-off (kind, pk); kinds in `held` reach no worker
    (the broker took nothing), kinds in `failing` raise as a broker outage does; the rest run as usual."""

    def __init__(self, real):
        self.real = real
        self.published: list[tuple[str, int]] = []
        self.held: set[str] = set()
        self.failing: set[str] = set()

    def __call__(self, kind: str, pk: int) -> None:
        if kind in self.failing:
            from kombu.exceptions import OperationalError

            raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        self.published.append((kind, pk))
        if kind not in self.held:
            self.real(kind, pk)

    def of(self, kind: str) -> list[int]:
        return [pk for k, pk in self.published if k == kind]


@pytest.fixture
def handoffs():
    """Swap the task publisher (alerts.handoff) for a HandoffRecorder; Celery itself is not patched."""
    from alerts import handoff, tasks

    recorder = HandoffRecorder(tasks.publish)
    with handoff.use_publisher(recorder):
        yield recorder
